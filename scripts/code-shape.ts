/**
 * The code's shape, as the house style states it: no function over 80 lines (past that it names
 * its steps; the few left over are in an allowlist with the reason) and no folder with more than 15 files side by side.
 * test/project/code-shape.test.ts holds the limits and the allowlist; run
 * `node bin/run-ts.mjs scripts/code-shape.ts [ROOT…]` to list every function and folder over them.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Longest a function may run, in lines, from its first token to its closing brace: the house
 * style's "~80, then name the steps" (it was 120 until issue 27 split what ran longer).
 */
export const MAX_FUNCTION_LINES = 80;
/** Most files a folder may hold side by side (sub-folders not counted). */
export const MAX_FOLDER_FILES = 15;

export interface LongFunction {
  /** `path:line` of the function's first line, relative to the root given. */
  at: string;
  /** Declared name, or the variable / property / call it is bound to, or `(anonymous)`. */
  name: string;
  lines: number;
}

export interface CrowdedFolder {
  folder: string;
  files: number;
}

const SKIP = new Set(['node_modules', 'build', '.git']);

async function walk(dir: string, visit: (dir: string, files: string[]) => void): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  visit(
    dir,
    entries.filter((e) => e.isFile()).map((e) => join(dir, e.name)),
  );
  for (const e of entries) if (e.isDirectory() && !SKIP.has(e.name)) await walk(join(dir, e.name), visit);
}

/** The name a function is known by: its own, else what it is assigned or passed to. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name !== undefined) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  if (ts.isCallExpression(parent)) return `(argument of ${parent.expression.getText().slice(0, 40)})`;
  if (ts.isReturnStatement(parent)) return '(returned)';
  return '(anonymous)';
}

function isMeasured(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** Every function in the .ts files under `roots` (relative to `cwd`) longer than `max` lines, longest first. */
export async function longFunctions(
  roots: string[],
  opts: { cwd?: string; max?: number } = {},
): Promise<LongFunction[]> {
  const cwd = opts.cwd ?? process.cwd();
  const max = opts.max ?? MAX_FUNCTION_LINES;
  const files: string[] = [];
  for (const root of roots)
    await walk(resolve(cwd, root), (_dir, fs) =>
      files.push(...fs.filter((f) => /\.m?ts$/.test(f) && !f.endsWith('.d.ts'))),
    );
  const out: LongFunction[] = [];
  for (const file of files.sort()) {
    const sf = ts.createSourceFile(file, await readFile(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (isMeasured(node) && node.body !== undefined) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = last - first + 1;
        if (lines > max) out.push({ at: `${relative(cwd, file)}:${first + 1}`, name: nameOf(node), lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out.sort((a, b) => b.lines - a.lines || a.at.localeCompare(b.at));
}

/** Every folder under `roots` holding more than `max` files side by side, fullest first. */
export async function crowdedFolders(
  roots: string[],
  opts: { cwd?: string; max?: number } = {},
): Promise<CrowdedFolder[]> {
  const cwd = opts.cwd ?? process.cwd();
  const max = opts.max ?? MAX_FOLDER_FILES;
  const out: CrowdedFolder[] = [];
  for (const root of roots)
    await walk(resolve(cwd, root), (dir, fs) => {
      if (fs.length > max) out.push({ folder: relative(cwd, dir) || '.', files: fs.length });
    });
  return out.sort((a, b) => b.files - a.files || a.folder.localeCompare(b.folder));
}

export const formatLongFunction = (f: LongFunction): string => `${f.at} ${f.name}: ${f.lines} lines`;
export const formatCrowdedFolder = (f: CrowdedFolder): string => `${f.folder}/: ${f.files} files`;

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  // `--max N` lists functions over N lines instead of the limit (e.g. the house style's ~80).
  const args = process.argv.slice(2);
  const at = args.indexOf('--max');
  const max = at >= 0 ? Number(args[at + 1]) : MAX_FUNCTION_LINES;
  if (!Number.isInteger(max) || max < 1)
    throw new Error(`--max takes a whole number of lines, got ${args[at + 1]}`);
  const roots = at >= 0 ? args.filter((_, i) => i !== at && i !== at + 1) : args;
  const fns = await longFunctions(roots.length > 0 ? roots : ['src', 'jobs'], { max });
  const folders = await crowdedFolders(roots.length > 0 ? roots : ['src', 'jobs', 'test', 'bench']);
  for (const f of fns) process.stdout.write(`long function ${formatLongFunction(f)}\n`);
  for (const f of folders) process.stdout.write(`crowded folder ${formatCrowdedFolder(f)}\n`);
  process.stdout.write(
    `code-shape: ${fns.length} functions over ${max} lines, ${folders.length} folders over ${MAX_FOLDER_FILES} files\n`,
  );
}
