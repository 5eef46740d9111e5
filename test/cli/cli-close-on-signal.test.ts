/**
 * Closing a long-running command on SIGINT/SIGTERM (closeOnSignal, used by `filings-export
 * emulator`): a close that fails is reported with exit code 1, never left as an unhandled rejection.
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { closeOnSignal } from '../../src/cli/command-support.js';

afterEach(() => {
  process.exitCode = undefined;
});

describe('closeOnSignal', () => {
  it('closes once on the first signal and resolves after close settled', async () => {
    const signals = new EventEmitter();
    const lines: string[] = [];
    let closes = 0;
    const done = closeOnSignal('svc', () => Promise.resolve(void closes++), {
      signals,
      report: (l) => lines.push(l),
    });
    signals.emit('SIGINT', 'SIGINT');
    signals.emit('SIGTERM', 'SIGTERM');
    await done;
    expect(closes).toBe(1);
    expect(lines).toEqual(['svc: SIGINT, closing\n']);
    expect(process.exitCode).toBeUndefined();
    expect(signals.listenerCount('SIGINT') + signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('reports a failed close and sets exit code 1 instead of rejecting unhandled', async () => {
    const signals = new EventEmitter();
    const lines: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown): void => void unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const done = closeOnSignal('svc', () => Promise.reject(new Error('port still busy')), {
        signals,
        report: (l) => lines.push(l),
      });
      signals.emit('SIGTERM', 'SIGTERM');
      await done;
      // Rejections are reported unhandled after the microtask queue drains: let it.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(lines).toEqual(['svc: SIGTERM, closing\n', 'svc: closing failed: port still busy\n']);
    expect(process.exitCode).toBe(1);
    expect(unhandled).toEqual([]);
  });
});
