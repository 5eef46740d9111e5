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

/**
 * What a trial started, each with how to stop it, stopped in reverse order by `closeAll` whatever
 * happened: a trial that failed, or a setup cut short half way, leaves no process or temp dir.
 */
export class Held {
  private readonly items: { what: string; close: () => Promise<void> | void }[] = [];

  private closing: Promise<void> | undefined;

  add(what: string, close: () => Promise<void> | void): void {
    this.items.push({ what, close });
  }

  /**
   * Stops everything once (a signal and the trial's own end may both ask); a close that fails is
   * named on stderr and the others still run.
   */
  closeAll(): Promise<void> {
    this.closing ??= this.closeEach();
    return this.closing;
  }

  private async closeEach(): Promise<void> {
    for (let item = this.items.pop(); item !== undefined; item = this.items.pop()) {
      try {
        await item.close();
      } catch (err: unknown) {
        process.stderr.write(`soak: could not stop ${item.what}: ${String(err)}\n`);
      }
    }
  }
}
