/**
 * The module table of docs/architecture.md, between its markers, generated from the tree:
 * `npm run docs:modules`. One row per folder of bin/, jobs/ and src/ holding files, naming every
 * file in it; the role is the first paragraph of the folder's index.ts comment, or, for a folder
 * without an index, the role already written in the table (kept). A test fails when table and tree differ.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODULES_DOC = 'docs/architecture.md';
export const START = '<!-- modules:start (generated: npm run docs:modules) -->';
export const END = '<!-- modules:end -->';
/** The trees the table covers. */
export const MODULE_ROOTS = ['bin', 'jobs', 'src'];
const HEADER = '| module | role | files |\n|---|---|---|';

export interface ModuleRow {
  /** Folder with a trailing slash, relative to the repository: `src/output/staged-part/`. */
  module: string;
  role: string;
  files: string[];
}

/** The first paragraph of a file's leading JSDoc comment, on one line; undefined without one. */
export function leadingComment(text: string): string | undefined {
  const m = /^\s*\/\*\*([\s\S]*?)\*\//.exec(text);
  if (m === null) return undefined;
  const lines = (m[1] as string).split('\n').map((l) => l.replace(/^\s*\*? ?/, '').trimEnd());
  const paragraph: string[] = [];
  for (const line of lines) {
    if (line.trim() === '') {
      if (paragraph.length > 0) break;
      continue;
    }
    paragraph.push(line.trim());
  }
  return paragraph.length > 0 ? paragraph.join(' ') : undefined;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|');
const uncell = (s: string): string => s.replace(/\\\|/g, '|').trim();

/** Folders with files under the roots, each with its files and its index.ts comment (if any). */
export async function moduleTree(
  cwd: string,
): Promise<{ module: string; files: string[]; indexRole?: string }[]> {
  const out: { module: string; files: string[]; indexRole?: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(join(cwd, dir), { withFileTypes: true });
    const files = entries
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();
    if (files.length > 0) {
      const indexRole = files.includes('index.ts')
        ? leadingComment(await readFile(join(cwd, dir, 'index.ts'), 'utf8'))
        : undefined;
      out.push({ module: `${dir}/`, files, ...(indexRole !== undefined ? { indexRole } : {}) });
    }
    for (const e of entries.filter((x) => x.isDirectory()).sort((a, b) => a.name.localeCompare(b.name)))
      await walk(`${dir}/${e.name}`);
  };
  for (const root of MODULE_ROOTS) await walk(root);
  return out;
}

/** The rows of the table between the markers of `doc`. */
export function parseModuleTable(doc: string): ModuleRow[] {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${MODULES_DOC} has no ${START} … ${END} block`);
  const rows: ModuleRow[] = [];
  for (const line of doc.slice(a + START.length, b).split('\n')) {
    const cells = line.split(/(?<!\\)\|/).slice(1, -1);
    if (cells.length !== 3 || !/^\s*`/.test(cells[0] as string)) continue;
    rows.push({
      module: uncell(cells[0] as string).replace(/`/g, ''),
      role: uncell(cells[1] as string),
      files: [...(cells[2] as string).matchAll(/`([^`]+)`/g)].map((m) => m[1] as string),
    });
  }
  return rows;
}

/** The table as the tree says it should be; roles of folders without an index come from `doc`'s table. */
export async function expectedModuleTable(cwd: string, doc: string): Promise<ModuleRow[]> {
  const written = new Map(parseModuleTable(doc).map((r) => [r.module, r.role]));
  return (await moduleTree(cwd)).map((m) => ({
    module: m.module,
    role: m.indexRole ?? written.get(m.module) ?? '',
    files: m.files,
  }));
}

export function renderModuleTable(rows: ModuleRow[]): string {
  const line = (r: ModuleRow): string =>
    `| \`${r.module}\` | ${cell(r.role)} | ${r.files.map((f) => `\`${f}\``).join(' ')} |`;
  return [HEADER, ...rows.map(line)].join('\n');
}

/** The document with the block between the markers replaced by `rows`. */
export function withModuleTable(doc: string, rows: ModuleRow[]): string {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${MODULES_DOC} has no ${START} … ${END} block`);
  return `${doc.slice(0, a + START.length)}\n${renderModuleTable(rows)}\n${doc.slice(b)}`;
}

/** Every way the table in `doc` differs from the tree under `cwd`, one line each; [] when true. */
export async function moduleTableProblems(cwd: string, doc: string): Promise<string[]> {
  const table = new Map(parseModuleTable(doc).map((r) => [r.module, r]));
  const expected = await expectedModuleTable(cwd, doc);
  const problems: string[] = [];
  for (const e of expected) {
    const row = table.get(e.module);
    if (row === undefined) {
      problems.push(`${e.module}: folder missing from the table`);
      continue;
    }
    for (const f of e.files) if (!row.files.includes(f)) problems.push(`${e.module}: file missing: ${f}`);
    for (const f of row.files) if (!e.files.includes(f)) problems.push(`${e.module}: stale name: ${f}`);
    if (e.role === '')
      problems.push(`${e.module}: no role (give it an index.ts comment or write one in the table)`);
    else if (row.role !== e.role) problems.push(`${e.module}: role is not its index.ts comment`);
  }
  for (const m of table.keys())
    if (!expected.some((e) => e.module === m)) problems.push(`${m}: stale name: no such folder with files`);
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const cwd = process.cwd();
  const path = join(cwd, MODULES_DOC);
  const doc = await readFile(path, 'utf8');
  const rows = await expectedModuleTable(cwd, doc);
  await writeFile(path, withModuleTable(doc, rows));
  const roleless = rows.filter((r) => r.role === '').map((r) => r.module);
  process.stdout.write(`${MODULES_DOC}: module table written (${rows.length} folders)\n`);
  if (roleless.length > 0) {
    process.stderr.write(
      `without a role (write one in the table or an index.ts comment): ${roleless.join(', ')}\n`,
    );
    process.exitCode = 1;
  }
}
