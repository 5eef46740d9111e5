/**
 * `filings-export prune --keep N [--older-than 30d] [--dry-run]`: removes whole old snapshots
 * (data objects, manifest, marker, staging) from a local or s3:// output root, never the newest
 * published one and never one the pipeline runs or may retry (src/output/readers/retention.ts).
 */
import type { Command } from 'commander';
import type { PipelineState } from '../../output/index.js';
import type { CommonCliOptions } from '../command-support.js';
import { duration, outOption, positiveInt, configOption } from '../option-parsers.js';

export interface PruneCliOptions extends CommonCliOptions {
  out?: string;
  keep: number;
  olderThan?: number;
  abandonedAfter?: number;
  dryRun?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('prune')
    .description('Remove old snapshots and staging garbage from the output root (local or s3://)')
    .requiredOption(
      '--keep <n>',
      'published snapshots to keep, newest first (at least 1)',
      positiveInt('--keep'),
    )
    .option(
      '--older-than <age>',
      'remove only snapshots older than this (30d, 12h, 2w)',
      duration('--older-than'),
    )
    .option(
      '--abandoned-after <age>',
      'unpublished snapshots with no pipeline record count as abandoned after this long untouched (default 1d)',
      duration('--abandoned-after'),
    )
    .option('--dry-run', 'print what would be removed, remove nothing')
    .option('--json', 'print the plan as JSON');
  configOption(outOption(cmd)).action(async (o: PruneCliOptions) => run(o));
}

export async function run(o: PruneCliOptions): Promise<void> {
  const [{ openOutputRoot, outFlag }, { setup }, output, pipeline] = await Promise.all([
    import('../output-root.js'),
    import('../command-support.js'),
    import('../../output/index.js'),
    import('../../pipeline/index.js'),
  ]);
  const { config, logger } = setup(o, outFlag(o));
  const root = await openOutputRoot(o, config);
  try {
    const snapshots = await output.listForPrune(root.storage);
    const unpublished = snapshots.filter((s) => !s.published).map((s) => s.snapshotId);
    let states: Map<string, PipelineState> | null = null;
    try {
      const ctx = await pipeline.openPipeline(root.config, logger);
      try {
        states = await pipeline.pipelineStates(ctx.store, unpublished);
      } finally {
        await ctx.close();
      }
    } catch (err: unknown) {
      // Published snapshots can still be pruned; unpublished ones stay when nobody can say they are dead.
      process.stderr.write(
        `prune: the pipeline's Redis could not be asked (${(err as Error).message}); unpublished snapshots are kept\n`,
      );
    }
    const plan = output.planPrune(snapshots, {
      keep: o.keep,
      ...(o.olderThan !== undefined ? { olderThanMs: o.olderThan } : {}),
      ...(o.abandonedAfter !== undefined ? { abandonedAfterMs: o.abandonedAfter } : {}),
      now: Date.now(),
      pipelineState: states,
    });
    const expired = o.dryRun === true ? [] : await output.applyPrune(root.storage, plan);
    if (o.json === true) {
      const brief = {
        root: root.storage.root,
        dry_run: o.dryRun === true,
        removed: plan.remove.map((a) => ({
          snapshot_id: a.snapshotId,
          what: a.what,
          objects: a.objects.length,
          bytes: a.bytes,
          reason: a.reason,
        })),
        kept: plan.kept.map((k) => ({ snapshot_id: k.snapshotId, published: k.published, reason: k.reason })),
        iceberg_expired: expired.map((e) => ({
          table: e.dataset,
          snapshot_ids: e.expired,
          version: e.version,
        })),
      };
      process.stdout.write(`${JSON.stringify(brief)}\n`);
    } else
      process.stdout.write(
        `${output.formatPrunePlan(plan, root.storage.root, o.dryRun === true, expired)}\n`,
      );
  } finally {
    await root.close();
  }
}
