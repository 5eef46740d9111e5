import type { TestProject } from 'vitest/node';
import { startPrivatePostgres, type PrivatePostgres } from '../../src/infra/postgres-server.js';

// Tests that load into PostgreSQL run against a real server: one private cluster on a free
// loopback port for the whole run (Debian's postgresql, initdb in a temp dir as the postgres OS
// user when run as root; scripts/ensure-postgres.mjs installs it). Each test file uses its own
// database, created from the URL given here.
let pg: PrivatePostgres | undefined;

export async function setup(project: TestProject): Promise<void> {
  pg = await startPrivatePostgres();
  project.provide('postgres', { url: pg.url, password: pg.password, binDir: pg.binDir });
}

export async function teardown(): Promise<void> {
  await pg?.close();
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: { url: string; password: string; binDir: string };
  }
}
