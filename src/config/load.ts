/**
 * Loads the configuration in layers, validated once:
 *   config/defaults.yaml < config file (--config or FILINGS_EXPORT_CONFIG) < environment < flags.
 * The default `datasets` come from the dataset registry (its `byDefault` entries), below them all.
 * The API key comes only from FILINGS_API_KEY or a secret file (FILINGS_API_KEY_FILE or
 * api.key_file), never from a config file, and is held as a Secret.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError, coerceError } from '../errors.js';
import { packagePath } from '../package-root.js';
import { configSchema, type FileConfig, LOG_LEVEL } from './schema.js';
import {
  flattenObject,
  formatPath,
  isPlainObject,
  mergeSettings,
  sourceOf,
  valueAt,
  type Setting,
} from './layers.js';
import { parseRedisUrl, prefixFor, type RedisTarget } from './redis-url.js';
import { Secret } from './secret.js';
import { DEFAULT_DATASETS } from '../types.js';

/** The bundled defaults: every field has a value there but `datasets` (the registry's default set). */
export const DEFAULTS_FILE = packagePath('config', 'defaults.yaml');

/** Environment variables read by the exporter and the config path each sets. */
export const ENV_SETTINGS: ReadonlyArray<{ name: string; path: string; kind: 'string' | 'int' | 'bool' }> = [
  { name: 'FILINGS_API_URL', path: 'api.url', kind: 'string' },
  { name: 'REDIS_URL', path: 'redis.url', kind: 'string' },
  { name: 'FILINGS_EXPORT_PREFIX', path: 'redis.prefix', kind: 'string' },
  { name: 'FILINGS_EXPORT_QUEUE', path: 'queue.name', kind: 'string' },
  { name: 'FILINGS_EXPORT_OUT', path: 'output.dir', kind: 'string' },
  { name: 'FILINGS_EXPORT_S3_ENDPOINT', path: 'output.s3.endpoint', kind: 'string' },
  { name: 'FILINGS_EXPORT_S3_REGION', path: 'output.s3.region', kind: 'string' },
  { name: 'FILINGS_EXPORT_S3_FORCE_PATH_STYLE', path: 'output.s3.force_path_style', kind: 'bool' },
  { name: 'FILINGS_EXPORT_S3_CHECKSUMS', path: 'output.s3.checksums', kind: 'string' },
  { name: 'FILINGS_EXPORT_CONCURRENCY', path: 'worker.concurrency', kind: 'int' },
  { name: 'FILINGS_EXPORT_METRICS_PORT', path: 'worker.metrics_port', kind: 'int' },
  { name: 'FILINGS_EXPORT_METRICS_HOST', path: 'worker.metrics_host', kind: 'string' },
  { name: 'FILINGS_EXPORT_TMP_DIR', path: 'worker.tmp_dir', kind: 'string' },
  { name: 'FILINGS_EXPORT_PUBLISH_CONVERSIONS', path: 'output.publish_conversions', kind: 'int' },
  { name: 'FILINGS_EXPORT_CONVERT_WHILE_STAGING', path: 'output.convert_while_staging', kind: 'bool' },
  { name: 'FILINGS_EXPORT_LOAD_INTO', path: 'output.load_into', kind: 'string' },
  { name: 'FILINGS_EXPORT_ICEBERG', path: 'output.iceberg', kind: 'bool' },
  { name: 'LOG_LEVEL', path: 'log.level', kind: 'string' },
];

/**
 * Every environment variable the config reads: the settings above and the ones read on their own.
 * An empty one is refused (checkEnvironment): `FILINGS_API_URL=` is a mistake, never the default.
 */
export const CONFIG_ENV_NAMES: readonly string[] = [
  ...ENV_SETTINGS.map((e) => e.name),
  'FILINGS_EXPORT_CONFIG',
  'FILINGS_API_KEY',
  'FILINGS_API_KEY_FILE',
  'FILINGS_EXPORT_DASHBOARD_TOKEN',
];

