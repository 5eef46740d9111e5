/**
 * The child-process helpers of the tests (test/helpers/processes.ts) wait correctly whether a
 * child is running, has exited, or was already ended by a signal (exitCode null, no `exit` to come).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { ended, terminateAll } from '../helpers/processes.js';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** A node child that runs until a signal ends it. */
function idleChild(code = 'setInterval(() => {}, 1000)'): ChildProcess {
  const c = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  children.push(c);
  return c;
}

/** What the promise settled with once pending I/O callbacks ran, or 'pending': no timer involved. */
async function settledBy<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);
}

describe('test process helpers', () => {
  it('report a child a signal already ended, at once', async () => {
    const c = idleChild();
    c.kill('SIGKILL');
    await once(c, 'exit');
    expect(c.exitCode).toBeNull();
    expect(await settledBy(ended(c))).toBe('SIGKILL');
    expect(await settledBy(terminateAll([c]))).toEqual(['SIGKILL']);
  });

  it('report a child that already exited with its code', async () => {
    const c = idleChild('process.exit(3)');
    await once(c, 'exit');
    expect(await settledBy(terminateAll([c]))).toEqual([3]);
  });

  it('terminate running children and report how each ended, in order', async () => {
    const plain = idleChild();
    // Exits 0 on SIGTERM; says so on stdout once the handler is installed.
    const graceful = spawn(
      process.execPath,
      [
        '-e',
        "process.on('SIGTERM', () => process.exit(0)); console.log('ready'); setInterval(() => {}, 1000)",
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    children.push(graceful);
    await Promise.all([once(plain, 'spawn'), once(graceful.stdout, 'data')]);
    expect(await terminateAll([plain, graceful])).toEqual(['SIGTERM', 0]);
  });
});
