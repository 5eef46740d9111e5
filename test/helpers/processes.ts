import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** How a child process ended: its exit code, or the signal that ended it. */
export type Ending = number | NodeJS.Signals;

/**
 * Resolves when the child has ended, at once if it already has. A child ended by a signal has a
 * null exitCode (its signalCode is set): its `exit` event is gone, so both must be checked.
 */
export function ended(c: ChildProcess): Promise<Ending> {
  const now = c.exitCode ?? c.signalCode;
  if (now !== null) return Promise.resolve(now);
  return new Promise((resolve) => c.once('exit', (code, signal) => resolve(code ?? signal ?? 'SIGKILL')));
}

/** Sends SIGTERM to every child process still running and resolves with how each ended, in order. */
export async function terminateAll(children: readonly ChildProcess[]): Promise<Ending[]> {
  const endings = children.map(ended);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  return Promise.all(endings);
}

export interface SpawnedWorker {
  child: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  log(): string;
  /** Resolves once it logs `worker ready`; rejects if it exits first. */
  ready: Promise<void>;
}

/** Starts `node BIN ARGS` (a `filings-export worker`), collecting its stderr. */
export function spawnWorker(bin: string, args: string[], opts: SpawnOptions): SpawnedWorker {
  const child = spawn(process.execPath, [bin, ...args], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const ready = new Promise<void>((resolve, reject) => {
    // Decoded per stream: a chunk may end inside a multi-byte character.
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      log += s;
      if (log.includes('worker ready')) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(`worker exited (${code ?? signal}): ${log}`)));
  });
  return { child, log: () => log, ready };
}

/** The program entry users run (build/ while it is current, which the test setup makes it). */
export const CLI_BIN = fileURLToPath(new URL('../../bin/filings-export.mjs', import.meta.url));

export interface CliResult {
  /** Exit code; a process ended by a signal (or the timeout) reports the signal. */
  code: Ending;
  stdout: string;
  stderr: string;
}

/**
 * Runs `filings-export ARGS` to its end with `env` over the test's environment (LOG_LEVEL warn
 * unless given) less the `unset` variables, and resolves with its exit and output; never rejects on a non-zero exit.
 */
export function runCli(
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; unset?: readonly string[]; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...opts.env };
  for (const name of opts.unset ?? []) delete env[name];
  return runToExit(CLI_BIN, args, env, opts);
}

/** Runs `node BIN ARGS` with exactly `env` to its end, collecting its output; never rejects on a non-zero exit. */
export function runToExit(
  bin: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  opts: { cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      {
        env,
        ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
        timeout: opts.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: number | string; signal?: NodeJS.Signals | null }) | null;
        const code: Ending = e === null ? 0 : typeof e.code === 'number' ? e.code : (e.signal ?? 'SIGKILL');
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A CLI process whose output the test reads as it comes. */
interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr contains `text`; rejects if the process ends first. */
  saysOnStderr(text: string): Promise<void>;
}

/** Starts `node BIN ARGS` (any command), collecting its output as it comes. */
export function startCli(bin: string, args: string[], env: NodeJS.ProcessEnv): RunningCli {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (s: string) => (out += s));
  child.stderr?.on('data', (s: string) => {
    err += s;
    for (const w of waiters.filter((x) => err.includes(x.text))) w.resolve();
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    saysOnStderr: (text) =>
      err.includes(text)
        ? Promise.resolve()
        : new Promise((resolve, reject) => {
            waiters.push({ text, resolve });
            child.once('exit', (code) =>
              err.includes(text) ? resolve() : reject(new Error(`exited ${code} without "${text}": ${err}`)),
            );
          }),
  };
}
