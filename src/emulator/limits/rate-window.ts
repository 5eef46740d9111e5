/**
 * Per-key fixed 60 s windows (section 8). Windows are aligned to whole UTC minutes of the
 * injected clock (`floor(now / 60000)`), so X-RateLimit-Reset is always a whole minute and every
 * process that reads the headers agrees on where a window ends.
 */
export const WINDOW_MS = 60_000;

export interface WindowState {
  /** Requests allowed per window. */
  limit: number;
  /** Requests left in the current window after this request. */
  remaining: number;
  /** Epoch ms at which the current window ends. */
  resetAtMs: number;
}

export class RateWindows {
  private readonly windows = new Map<string, { start: number; used: number }>();

  private current(keyId: string, now: number): { start: number; used: number } {
    const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    let w = this.windows.get(keyId);
    if (!w || w.start !== start) {
      w = { start, used: 0 };
      this.windows.set(keyId, w);
    }
    return w;
  }

  /** State without spending: remaining 0 means the next request gets 429. */
  peek(keyId: string, limit: number, now: number): WindowState {
    const w = this.current(keyId, now);
    return { limit, remaining: Math.max(0, limit - w.used), resetAtMs: w.start + WINDOW_MS };
  }

  /** Spends one request of the current window. */
  spend(keyId: string, limit: number, now: number): WindowState {
    const w = this.current(keyId, now);
    w.used += 1;
    return { limit, remaining: Math.max(0, limit - w.used), resetAtMs: w.start + WINDOW_MS };
  }

  clear(): void {
    this.windows.clear();
  }
}
