/**
 * A private PostgreSQL on a free loopback port, for the tests and the bench: Debian's `postgresql`
 * binaries, a cluster made by `initdb` in a temp dir. PostgreSQL refuses to run as root, so as root
 * the cluster belongs to the `postgres` OS user (created by the package) and every server command
 * runs through `runuser -u postgres --`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.js';

export interface PrivatePostgres {
  /** `postgres://USER:PASSWORD@127.0.0.1:PORT/postgres` (password authentication over TCP). */
  readonly url: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** The server's binaries (psql is beside them). */
  readonly binDir: string;
  close(): Promise<void>;
}

/** Where Debian puts the server binaries (the newest version installed), or undefined. */
export function postgresBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
}

export interface StartPostgresOptions {
  /** How long to wait for the server to accept connections. @defaultValue 30000 */
  startTimeoutMs?: number;
}

/**
 * Starts a throwaway cluster (fsync off: its data is removed on close) whose superuser
 * `filings` has a random password: TCP connections must give it (scram-sha-256), so a test can
 * check what a wrong password does.
 */
export async function startPrivatePostgres(opts: StartPostgresOptions = {}): Promise<PrivatePostgres> {
  const binDir = postgresBinDir();
  if (binDir === undefined)
    throw new Error(
      'PostgreSQL is not installed (Debian: apt-get install postgresql; see scripts/ensure-postgres.mjs)',
    );
  const asRoot = process.getuid?.() === 0;
  const user = 'filings';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const { dir, pwfile } = await clusterDir(asRoot, password);
  const data = join(dir, 'data');
  // As root, every server command runs as the postgres OS user, which owns the cluster.
  const wrap = (cmd: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  initCluster(wrap(join(binDir, 'initdb'), initdbArgs(data, user, pwfile)));
  const port = await freePort();
  const [cmd, args] = wrap(join(binDir, 'postgres'), serverArgs(data, port, dir));
  const child: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await untilReady(child, opts.startTimeoutMs ?? 30_000);
  let closed = false;
  return {
    url: `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    port,
    user,
    password,
    binDir,
    async close() {
      if (closed) return;
      closed = true;
      await stopServer(child, data);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A temp dir only the cluster's owner can enter, holding the superuser's password file. */
async function clusterDir(asRoot: boolean, password: string): Promise<{ dir: string; pwfile: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'filings-export-pg-'));
  if (asRoot) {
    const { uid, gid } = postgresUser();
    await chown(dir, uid, gid);
  }
  await chmod(dir, 0o700);
  const pwfile = join(dir, 'pw');
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (asRoot) await chown(pwfile, postgresUser().uid, postgresUser().gid);
  return { dir, pwfile };
}

/** Local connections trusted, TCP ones with the password (scram-sha-256). */
function initdbArgs(data: string, user: string, pwfile: string): string[] {
  return [
    '-D',
    data,
    '-U',
    user,
    `--pwfile=${pwfile}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--no-sync',
    '-E',
    'UTF8',
    '--locale=C',
  ];
}

function initCluster([cmd, args]: [string, string[]]): void {
  const init = spawnSync(cmd, args, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
}

/** Loopback only, its socket in the cluster's dir, and no durability (the data is thrown away). */
function serverArgs(data: string, port: number, socketDir: string): string[] {
  return [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    socketDir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
  ];
}

/** Resolves when the server says it accepts connections; rejects with its output when it exits or times out. */
async function untilReady(child: ChildProcess, timeout: number): Promise<void> {
  let output = '';
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`postgres did not start within ${timeout} ms:\n${output}`)),
      timeout,
    );
    const onData = (): void => {
      if (output.includes('ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not run postgres (${err.message})`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`postgres exited with code ${String(code)} before it was ready:\n${output}`));
    });
  });
}

/** Fast shutdown, and waits for the process to exit. */
async function stopServer(child: ChildProcess, data: string): Promise<void> {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  // SIGINT = fast shutdown, sent to the postmaster itself: runuser does not pass signals on.
  const pid = Number((await readFile(join(data, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGINT');
  else child.kill('SIGINT');
  await exited;
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string): number =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isInteger(uid) || uid <= 0)
    throw new Error('the postgres OS user is missing (it comes with Debian’s postgresql package)');
  return { uid, gid: id('-g') };
}