/** Refuses a config variable that is set but empty (or blank), naming each such variable. */
export function checkEnvironment(env: NodeJS.ProcessEnv, names: readonly string[] = CONFIG_ENV_NAMES): void {
  const empty = names.filter((name) => env[name] !== undefined && env[name].trim() === '');
  if (empty.length === 0) return;
  const one = empty.length === 1;
  const which = one ? `${empty[0]} is` : `${empty.join(', ')} are`;
  throw new ConfigError(
    `environment ${which} set but empty (an empty variable is not the default): give ${one ? 'it a value' : 'each a value'} or unset ${one ? 'it' : 'them'} (unset ${empty.join(' ')})`,
  );
}

/** Fields holding file paths: relative values in a config file are relative to that file. */
const PATH_FIELDS = ['output.dir', 'universe.file', 'api.key_file', 'worker.tmp_dir'];

/** A path field holding a local path (an `s3://` output root is a URL and stays as given). */
function isLocalPath(path: string, value: string): boolean {
  return PATH_FIELDS.includes(path) && !/^[a-z][a-z0-9+.-]+:\/\//i.test(value);
}

/** A flag given on the command line, as a config override. */
export interface FlagOverride {
  /** Dotted config path, e.g. `output.dir`. */
  path: string;
  value: unknown;
  /** The flag as typed, e.g. `--out`. */
  flag: string;
}

export interface LoadConfigOptions {
  /** Config file from `--config`; takes precedence over FILINGS_EXPORT_CONFIG. */
  configPath?: string;
  /** @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
  flags?: readonly FlagOverride[];
  /** Base of relative paths from the environment and flags. @defaultValue process.cwd() */
  cwd?: string;
  /** @defaultValue the bundled config/defaults.yaml */
  defaultsFile?: string;
}

export type Config = FileConfig & {
  api: FileConfig['api'] & {
    /** The API key, redacted whenever printed; null when none was given. */
    key: Secret | null;
  };
  dashboard: FileConfig['dashboard'] & {
    /** FILINGS_EXPORT_DASHBOARD_TOKEN: needed off loopback and for actions; never from a file. */
    token: Secret | null;
  };
  redis: FileConfig['redis'] & {
    /** `redis.url` parsed: one server, a cluster's seed nodes or a Sentinel group. */
    target: RedisTarget;
    /** Why `prefix` differs from the one given (a cluster's hash tag), for a log line; else null. */
    prefixNote: string | null;
  };
  /** The config file that was read, if any. */
  configFile: string | null;
};

export function loadConfig(opts: LoadConfigOptions = {}): Config {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const defaultsFile = opts.defaultsFile ?? DEFAULTS_FILE;
  checkEnvironment(env);

  // The registry states the default set once; defaults.yaml points at it rather than repeating it.
  const settings: Setting[] = [
    { path: ['datasets'], value: [...DEFAULT_DATASETS], source: 'dataset registry (byDefault)' },
  ];
  settings.push(...fileSettings(defaultsFile, 'bundled defaults', cwd));

  const configFile = opts.configPath ?? env.FILINGS_EXPORT_CONFIG;
  const configFrom = opts.configPath !== undefined ? '--config' : 'FILINGS_EXPORT_CONFIG';
  const configAbs = configFile === undefined ? null : resolve(cwd, configFile);
  if (configAbs !== null) settings.push(...fileSettings(configAbs, configFrom));

  for (const e of ENV_SETTINGS) {
    const raw = env[e.name];
    if (raw === undefined) continue;
    let value: unknown = raw;
    if (e.kind === 'int' && /^-?\d+$/.test(raw.trim())) value = Number(raw.trim());
    if (e.kind === 'bool' && /^(true|false)$/i.test(raw.trim())) value = raw.trim().toLowerCase() === 'true';
    if (isLocalPath(e.path, raw)) value = resolve(cwd, raw);
    settings.push({ path: e.path.split('.'), value, source: `environment ${e.name}` });
  }

  for (const f of opts.flags ?? []) {
    if (f.value === undefined) continue;
    const value =
      typeof f.value === 'string' && isLocalPath(f.path, f.value) ? resolve(cwd, f.value) : f.value;
    settings.push({ path: f.path.split('.'), value, source: `flag ${f.flag}` });
  }

  const merged = mergeSettings(settings);
  // Parsed once per process: zod's compiled fast path costs more to build than it saves here.
  const parsed = configSchema.safeParse(merged, { jitless: true });
  if (!parsed.success) throw new ConfigError(formatIssues(parsed.error.issues, settings, merged));

  const key = resolveApiKey(env, parsed.data.api.key_file, cwd);
  const token = env.FILINGS_EXPORT_DASHBOARD_TOKEN?.trim();
  return {
    ...parsed.data,
    redis: redisSettings(parsed.data.redis, sourceOf(settings, ['redis', 'prefix']), defaultsFile),
    api: { ...parsed.data.api, key },
    dashboard: { ...parsed.data.dashboard, token: token ? new Secret(token) : null },
    configFile: configAbs,
  };
}

