import type { Clock } from '../../src/types.js';

/**
 * A clock that follows real time from a chosen start, and can jump: quota resets in seconds.
 * Frozen (freeze()), it moves only by set() and advance(), so waits and windows come out exact
 * however slowly a loaded machine runs the test.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  /** The instant a frozen clock shows; undefined while it follows real time. */
  private frozenAtMs: number | undefined;

  constructor(startAtMs?: number) {
    if (startAtMs !== undefined) this.set(startAtMs);
  }

  now(): number {
    return this.frozenAtMs ?? Date.now() + this.offsetMs;
  }

  get frozen(): boolean {
    return this.frozenAtMs !== undefined;
  }

  /** Stops the clock at its current instant; returns it for chaining. */
  freeze(): this {
    this.frozenAtMs = this.now();
    return this;
  }

  /** Makes now() return `atMs` at this instant, then keep ticking (unless frozen). */
  set(atMs: number): void {
    if (this.frozenAtMs !== undefined) this.frozenAtMs = atMs;
    else this.offsetMs = atMs - Date.now();
  }

  advance(ms: number): void {
    if (this.frozenAtMs !== undefined) this.frozenAtMs += ms;
    else this.offsetMs += ms;
  }
}
