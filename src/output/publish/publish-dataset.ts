/**
 * Publishes one dataset of a snapshot into its Hive partition: the staged parts (fetched tonight)
 * are converted as sized files (src/output/staged-part, convertStagedParts), the companies reused from the source
 * snapshot's files come from those files (reuse-plan.ts, reused-files.ts), and every file gets its
 * name in row order (by company). The partition folder appears whole, by one rename.
 */
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import pLimit from 'p-limit';
import { dirname, join } from 'node:path';
import { OutputError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { DatasetName, OutputFormat, PartPointer } from '../../types.js';
import type { DatasetSchema } from '../../datasets/index.js';
import { buildDir, dataFileName, partitionRelDir, toPosix, type ManifestFile } from '../catalog/index.js';
import {
  resolveSchema,
  type BuiltFile,
  type DuckSession,
  type ParquetCompression,
} from '../convert/index.js';
import { checkStagedPart, kindsToNames, mergeFieldKinds, type CheckedPart } from '../staged-part/index.js';
import { convertStagedParts } from '../staged-part/parquet/index.js';
import { fsyncDir } from '../storage/index.js';
import { packKept, planReuse, reusedFromFiles, type ReuseSource } from './reuse-plan.js';
import { packedUnits, rebuiltUnit, wholeUnit, type Unit } from './reused-files.js';
import { counted } from '../../counted.js';

export interface DatasetPublishContext {
  root: string;
  snapshotId: string;
  snapshotDate: string;
  formats: OutputFormat[];
  staging: string;
  targetFileBytes: number;
  rowGroupRows: number;
  compression: ParquetCompression;
  verifyStagedHashes: boolean | undefined;
  duck: DuckSession;
  rangeDucks: DuckSession[];
  now: Date;
  log: Logger;
  /** The source snapshot of the parts reused from its files. @defaultValue none */
  reuse?: ReuseSource | undefined;
}

export interface DatasetPublished {
  schema: DatasetSchema;
  rel: string;
  rows: number;
  files: ManifestFile[];
  extraFields: ReadonlyMap<string, number>;
  warnings: string[];
  added: string[];
}

/** Staged parts checked at once. */
const PART_READS = 16;

const byTicker = (a: PartPointer, b: PartPointer): number =>
  a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0;

export async function publishDataset(
  c: DatasetPublishContext,
  dataset: DatasetName,
  parts: readonly PartPointer[],
): Promise<DatasetPublished> {
  const withRows = parts.filter((p) => p.status === 'done' && p.rows > 0).sort(byTicker);
  const staged = withRows.filter((p) => !reusedFromFiles(p));
  const fromFiles = withRows.filter(reusedFromFiles);
  // Many small parts (10,000 companies' catalogs) are checked a few at a time: one after another,
  // each stat, hash and field-list read waits its own turn on the threadpool.
  const limit = pLimit(PART_READS);
  const checked: CheckedPart[] = await Promise.all(
    staged.map((p) =>
      limit(() => checkStagedPart(c.root, p, { verifyHashes: c.verifyStagedHashes, hashLater: true })),
    ),
  );
  const observed = mergeFieldKinds(checked.map((x) => x.fields));
  const resolved = await resolveSchema(c.root, dataset, observed, c.snapshotId, c.now);
  const warnings = resolved.typeConflicts.map(
    (t) =>
      `${dataset}.${t.field}: seen as ${kindsToNames(t.kinds).join('/')}, column type is ${t.type}; values that do not fit are kept in _extra`,
  );
  const rel = partitionRelDir(dataset, c.snapshotDate, c.snapshotId);
  const dir = buildDir(c.root, c.snapshotId, dataset);
  const started = Date.now();
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const units: Unit[] = [];
  if (checked.length > 0) {
    const fetched = await afterHashes(
      checked,
      convertStaged(c, dataset, resolved, checked, observed, join(dir, '_fetched')),
    );
    warnings.push(...fetched.warnings);
    units.push(...fetched.units);
  }
  if (fromFiles.length > 0) units.push(...(await reusedUnits(c, dataset, resolved.schema, fromFiles, dir)));
  const named = await nameInRowOrder(units, dir, rel, dataset);
  const rows = named.filter((f) => f.format === c.formats[0]).reduce((s, f) => s + f.rows, 0);
  const expected = withRows.reduce((s, p) => s + p.rows, 0);
  if (rows !== expected)
    throw new OutputError('OUTPUT_FAILED', `${dataset}: wrote ${rows} rows, the parts hold ${expected}`);
  if (named.length > 0) {
    const final = join(c.root, rel);
    await rm(final, { recursive: true, force: true });
    await mkdir(dirname(final), { recursive: true });
    await rename(dir, final);
    await fsyncDir(dirname(final));
  } else await rm(dir, { recursive: true, force: true });
  c.log.info(
    {
      dataset,
      rows,
      files: named.length,
      reusedWhole: named.filter((f) => f.reused_from).length,
      ms: Date.now() - started,
    },
    'dataset files written',
  );
  return {
    schema: resolved.schema,
    rel,
    rows,
    files: named,
    extraFields: resolved.extraFields,
    warnings,
    added: resolved.added,
  };
}

/**
 * `work`'s result once every staged file's hash is checked too. A file that fails its hash explains
 * whatever reading it did to the work, so that failure is thrown first.
 */
async function afterHashes<T>(checked: readonly CheckedPart[], work: Promise<T>): Promise<T> {
  const [done, ...hashes] = await Promise.allSettled([work, ...checked.map((x) => x.hashed)]);
  const bad = hashes.find((h) => h.status === 'rejected');
  if (bad !== undefined) throw bad.reason;
  if (done!.status === 'rejected') throw done!.reason;
  return done!.value;
}

/** Tonight's staged parts as output files, each output file one unit (with its formats). */
async function convertStaged(
  c: DatasetPublishContext,
  dataset: DatasetName,
  resolved: Awaited<ReturnType<typeof resolveSchema>>,
  checked: readonly CheckedPart[],
  observed: ReadonlyMap<string, number>,
  dir: string,
): Promise<{ units: Unit[]; warnings: string[] }> {
  const built = await convertStagedParts({
    dataset,
    snapshotId: c.snapshotId,
    schema: resolved.schema,
    kinds: observed,
    extraFields: [...resolved.extraFields.keys()],
    parts: checked,
    formats: c.formats,
    dir,
    scratchDir: join(c.staging, '_scratch', dataset),
    targetFileBytes: c.targetFileBytes,
    rowGroupRows: c.rowGroupRows,
    compression: c.compression,
    duck: c.duck,
    rangeDucks: c.rangeDucks,
    log: c.log,
  });
  const byStem = new Map<string, BuiltFile[]>();
  for (const f of built.files) {
    const stem = f.name.replace(/\.(parquet|ndjson\.gz)$/, '');
    byStem.set(stem, [...(byStem.get(stem) ?? []), { ...f, name: join('_fetched', f.name) }]);
  }
  const units = [...byStem.values()].map((files) => {
    const first = files[0]!.companies?.[0];
    return { order: { ticker: first?.ticker ?? '', row: 0 }, files };
  });
  return {
    units,
    warnings: built.tolerantFiles.map(
      (t) => `${dataset}/${t.file}: a value did not fit its column type and is kept in _extra (${t.reason})`,
    ),
  };
}

/** The reused companies' files: whole source files, then the rebuilt rest, as units. */
async function reusedUnits(
  c: DatasetPublishContext,
  dataset: DatasetName,
  schema: DatasetSchema,
  parts: readonly PartPointer[],
  dir: string,
): Promise<Unit[]> {
  const source = c.reuse;
  if (source === undefined)
    throw new OutputError(
      'OUTPUT_FAILED',
      `${dataset}: ${counted(parts.length, 'part')} reused from ${parts[0]!.reusedFrom}'s files, but the publisher was given no source snapshot`,
    );
  const before = source.manifest.datasets[dataset]?.columns ?? [];
  const sameColumns =
    before.length === schema.columns.length &&
    before.every((col, i) => col.name === schema.columns[i]!.name && col.type === schema.columns[i]!.type);
  const plan = planReuse(source.manifest, dataset, new Map(parts.map((p) => [p.ticker, p.rows])), {
    formats: c.formats,
    sameColumns,
    targetBytes: c.targetFileBytes,
  });
  const units: Unit[] = [];
  for (const [i, w] of plan.whole.entries())
    units.push(await wholeUnit(source, w.files, w.companies, dir, i));
  units.push(...(await packedUnits(source, plan, c.formats, dir)));
  const options = {
    schema,
    sourceColumns: before.map((col) => col.name),
    formats: c.formats,
    compression: c.compression,
    rowGroupRows: c.rowGroupRows,
    duck: c.duck,
    sameColumns,
  };
  for (const [i, group] of packKept(plan.kept, c.targetFileBytes).entries())
    units.push(await rebuiltUnit(source, group, options, dir, i));
  return units;
}

/**
 * Names every unit's files `part-<NNNNN>` in row order (by first company) inside the build folder,
 * and returns their manifest entries. A file whose upload is a server-side copy is not in the folder.
 */
async function nameInRowOrder(
  units: Unit[],
  dir: string,
  rel: string,
  dataset: DatasetName,
): Promise<ManifestFile[]> {
  units.sort((a, b) =>
    a.order.ticker === b.order.ticker ? a.order.row - b.order.row : a.order.ticker < b.order.ticker ? -1 : 1,
  );
  const present = new Set(await listDeep(dir));
  const out: ManifestFile[] = [];
  for (const [i, u] of units.entries())
    for (const f of u.files) {
      const name = dataFileName(i, f.format);
      if (present.has(f.name)) await rename(join(dir, f.name), join(dir, name));
      const { name: _n, ...rest } = f;
      out.push({ path: toPosix(join(rel, name)), dataset, ...rest });
    }
  await rm(join(dir, '_fetched'), { recursive: true, force: true });
  return out;
}

async function listDeep(dir: string): Promise<string[]> {
  const top = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of top) {
    if (e.isDirectory())
      out.push(...(await readdir(join(dir, e.name)).catch(() => [])).map((n) => join(e.name, n)));
    else out.push(e.name);
  }
  return out;
}
