/**
 * The data directory layout (same as the SEC sample in data/sec): companyfacts/CIK##########.json,
 * submissions/CIK##########.json (+ overflow pages CIK##########-submissions-NNN.json),
 * filings/<TICKER>/** and reference/company_tickers.json. Any file may carry a `.gz` suffix.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { packagePath } from '../../../package-root.js';
import { EmulatorDataError } from '../../errors.js';

const gunzipAsync = promisify(gunzip);

/** One file of the data dir. `rel` is relative to the data dir, with `/` and without `.gz`. */
export interface DataFile {
  rel: string;
  abs: string;
  gz: boolean;
  bytes: number;
}

export interface DataLayout {
  dataDir: string;
  tickersFile: DataFile | undefined;
  /** CIK (10 digits) → companyfacts file. */
  companyfacts: Map<string, DataFile>;
  /** CIK → submissions files, main file first, then overflow pages in name order. */
  submissions: Map<string, DataFile[]>;
  /** Ticker folder name (as on disk) → files under it, sorted by path. */
  filings: Map<string, DataFile[]>;
  /** Optional README/SOURCE.md describing the files (used as a catalog of accession numbers). */
  readme: DataFile | undefined;
}

/** The bundled data/sec, resolved from the package's root (not the cwd). */
export function defaultDataDir(): string {
  return packagePath('data', 'sec');
}

export async function readDataFile(file: DataFile): Promise<Buffer> {
  let raw: Buffer;
  try {
    raw = await readFile(file.abs);
  } catch (err) {
    throw new EmulatorDataError(`data file ${file.abs} cannot be read: ${(err as Error).message}`, {
      code: 'DATA_INVALID',
      cause: err,
    });
  }
  if (!file.gz) return raw;
  try {
    return await gunzipAsync(raw);
  } catch (err) {
    throw new EmulatorDataError(`data file ${file.abs} is not valid gzip: ${(err as Error).message}`, {
      code: 'DATA_INVALID',
      cause: err,
    });
  }
}

function toDataFile(dataDir: string, abs: string, bytes: number): DataFile {
  const gz = abs.endsWith('.gz');
  const rel = relative(dataDir, gz ? abs.slice(0, -3) : abs).split(sep).join('/');
  return { rel, abs, gz, bytes };
}

async function listFiles(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listFiles(p)));
    else if (e.isFile()) out.push(p);
  }
  return out.sort();
}

async function filesIn(dataDir: string, sub: string): Promise<DataFile[]> {
  const paths = await listFiles(join(dataDir, sub));
  return Promise.all(paths.map(async (p) => toDataFile(dataDir, p, (await stat(p)).size)));
}

const COMPANYFACTS_RE = /^companyfacts\/CIK(\d{10})\.json$/;
const SUBMISSIONS_RE = /^submissions\/CIK(\d{10})(-submissions-\d+)?\.json$/;

/** Indexes which company has which files. Reads no file contents. */
export async function scanDataDir(dataDirInput: string): Promise<DataLayout> {
  const dataDir = resolve(dataDirInput);
  let st;
  try {
    st = await stat(dataDir);
  } catch {
    throw new EmulatorDataError(`data dir ${dataDir} does not exist`, { code: 'DATA_INVALID' });
  }
  if (!st.isDirectory()) throw new EmulatorDataError(`data dir ${dataDir} is not a directory`, { code: 'DATA_INVALID' });

  const layout: DataLayout = {
    dataDir,
    tickersFile: undefined,
    companyfacts: new Map(),
    submissions: new Map(),
    filings: new Map(),
    readme: undefined,
  };
  for (const f of await filesIn(dataDir, 'companyfacts')) {
    const m = COMPANYFACTS_RE.exec(f.rel);
    if (m?.[1]) layout.companyfacts.set(m[1], f);
  }
  for (const f of await filesIn(dataDir, 'submissions')) {
    const m = SUBMISSIONS_RE.exec(f.rel);
    if (!m?.[1]) continue;
    const list = layout.submissions.get(m[1]) ?? [];
    if (m[2] === undefined) list.unshift(f);
    else list.push(f);
    layout.submissions.set(m[1], list);
  }
  for (const f of await filesIn(dataDir, 'filings')) {
    const ticker = f.rel.split('/')[1];
    if (ticker === undefined || f.rel.split('/').length < 3) continue;
    const list = layout.filings.get(ticker) ?? [];
    list.push(f);
    layout.filings.set(ticker, list);
  }
  for (const f of await filesIn(dataDir, 'reference')) {
    if (f.rel === 'reference/company_tickers.json') layout.tickersFile = f;
  }
  for (const name of ['README.md', 'SOURCE.md']) {
    for (const cand of [name, `${name}.gz`]) {
      const abs = join(dataDir, cand);
      try {
        const s = await stat(abs);
        if (s.isFile() && layout.readme === undefined) layout.readme = toDataFile(dataDir, abs, s.size);
      } catch {
        // absent: fine
      }
    }
  }
  return layout;
}
