import type { Clock } from '../../src/types.js';

/** A clock that follows real time from a chosen start, and can jump: quota resets in seconds. */
export class TestClock implements Clock {
  private offsetMs = 0;

  constructor(startAtMs?: number) {
    if (startAtMs !== undefined) this.set(startAtMs);
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Makes now() return `atMs` at this instant, then keep ticking. */
  set(atMs: number): void {
    this.offsetMs = atMs - Date.now();
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
