/**
 * Which published files of the source snapshot an incremental snapshot reuses, per dataset. The
 * unit of reuse is a file: one all of whose companies are reused now (and whose columns are this
 * snapshot's) is reused whole, byte for byte, unless it is small: small whole files are packed
 * together (packSmall); the reused companies of any other file keep their rows' place in it, and
 * are rebuilt from its Parquet (reused-files.ts), never from NDJSON.
 */
import { OutputError } from '../../errors.js';
import type { DatasetName, OutputFormat, PartPointer } from '../../types.js';
import type { FileCompany, Manifest, ManifestFile } from '../catalog/index.js';
import { hashFile } from '../storage/index.js';

/** Where a publisher finds the source snapshot's files. */
export interface ReuseSource {
  manifest: Manifest;
  /**
   * Puts a source file whole at `dst` (in the build folder) and returns true, or returns false when
   * the upload copies it server-side instead. Rejects REUSE_SOURCE_CHANGED when it is missing or
   * not its manifest's size.
   */
  placeWhole(file: ManifestFile, dst: string): Promise<boolean>;
  /**
   * A local path holding the source file, checked against its manifest's size only: its sha256 is
   * checked by the caller beside the work that reads it (checkedSources), never skipped.
   */
  readable(file: ManifestFile): Promise<string>;
}

export function sourceChanged(snapshotId: string, path: string, what: string): OutputError {
  return new OutputError(
    'REUSE_SOURCE_CHANGED',
    `${path} of ${snapshotId}, reused by this snapshot, ${what}; nothing was published: retry the snapshot (run --retry), and the parts it held are decided again and fetched`,
  );
}

/** A part whose rows are in the source snapshot's files, not staged. */
export function reusedFromFiles(p: PartPointer): boolean {
  return p.status === 'done' && p.rows > 0 && p.reusedFrom !== undefined && p.file === undefined;
}

/**
 * The source files one new file reads, each hashed against its manifest while the rest of the work
 * goes on (the hash and DuckDB's re-encoding or the byte copy then share the two cores), and every
 * hash awaited before the new file is handed on: a file changed behind the exporter's back still
 * fails the publish (REUSE_SOURCE_CHANGED), and is never published short or wrong.
 */
export function checkedSources(source: ReuseSource): {
  /** The local path of a source file (fetched and sized once); its hash starts in the background. */
  path(f: ManifestFile): Promise<string>;
  /** Runs `work`, then awaits every hash; a failed hash is thrown before any error of `work`. */
  run<T>(work: () => Promise<T>): Promise<T>;
} {
  const paths = new Map<string, Promise<string>>();
  const hashes: Promise<void>[] = [];
  const settle = async (): Promise<void> => {
    await Promise.allSettled([...paths.values()]);
    // A source that fails its hash is the cause of whatever else went wrong reading it.
    for (const r of await Promise.allSettled(hashes)) if (r.status === 'rejected') throw r.reason;
  };
  return {
    path(f) {
      const known = paths.get(f.path);
      if (known !== undefined) return known;
      const local = source.readable(f);
      paths.set(f.path, local);
      const hashed = local.then((at) => checkSha(source.manifest.snapshot_id, f, at));
      hashed.catch(() => undefined); // awaited by run(); never an unhandled rejection meanwhile
      hashes.push(hashed);
      return local;
    },
    async run<T>(work: () => Promise<T>): Promise<T> {
      let out: T;
      try {
        out = await work();
      } catch (err: unknown) {
        await settle();
        throw err;
      }
      await settle();
      return out;
    },
  };
}

/** Rejects REUSE_SOURCE_CHANGED when a local copy of a source file is not its manifest's bytes. */
export async function checkSha(snapshotId: string, f: ManifestFile, path: string): Promise<void> {
  const got = await hashFile(path);
  if (got.sha256 !== f.sha256 || got.bytes !== f.bytes)
    throw sourceChanged(snapshotId, f.path, `fails its checksum (sha256 ${got.sha256.slice(0, 12)}…)`);
}

/** A source file reused whole, with its companion in every other format of this snapshot. */
export interface WholeFile {
  /** The source's files of the same rows, one per format of this snapshot. */
  files: ManifestFile[];
  companies: FileCompany[];
}

/** Rows [first_row, first_row + rows) of a source Parquet file that are rebuilt into a new file. */
export interface KeptRange {
  file: ManifestFile;
  first_row: number;
  rows: number;
  companies: FileCompany[];
}

export interface ReusePlan {
  whole: WholeFile[];
  /** Runs of small whole files (two or more each) to pack into one new file each (packSmall). */
  packed: WholeFile[][];
  kept: KeptRange[];
}

/** A file reused whole under this share of the target file size is small, so it may be packed. */
export const SMALL_FILE_SHARE = 0.5;
/**
 * Packing copies bytes: per dataset and night it copies at most this share of the bytes the
 * dataset reuses whole (all formats). Half of the issue's 10 % for bytes a night writes anew; the
 * other half is left to the fetched companies' files, the catalog and `changes`.
 */
export const PACK_BUDGET_SHARE = 0.05;

