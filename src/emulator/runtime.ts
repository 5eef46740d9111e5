/** What the emulator needs from its host process: a clock and a logger (pino's, injected). */
import { pino, type Logger } from 'pino';

export type { Logger };

/** Time source, injected so that rate windows and quota resets are testable in seconds. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A logger that drops everything: the default when the host passes none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
