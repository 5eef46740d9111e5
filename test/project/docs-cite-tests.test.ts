/**
 * The docs point readers at the tests and benches that prove what they claim
 * (docs/budget.md's "Tests", the recipes' checks, the decisions' figures). A cited file that was
 * renamed or deleted leaves a claim nobody checks any more: every `test/…` and `bench/…` path
 * cited in README.md, CONTRIBUTING.md and docs/**.md must name a file that exists (a `*` pattern
 * at least one). Comments are held to the same: a file a comment of src/ or jobs/ names must exist,
 * or the reader who follows it finds nothing (issue 37 found three such, left by moves). And a
 * section a doc or a comment sends the reader to (`docs/output.md, "Loading"`) must still be a
 * heading or a bold lead-in of that doc, so splitting or renaming a section shows who cited it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);

/** The Markdown files of `dir` and its sub-folders, as paths from the root. */
async function markdownUnder(dir: string): Promise<string[]> {
  const entries = await readdir(new URL(`${dir}/`, root), { withFileTypes: true });
  const nested = await Promise.all(
    entries.filter((e) => e.isDirectory()).map((e) => markdownUnder(`${dir}/${e.name}`)),
  );
  const here = entries.filter((e) => e.isFile() && e.name.endsWith('.md')).map((e) => `${dir}/${e.name}`);
  return [...here, ...nested.flat()];
}

/** The Markdown files users and contributors read: README.md, CONTRIBUTING.md and docs/**.md. */
async function docFiles(): Promise<string[]> {
  return ['README.md', 'CONTRIBUTING.md', ...(await markdownUnder('docs'))];
}