/** The parsed target and the prefix the topology needs (a cluster's hash tag), or one ConfigError line. */
function redisSettings(
  redis: FileConfig['redis'],
  prefixSource: string | undefined,
  defaultsFile: string,
): Config['redis'] {
  const target = parseRedisUrl(redis.url);
  // The schema checked the URL already; this keeps TypeScript and the message in one rule.
  if (typeof target === 'string') throw new ConfigError(`config.redis.url: ${target}`);
  const given = prefixSource !== undefined && prefixSource !== defaultsFile;
  const p = prefixFor(target.kind, redis.prefix, given);
  if (typeof p === 'string')
    throw new ConfigError(`config.redis.prefix: ${p}${given ? ` in ${prefixSource}` : ''}`);
  return { ...redis, prefix: p.prefix, target, prefixNote: p.note };
}

/**
 * LOG_LEVEL for a command that loads no config (the emulator), checked by the same rule as
 * log.level; `fallback` when unset.
 */
export function envLogLevel(env: NodeJS.ProcessEnv = process.env, fallback = 'warn'): string {
  checkEnvironment(env, ['LOG_LEVEL']);
  const raw = env.LOG_LEVEL;
  if (raw === undefined) return fallback;
  const r = LOG_LEVEL.safeParse(raw.trim());
  if (!r.success)
    throw new ConfigError(`environment LOG_LEVEL: ${r.error.issues[0]?.message ?? 'invalid'} (got "${raw}")`);
  return r.data;
}

/** The API key, or a ConfigError saying how to give one. */
export function requireApiKey(config: Config): Secret {
  if (config.api.key) return config.api.key;
  throw new ConfigError(
    'no API key: set FILINGS_API_KEY, or FILINGS_API_KEY_FILE (or api.key_file in the config) to a file holding it',
  );
}

function resolveApiKey(env: NodeJS.ProcessEnv, keyFileFromConfig: string | null, cwd: string): Secret | null {
  const direct = env.FILINGS_API_KEY;
  if (direct !== undefined) return new Secret(checkKey(direct.trim(), 'environment FILINGS_API_KEY'));
  const fromEnv = env.FILINGS_API_KEY_FILE;
  const file =
    fromEnv !== undefined
      ? { path: resolve(cwd, fromEnv), source: 'FILINGS_API_KEY_FILE' }
      : keyFileFromConfig !== null
        ? { path: keyFileFromConfig, source: 'config.api.key_file' }
        : null;
  if (file === null) return null;
  let text: string;
  try {
    text = readFileSync(file.path, 'utf8');
  } catch (err: unknown) {
    throw new ConfigError(
      `${file.source}: cannot read the API key file ${file.path}: ${coerceError(err).message}`,
    );
  }
  return new Secret(checkKey(text.trim(), `${file.source} (${file.path})`));
}

