import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** Sends SIGTERM to every child process and resolves with their exit codes, in order. */
export async function terminateAll(children: readonly ChildProcess[]): Promise<(number | null)[]> {
  const exits = children.map(
    (c) =>
      new Promise<number | null>((resolve) =>
        c.exitCode !== null ? resolve(c.exitCode) : c.once('exit', resolve),
      ),
  );
  for (const c of children) c.kill('SIGTERM');
  return Promise.all(exits);
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
    child.stderr?.on('data', (b: Buffer) => {
      log += b.toString();
      if (log.includes('worker ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${log}`)));
  });
  return { child, log: () => log, ready };
}
