/** What the emulator needs from its host process: a clock, a way to wait, and a logger (pino's, injected). */
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';

export type { Logger };

/** Time source, injected so that rate windows and quota resets are testable in seconds. */
export interface EmulatorClock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: EmulatorClock = { now: () => Date.now() };

/**
 * Waits `ms` (latency, pauses of a slow body), rejecting when `signal` aborts. Injected so that
 * tests check the waits asked for instead of timing them.
 */
export type Delay = (ms: number, signal: AbortSignal) => Promise<void>;

export const timerDelay: Delay = (ms, signal) => sleep(ms, undefined, { signal });

/** A logger that drops everything: the default when the host passes none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
