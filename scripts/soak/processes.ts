/**
 * Real processes for the soak suite: a redis-server with AOF that can be stopped and started again
 * on the same port and data dir, the emulator and the workers as `filings-export` child processes,
 * each with its output in a log file. Faults are real: signals, killed listeners, restarts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');

export interface Proc {
  readonly name: string;
  readonly pid: number | undefined;
  /** Starts it (again): same command, same environment. */
  start(): Promise<void>;
  /** Sends a signal and waits for the exit (SIGKILL after `graceMs`). */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function managed(
  name: string,
  cmd: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; cwd: string; logDir: string; ready?: () => Promise<boolean> },
): Proc {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const log = createWriteStream(join(opts.logDir, `${name}.log`), { flags: 'a' });
  return {
    name,
    get pid() {
      return child?.pid;
    },
    async start() {
      log.write(`--- start ${new Date().toISOString()}\n`);
      const c = spawn(cmd, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      c.stdout?.pipe(log, { end: false });
      c.stderr?.pipe(log, { end: false });
      exited = new Promise((resolve) => c.once('exit', () => resolve()));
      if (opts.ready) await waitFor(`${name} to be ready`, opts.ready);
    },
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      c.kill(signal);
      const timer = setTimeout(() => c.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      log.write(`--- stopped by ${signal} ${new Date().toISOString()}\n`);
    },
  };
}

export { waitFor };
