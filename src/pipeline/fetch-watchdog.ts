/**
 * Notices a worker that stopped fetching: jobs wait in its queue, it has free slots, nothing holds it
 * (no pause, no rate limit), yet it started no job for `stuckAfterMs`. BullMQ 6.7 can leave an idle
 * worker's fetch loop parked for good after a Redis Cluster failover (its blocking connection reset
 * races the slots refresh; BullMQ #3185, #4479, #4585). Its maintainers' remedy, which the worker
 * runner applies: start a new worker and let the old one go.
 */
import type { Queue, Worker } from 'bullmq';
import type { Clock } from '../types.js';

/** What one look at a queue and its worker found. */
export interface FetchReading {
  /** Jobs ready to run now (wait and prioritized). */
  waiting: number;
  /** Jobs this worker runs now. */
  activeHere: number;
  concurrency: number;
  /** Paused (worker or queue), rate-limited or closing: not expected to fetch. */
  held: boolean;
}

/** True when the worker should be fetching: jobs wait and it has room, and nothing holds it. */
export const shouldFetch = (r: FetchReading): boolean =>
  !r.held && r.waiting > 0 && r.activeHere < r.concurrency;

export interface FetchWatchdogOptions {
  worker: Worker;
  queue: Queue;
  clock: Clock;
  /** Called once when the worker is found stuck; the watchdog stops itself first. */
  onStuck(idleMs: number, reading: FetchReading): void;
  /** @defaultValue 10_000 */
  everyMs?: number;
  /** Longer than a blocking fetch (drainDelay 5 s) and BullMQ's own watchdog (+1 s). @defaultValue 30_000 */
  stuckAfterMs?: number;
}

export interface FetchWatchdog {
  close(): void;
}

/** One look at the queue and the worker (a few small Redis reads). */
async function read(worker: Worker, queue: Queue): Promise<FetchReading> {
  const [counts, queuePaused, limitTtl, active] = await Promise.all([
    queue.getJobCounts('wait', 'prioritized'),
    queue.isPaused(),
    queue.getRateLimitTtl(),
    queue.getJobs(['active']),
  ]);
  const name = worker.opts.name;
  return {
    waiting: (counts.wait ?? 0) + (counts.prioritized ?? 0),
    activeHere: active.filter((j) => j.processedBy === name).length,
    concurrency: worker.concurrency,
    held:
      worker.closing !== undefined || worker.isPaused() || !worker.isRunning() || queuePaused || limitTtl > 0,
  };
}

export function watchFetching(o: FetchWatchdogOptions): FetchWatchdog {
  const stuckAfterMs = o.stuckAfterMs ?? 30_000;
  let lastFetchMs = o.clock.now();
  let busy = false;
  const started = (): void => {
    lastFetchMs = o.clock.now();
  };
  o.worker.on('active', started);
  const tick = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      const r = await read(o.worker, o.queue);
      const idleMs = o.clock.now() - lastFetchMs;
      if (!shouldFetch(r)) lastFetchMs = o.clock.now();
      else if (idleMs > stuckAfterMs) {
        stop();
        o.onStuck(idleMs, r);
      }
    } catch {
      // Redis unreachable: nothing can be fetched, so nothing is stuck; the next look decides.
      lastFetchMs = o.clock.now();
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), o.everyMs ?? 10_000);
  timer.unref();
  const stop = (): void => {
    clearInterval(timer);
    o.worker.off('active', started);
  };
  return { close: stop };
}
