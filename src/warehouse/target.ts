/**
 * The `--into` target: `duckdb:PATH` (a DuckDB database file) or `postgres://…` /
 * `postgresql://…` (a libpq-style URL; what it leaves out comes from the `PG*` variables and
 * `.pgpass`). The printable form never holds the password.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';

export type LoadTarget = { engine: 'duckdb'; path: string } | { engine: 'postgres'; url: string };

/**
 * The forms `parseTarget` takes, for the CLI's help and its errors. `output.load_into`'s pattern in
 * src/config/schema.ts repeats them (config sits below warehouse): test/project/recipes.test.ts ties the two.
 */
export const TARGET_SYNTAX = 'duckdb:PATH or postgres://user@host:port/db';

export function parseTarget(into: string, cwd = process.cwd()): LoadTarget {
  if (into.startsWith('duckdb:')) {
    const path = into.slice('duckdb:'.length);
    if (path === '' || path === ':memory:')
      throw new ConfigError(`--into ${into}: name a database file (duckdb:out/warehouse.duckdb)`);
    return { engine: 'duckdb', path: resolve(cwd, path) };
  }
  if (/^postgres(ql)?:\/\//.test(into)) {
    try {
      new URL(into);
    } catch {
      throw new ConfigError(`--into ${redactTarget(into)}: not a valid URL`);
    }
    return { engine: 'postgres', url: into };
  }
  throw new ConfigError(`--into ${JSON.stringify(redactTarget(into))}: expected ${TARGET_SYNTAX}`);
}

/** The target with any password replaced by `***`. */
export function redactTarget(into: string): string {
  return into.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

export function targetName(t: LoadTarget): string {
  return t.engine === 'postgres' ? redactTarget(t.url) : `${t.engine}:${t.path}`;
}