function checkKey(key: string, where: string): string {
  if (key === '') throw new ConfigError(`${where}: the API key is empty`);
  if (/\s/.test(key)) throw new ConfigError(`${where}: the API key contains whitespace; expected one token`);
  return key;
}

function fileSettings(path: string, via: string, pathBase?: string): Setting[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err: unknown) {
    const e = coerceError(err) as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'file not found' : e.message;
    throw new ConfigError(`config file ${path} (from ${via}): ${why}`);
  }
  let doc: unknown;
  try {
    doc = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err: unknown) {
    throw new ConfigError(
      `config file ${path}: not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${coerceError(err).message}`,
    );
  }
  if (doc === null || doc === undefined) return [];
  if (!isPlainObject(doc))
    throw new ConfigError(`config file ${path}: must hold a mapping of settings, not ${describe(doc)}`);
  rejectKeysInFile(doc, path);
  const base = pathBase ?? dirname(path);
  return flattenObject(doc, path).map((s) => {
    const dotted = s.path.join('.');
    if (typeof s.value === 'string' && isLocalPath(dotted, s.value) && !isAbsolute(s.value))
      return { ...s, value: resolve(base, s.value) };
    return s;
  });
}

/** An API key written into a config file would end up in version control and backups: refuse it. */
function rejectKeysInFile(doc: Record<string, unknown>, path: string): void {
  const advice = 'set FILINGS_API_KEY or FILINGS_API_KEY_FILE (a secret file) instead';
  const api = doc.api;
  const keyFields = ['key', 'api_key', 'apiKey', 'api-key'];
  for (const k of keyFields) {
    if (k in doc)
      throw new ConfigError(
        `config.${k}: an API key may not be written in a config file (${path}); ${advice}`,
      );
    if (isPlainObject(api) && k in api)
      throw new ConfigError(
        `config.api.${k}: an API key may not be written in a config file (${path}); ${advice}`,
      );
  }
  const found = findKeyLike(doc, []);
  if (found)
    throw new ConfigError(
      `${formatPath(found)}: looks like an API key; keys may not be written in a config file (${path}); ${advice}`,
    );
}

function findKeyLike(node: unknown, path: PropertyKey[]): PropertyKey[] | undefined {
  if (typeof node === 'string') return /^ffx_[a-z]+_b2b_/.test(node) ? path : undefined;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const hit = findKeyLike(node[i], [...path, i]);
      if (hit) return hit;
    }
  } else if (isPlainObject(node)) {
    for (const [k, v] of Object.entries(node)) {
      const hit = findKeyLike(v, [...path, k]);
      if (hit) return hit;
    }
  }
  return undefined;
}

function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  settings: readonly Setting[],
  merged: unknown,
): string {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = Object.keys(objectShapeAt(issue.path));
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        const src = sourceOf(settings, path);
        lines.push(
          `${formatPath(path)}: unknown setting${known.length ? ` (known here: ${known.join(', ')})` : ''}${src ? ` in ${src}` : ''}`,
        );
      }
      continue;
    }
    const value = valueAt(merged, issue.path);
    const src = sourceOf(settings, issue.path);
    let message = issue.message;
    if (issue.code === 'invalid_type') {
      message = value === undefined ? 'must be set' : `must be ${article(issue.expected)}`;
    }
    const got = value === undefined ? '' : ` (got ${describe(value)})`;
    lines.push(`${formatPath(issue.path)}: ${message}${got}${src ? ` in ${src}` : ''}`);
  }
  return lines.join('\n');
}

function objectShapeAt(path: readonly PropertyKey[]): Record<string, unknown> {
  let schema: unknown = configSchema;
  for (const key of path) {
    const shape = (schema as { shape?: Record<string, unknown> }).shape;
    schema = shape?.[String(key)];
  }
  return (schema as { shape?: Record<string, unknown> } | undefined)?.shape ?? {};
}

function article(expected: string): string {
  switch (expected) {
    case 'array':
      return 'a list';
    case 'object':
      return 'a mapping of settings';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'string':
      return 'a string';
    default:
      return expected;
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}