/** `test/…` and `bench/…` paths of a .ts file cited in `text`, `*` patterns included. */
function citedPaths(text: string): string[] {
  const found = text.match(/(?<![\w/.-])(?:test|bench)\/[\w./*-]*\.ts\b/g) ?? [];
  return [...new Set(found)];
}

/** Files of the repository matching `cited` (a path, or a pattern with `*` in its last part). */
async function matches(cited: string): Promise<string[]> {
  const slash = cited.lastIndexOf('/');
  const dir = cited.slice(0, slash);
  const name = cited.slice(slash + 1);
  const pattern = new RegExp(`^${name.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
  const entries = await readdir(new URL(`${dir}/`, root)).catch(() => [] as string[]);
  return entries.filter((e) => pattern.test(e));
}

/** Every .ts file under `dir` (a path from the root), as paths from the root. */
async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(new URL(`${dir}/`, root), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name).slice(new URL(root).pathname.length));
}

/** The text of every comment in a TypeScript source, each once (the parser tells comments from strings). */
function commentsOf(path: string, source: string): string[] {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const seen = new Map<number, string>();
  const keep = (ranges: ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) seen.set(r.pos, source.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node): void => {
    keep(ts.getLeadingCommentRanges(source, node.getFullStart()));
    keep(ts.getTrailingCommentRanges(source, node.end));
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...seen.values()];
}

/**
 * File names a comment gives: paths with a folder (`src/pipeline/record/outage.ts`,
 * `catalog/publish-order.ts`) and bare names (`outage.ts`). A URL's segments are not taken.
 */
function namedFiles(comment: string): { paths: string[]; bare: string[] } {
  const found = comment.match(/(?<![\w/.@:-])[\w-]+(?:[./][\w-]+)*\.ts\b/g) ?? [];
  const unique = [...new Set(found)];
  return { paths: unique.filter((f) => f.includes('/')), bare: unique.filter((f) => !f.includes('/')) };
}

/**
 * Where a path named in a comment of `from` may point: the comment's folder and each folder above
 * it to the root (`catalog/paths.ts` in src/output/readers/ is src/output/catalog/paths.ts), or src/
 * (`pipeline/queue/flow.ts` from jobs/).
 */
function candidates(from: string, named: string): string[] {
  const folders: string[] = [];
  for (let dir = dirname(from); dir !== '.'; dir = dirname(dir)) folders.push(dir);
  return [...folders.map((dir) => join(dir, named)), named, join('src', named)];
}

describe('docs cite only tests and benches that exist', () => {
  it('finds the citations it checks, patterns too', () => {
    expect(
      citedPaths('see `test/budget/budget-gate.test.ts` and test/contract*.test.ts, bench/budget.bench.ts.'),
    ).toEqual(['test/budget/budget-gate.test.ts', 'test/contract*.test.ts', 'bench/budget.bench.ts']);
    expect(citedPaths('src/test/x.ts and latest/x.ts are not citations of test/')).toEqual([]);
  });

  it('every cited test/ and bench/ file exists', async () => {
    const missing: string[] = [];
    let cited = 0;
    for (const doc of await docFiles()) {
      const text = await readFile(new URL(doc, root), 'utf8');
      for (const path of citedPaths(text)) {
        cited++;
        if ((await matches(path)).length === 0) missing.push(`${doc}: ${path}`);
      }
    }
    expect(cited).toBeGreaterThan(20); // the docs do cite their tests: a scan that finds none is broken
    expect(missing).toEqual([]);
  });
});

describe('comments of src/ and jobs/ name only files that exist', () => {
  it('finds paths and bare names in comments, not in strings or URLs', () => {
    const source = [
      '// see src/pipeline/record/outage.ts and catalog/paths.ts (outage.ts)',
      "const url = 'http://x/src/gone.ts'; /* https://github.com/o/r/blob/main/lib/x.ts */",
      '/** Like `jobs/export-part.ts`. */',
    ].join('\n');
    const named = commentsOf('x.ts', source).map(namedFiles);
    expect(named).toEqual([
      { paths: ['src/pipeline/record/outage.ts', 'catalog/paths.ts'], bare: ['outage.ts'] },
      { paths: [], bare: [] },
      { paths: ['jobs/export-part.ts'], bare: [] },
    ]);
  });

  it('every path a comment names resolves from its folder or one above, and every bare name is a file of src/ or jobs/', async () => {
    const sources = [...(await sourcesUnder('src')), ...(await sourcesUnder('jobs'))];
    const all = new Set(sources);
    const names = new Set(sources.map((s) => s.slice(s.lastIndexOf('/') + 1)));
    const exists = async (path: string): Promise<boolean> =>
      all.has(path) ||
      (await readFile(new URL(path, root)).then(
        () => true,
        () => false,
      ));
    const stale: string[] = [];
    let named = 0;
    for (const from of sources) {
      for (const comment of commentsOf(from, await readFile(new URL(from, root), 'utf8'))) {
        const { paths, bare } = namedFiles(comment);
        named += paths.length + bare.length;
        for (const path of paths) {
          const found = await Promise.all(candidates(from, path).map(exists));
          if (!found.includes(true)) stale.push(`${from}: ${path}`);
        }
        for (const name of bare) if (!names.has(name)) stale.push(`${from}: ${name}`);
      }
    }
    expect(named).toBeGreaterThan(50); // comments do name files: a scan that finds none is broken
    expect(stale).toEqual([]);
  });
});

/** Every Markdown file a citation may name: README.md, CONTRIBUTING.md and docs/**.md. */
async function docTargets(): Promise<Map<string, string[]>> {
  const targets = new Map<string, string[]>();
  for (const doc of await docFiles()) {
    const text = await readFile(new URL(doc, root), 'utf8');
    const headings = [...text.matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1]!);
    const leadIns = [...text.matchAll(/\*\*([^*\n]+)\*\*/g)].map((m) => m[1]!);
    targets.set(doc, [...headings, ...leadIns].map(plain));
  }
  return targets;
}

/** A title as compared: no heading marks or backticks, no trailing dot, lower case, spaces collapsed. */
function plain(title: string): string {
  return title
    .replace(/^#+\s*/, '')
    .replaceAll('`', '')
    .replace(/\.$/, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * Sections cited in `text` (comment markers and line breaks already collapsed): a Markdown file
 * followed by a quoted title, as in `docs/output.md, "Loading"` or `decisions.md ("Budget")`.
 */
function citedSections(text: string): { doc: string; title: string }[] {
  const found = text.matchAll(/([\w./-]*\w\.md)(?:'s)?[,:]?\s+\(?"([^"]{3,120})"/g);
  return [...found].map((m) => ({ doc: m[1]!, title: m[2]! }));
}

/** The doc a citation in `from` names, or undefined when it is no doc of ours. */
function citedDoc(from: string, doc: string, docs: ReadonlyMap<string, unknown>): string | undefined {
  const candidates = [doc, join(dirname(from), doc), join('docs', doc)];
  return candidates.find((c) => docs.has(c));
}

/** Whether `title` (`…` standing for any text) is part of one of the doc's titles. */
function titleFound(title: string, titles: readonly string[]): boolean {
  const pieces = plain(title)
    .split('…')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return titles.some((t) => pieces.every((p) => t.includes(p)));
}

describe('docs and comments cite sections that exist', () => {
  it('finds cited sections, with the doc as written', () => {
    expect(citedSections('see docs/output.md, "Loading" and decisions.md ("`auto` on a key")')).toEqual([
      { doc: 'docs/output.md', title: 'Loading' },
      { doc: 'decisions.md', title: '`auto` on a key' },
    ]);
    expect(
      titleFound('what the staged gzip … cost', [
        plain('One process: what the staged gzip and the start-up cost'),
      ]),
    ).toBe(true);
    expect(titleFound('What latest means', [plain('What the date and `latest` mean')])).toBe(false);
  });

  it('every cited section is a heading or a bold lead-in of its doc', async () => {
    const targets = await docTargets();
    const sources = [...(await sourcesUnder('src')), ...(await sourcesUnder('jobs'))];
    const texts: [string, string][] = [];
    for (const doc of targets.keys()) texts.push([doc, await readFile(new URL(doc, root), 'utf8')]);
    for (const from of sources)
      for (const comment of commentsOf(from, await readFile(new URL(from, root), 'utf8')))
        texts.push([from, comment.replace(/\n\s*(?:\*(?!\/)|\/\/)?/g, ' ')]);
    const stale: string[] = [];
    let cited = 0;
    for (const [from, text] of texts) {
      for (const { doc, title } of citedSections(text.replace(/\n\s*/g, ' '))) {
        const target = citedDoc(from, doc, targets);
        if (target === undefined) continue;
        cited++;
        if (!titleFound(title, targets.get(target)!)) stale.push(`${from}: ${target} "${title}"`);
      }
    }
    expect(cited).toBeGreaterThan(20); // docs and comments do cite sections: a scan that finds none is broken
    expect(stale).toEqual([]);
  });
});
