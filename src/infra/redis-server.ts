import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private redis-server on a free loopback port, for tests and the single-machine demo. */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** The server's process id (tests freeze and kill it). */
  readonly pid: number | undefined;
  /** The last of what the server printed (its log): a failover test shows it when none came. */
  log(): string;
  close(): Promise<void>;
}

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface StartRedisOptions {
  /** Binary to run. @defaultValue `redis-server` from PATH */
  binary?: string;
  /** How long to wait for the server to accept connections. @defaultValue 10000 */
  startTimeoutMs?: number;
  /** Settings after ours (a later one wins): a cluster node's, AOF. @defaultValue none */
  extraArgs?: string[];
  /** A config file's text, written into the data dir and read first (a Sentinel needs one). */
  configText?: string;
  /** What the server prints when it accepts connections. @defaultValue `Ready to accept connections` */
  readyText?: string;
}

/**
 * Starts redis-server with the settings BullMQ requires (noeviction) and no persistence: the
 * data dir is a temp folder removed on close(). Production deployments use docker-compose.yml.
 */
export async function startPrivateRedis(opts: StartRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'filings-export-redis-'));
  const configFile = join(dir, 'redis.conf');
  if (opts.configText !== undefined) await writeFile(configFile, opts.configText);
  const child: ChildProcess = spawn(
    opts.binary ?? 'redis-server',
    [
      ...(opts.configText !== undefined ? [configFile] : []),
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
      '--protected-mode',
      'yes',
      ...(opts.extraArgs ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  // Decoded per stream, not per chunk: a chunk may end inside a multi-byte character.
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  // The log's last 64 KB: enough to say why a failover did not come, bounded for long runs.
  const keep = (s: string): void => {
    output = (output + s).slice(-65_536);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  await readyOrExit(child, () => output, opts);

  let closed = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    log: () => output,
    async close() {
      if (closed) return;
      closed = true;
      const exited = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      // A frozen server (SIGSTOP) takes no SIGTERM until it runs again.
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the server prints its ready line; rejects when it exits first or takes too long. */
function readyOrExit(child: ChildProcess, log: () => string, opts: StartRedisOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`redis-server did not start within ${opts.startTimeoutMs ?? 10000} ms:\n${log()}`)),
      opts.startTimeoutMs ?? 10000,
    );
    const onData = (): void => {
      if (log().includes(opts.readyText ?? 'Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not run redis-server (${err.message}); install it or set REDIS_URL`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with code ${String(code)} before it was ready:\n${log()}`));
    });
  });
}
