import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { join } from 'node:path';

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

/** The CLI as users run it (build/ when fresh; the global setup rebuilds a stale one). */
export const CLI_BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `filings-export ARGS` to its end with `env`, collecting stdout and stderr. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
