import type { ChildProcess } from 'node:child_process';

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
