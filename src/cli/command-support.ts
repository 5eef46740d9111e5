/**
 * Shared plumbing of the pipeline commands: config + logger from the common flags, comma lists,
 * and signal handling (first SIGINT/SIGTERM = graceful, second = immediate exit).
 */
import { loadConfig, type Config, type FlagOverride } from '../config/load.js';
import { coerceError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';

export interface CommonCliOptions {
  config?: string;
}

export function setup(o: CommonCliOptions, flags: FlagOverride[] = []): { config: Config; logger: Logger } {
  const config = loadConfig({ ...(o.config !== undefined ? { configPath: o.config } : {}), flags });
  const logger = createLogger({
    level: config.log.level,
    ...(config.log.pretty === 'auto' ? {} : { pretty: config.log.pretty }),
  });
  return { config, logger };
}

/** `A,B , C` -> ['A','B','C']; commander argument parser. */

/**
 * How long closing may take after the first signal. A close that waits on Redis (frozen, or the
 * network gone) would otherwise never end, and `timeout`, systemd and Kubernetes send one SIGTERM.
 */
export interface ShutdownBound {
  /** Exit (code 130) this long after the first signal when closing has not ended. */
  forceExitMs: number;
  /** What closing is waiting for now, named in the exit line (and so what it could not record). */
  closing: () => string;
}

/** The bound of a pipeline command: running parts get worker.shutdown_timeout_ms, then this much more. */
export const CLOSE_MARGIN_MS = 10_000;

/** `worker.shutdown_timeout_ms` plus the margin for closing what is left. */
export function shutdownBoundMs(config: Config): number {
  return config.worker.shutdown_timeout_ms + CLOSE_MARGIN_MS;
}

/**
 * Runs `graceful` on the first SIGINT/SIGTERM; a second signal exits at once (code 130), and so
 * does reaching `bound.forceExitMs` with one line saying what closing was still waiting for.
 * Returns a function that removes the handlers (and the bound, once closing ended).
 */
export function onShutdownSignal(
  graceful: (signal: NodeJS.Signals) => void,
  bound: ShutdownBound,
): () => void {
  let seen = false;
  let force: NodeJS.Timeout | undefined;
  const handler = (signal: NodeJS.Signals): void => {
    if (seen) {
      process.stderr.write(`filings-export: second ${signal}; exiting now\n`);
      process.exit(130);
    }
    seen = true;
    force = setTimeout(() => {
      process.stderr.write(
        `filings-export: ${signal}: closing did not end within ${bound.forceExitMs} ms, still ${bound.closing()}; exiting without it\n`,
      );
      process.exit(130);
    }, bound.forceExitMs);
    force.unref();
    graceful(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
    if (force) clearTimeout(force);
  };
}

export interface CloseOnSignalOptions {
  /** Exit with code 1 when `close` has not settled this long after the signal. @defaultValue 5000 */
  forceExitMs?: number;
  /** Where the closing lines go. @defaultValue process.stderr */
  report?: (line: string) => void;
  /** Where SIGINT/SIGTERM arrive. @defaultValue process */
  signals?: SignalSource;
}

/** The part of `process` that delivers signals. */
export interface SignalSource {
  on(event: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(event: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

/**
 * Waits for the first SIGINT/SIGTERM, then runs `close`; resolves once it settled. A failed close
 * is reported (`<label>: closing failed: …`) and sets exit code 1: it never rejects unhandled.
 */
export async function closeOnSignal(
  label: string,
  close: () => Promise<void>,
  opts: CloseOnSignalOptions = {},
): Promise<void> {
  const report = opts.report ?? ((line: string) => void process.stderr.write(line));
  const signals = opts.signals ?? process;
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const stop = (s: NodeJS.Signals): void => {
      signals.off('SIGINT', stop);
      signals.off('SIGTERM', stop);
      resolve(s);
    };
    signals.on('SIGINT', stop);
    signals.on('SIGTERM', stop);
  });
  report(`${label}: ${signal}, closing\n`);
  // A stuck close must not keep the process alive forever.
  const force = setTimeout(() => process.exit(1), opts.forceExitMs ?? 5000);
  force.unref();
  try {
    await close();
  } catch (err: unknown) {
    report(`${label}: closing failed: ${coerceError(err).message}\n`);
    process.exitCode = 1;
  } finally {
    clearTimeout(force);
  }
}