/**
 * Plans one dataset. `reused` maps each company reused from the source's files to its rows.
 * `sameColumns`: the dataset's columns are the source's (else nothing is reused whole).
 */
export function planReuse(
  source: Manifest,
  dataset: DatasetName,
  reused: ReadonlyMap<string, number>,
  o: {
    formats: readonly OutputFormat[];
    sameColumns: boolean;
    /** Packs small whole files into files of about this size (packSmall). @defaultValue no packing */
    targetBytes?: number;
  },
): ReusePlan {
  const files = source.files.filter((f) => f.dataset === dataset);
  const parquet = files.filter((f) => f.format === 'parquet');
  const whole: WholeFile[] = [];
  const kept: KeptRange[] = [];
  const found = new Map<string, number>();
  for (const f of parquet) {
    const companies = (f.companies ?? []).filter((c) => reused.has(c.ticker));
    if (companies.length === 0) continue;
    for (const c of companies) found.set(c.ticker, (found.get(c.ticker) ?? 0) + c.rows);
    const companions = o.formats.map((fmt) =>
      fmt === 'parquet' ? f : files.find((g) => g.format === fmt && sameRows(g, f)),
    );
    if (
      o.sameColumns &&
      companies.length === (f.companies ?? []).length &&
      companions.every((g) => g !== undefined)
    ) {
      whole.push({ files: companions as ManifestFile[], companies });
      continue;
    }
    kept.push(...contiguous(f, companies));
  }
  for (const [ticker, rows] of reused) {
    if ((found.get(ticker) ?? 0) !== rows)
      throw new OutputError(
        'OUTPUT_FAILED',
        `${dataset}/${ticker}: ${source.snapshot_id}'s files hold ${found.get(ticker) ?? 0} of its ${rows} rows, so it cannot be reused from them`,
      );
  }
  if (o.targetBytes === undefined) return { whole, packed: [], kept };
  return { ...packSmall(whole, o.targetBytes), kept };
}

/**
 * Packs the small whole files, taken in the source's file order (row order: a stable order), into
 * groups of about `targetBytes`, each group's cost (its bytes in every format) within what is left
 * of the night's budget. Files between them that are not small, or that the budget cannot take,
 * are reused whole; a group of one file stays whole (packing it alone would only copy it). A group
 * closed because the next file would pass the target holds over half the target, so it is not
 * small the next night: small files are copied about once, not every night.
 */
export function packSmall(
  files: readonly WholeFile[],
  targetBytes: number,
): { whole: WholeFile[]; packed: WholeFile[][] } {
  const whole: WholeFile[] = [];
  const packed: WholeFile[][] = [];
  const cost = (w: WholeFile): number => w.files.reduce((s, f) => s + f.bytes, 0);
  const size = (w: WholeFile): number => (w.files.find((f) => f.format === 'parquet') ?? w.files[0]!).bytes;
  let budget = PACK_BUDGET_SHARE * files.reduce((s, w) => s + cost(w), 0);
  let group: WholeFile[] = [];
  let groupSize = 0;
  let groupCost = 0;
  const close = (): void => {
    if (group.length > 1) {
      packed.push(group);
      budget -= groupCost;
    } else whole.push(...group);
    group = [];
    groupSize = 0;
    groupCost = 0;
  };
  for (const w of files) {
    if (size(w) >= SMALL_FILE_SHARE * targetBytes || cost(w) > budget - groupCost) {
      whole.push(w);
      continue;
    }
    if (groupSize + size(w) > targetBytes) close();
    group.push(w);
    groupSize += size(w);
    groupCost += cost(w);
  }
  close();
  return { whole, packed };
}

/** The NDJSON file of the same rows as a Parquet file: same index, same companies. */
function sameRows(g: ManifestFile, f: ManifestFile): boolean {
  const stem = (p: string): string => p.replace(/\.(parquet|ndjson\.gz)$/, '');
  return stem(g.path) === stem(f.path) && g.rows === f.rows;
}

/** Neighbouring companies of a file merged into one range each (fewer, larger reads). */
function contiguous(file: ManifestFile, companies: readonly FileCompany[]): KeptRange[] {
  const out: KeptRange[] = [];
  for (const c of companies) {
    const last = out[out.length - 1];
    if (last !== undefined && last.first_row + last.rows === c.first_row) {
      last.rows += c.rows;
      last.companies.push(c);
    } else out.push({ file, first_row: c.first_row, rows: c.rows, companies: [c] });
  }
  return out;
}

/** Groups kept ranges, in order, into output files of about `targetBytes` (pro rata of source bytes). */
export function packKept(kept: readonly KeptRange[], targetBytes: number): KeptRange[][] {
  const groups: KeptRange[][] = [];
  let bytes = Infinity;
  for (const k of kept) {
    const size = k.file.rows === 0 ? 0 : (k.file.bytes * k.rows) / k.file.rows;
    if (bytes + size > targetBytes && bytes > 0) {
      groups.push([]);
      bytes = 0;
    }
    groups[groups.length - 1]!.push(k);
    bytes += size;
  }
  return groups;
}
