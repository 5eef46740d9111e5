/**
 * Debian's Prometheus for tests (scripts/ensure-prometheus.mjs installs it as `npm test` starts):
 * promtool for the alert rules, and a throwaway server on a free loopback port with its config
 * and data in a temp dir, removed on close().
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../../src/infra/redis-server.js';

const BIN_DIR = process.env.PROMETHEUS_BIN_DIR ?? '/usr/bin';
export const PROMTOOL = join(BIN_DIR, 'promtool');
const PROMETHEUS = join(BIN_DIR, 'prometheus');
export const DEPLOY_DIR = fileURLToPath(new URL('../../deploy/', import.meta.url));
export const ALERTS_FILE = join(DEPLOY_DIR, 'prometheus', 'alerts.yml');
/** The rules' promtool unit tests: minutes apart (evaluated each minute), and days apart (each 15 minutes). */
export const ALERTS_TEST_FILES = ['alerts.test.yml', 'alerts-days.test.yml'].map((f) =>
  join(DEPLOY_DIR, 'prometheus', f),
);
export const GRAFANA_FILE = join(DEPLOY_DIR, 'grafana', 'filings-export.json');

/** What a test reads when a binary is missing, instead of an assertion on its empty output. */
export function notInstalled(path: string): Error {
  return new Error(
    `${basename(path)} not installed: ${path} does not exist; install Debian's prometheus ` +
      '(apt-get install prometheus; npm test does it as root) or set PROMETHEUS_BIN_DIR to the folder holding it',
  );
}

/**
 * Runs promtool; resolves with its exit code and output (it never rejects on a non-zero exit), and
 * rejects when promtool is not installed.
 */
export async function promtool(args: string[], binary = PROMTOOL): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(binary, args, { maxBuffer: 16 << 20 });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') throw notInstalled(binary);
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

export interface RunningPrometheus {
  url: string;
  /** GET /api/v1/<path> and its `data`; throws on an error answer. */
  api<T>(path: string): Promise<T>;
  close(): Promise<void>;
}

/** Starts `prometheus` scraping `target` (host:port) as job `filings-export` every second. */
export async function startPrometheus(target: string, ruleFiles: string[]): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'fx-prometheus-'));
  const port = await freePort();
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    `rule_files: [${ruleFiles.map((f) => JSON.stringify(f)).join(', ')}]`,
    'scrape_configs:',
    '  - job_name: filings-export',
    `    static_configs: [{ targets: [${JSON.stringify(target)}] }]`,
    '',
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config);
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  let spawnError: Error | undefined;
  child.stderr?.on('data', (b: Buffer) => void (log += b.toString()));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (err: NodeJS.ErrnoException) => {
      spawnError = err.code === 'ENOENT' ? notInstalled(PROMETHEUS) : err;
      resolve();
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const close = async (): Promise<void> => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  // Ready when /-/ready answers 200; a process that exits first fails with its log.
  for (let i = 0; ; i++) {
    if (spawnError !== undefined) {
      await rm(dir, { recursive: true, force: true });
      throw spawnError;
    }
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${log}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 300) {
      await close();
      throw new Error(`prometheus did not get ready:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async api<T>(path: string): Promise<T> {
      const res = await fetch(`${url}/api/v1/${path}`);
      const body = (await res.json()) as { status: string; data: T; error?: string };
      if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
      return body.data;
    },
    close,
  };
}
