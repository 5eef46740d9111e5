import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Paths pino censors in every log line. Secrets never reach a log, whatever object is logged. */
export const REDACT_PATHS = [
  // output.load_into may be a postgres:// URL with a password in it.
  'load_into',
  '*.load_into',
  '*.*.load_into',
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'api_key',
  '*.api_key',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  'config.api.key',
  'FILINGS_API_KEY',
];

export interface LoggerFactoryOptions {
  /** pino level (the config's log.level; LOG_LEVEL reaches it through the config). @defaultValue `info` */
  level?: string;
  /** Human-readable output through pino-pretty. @defaultValue true when stderr is a TTY and not CI */
  pretty?: boolean;
  /** Where lines go. @defaultValue stderr, so stdout stays for machine-readable results */
  destination?: NodeJS.WritableStream;
}

/** Builds the process logger: JSON in production, readable on a terminal, secrets redacted. */
export function createLogger(opts: LoggerFactoryOptions = {}): Logger {
  const level = opts.level ?? 'info';
  const pretty = opts.pretty ?? (process.stderr.isTTY === true && !process.env.CI);
  const base: LoggerOptions = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
  };
  if (pretty) {
    return pino({
      ...base,
      transport: {
        target: 'pino-pretty',
        options: { destination: 2, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' },
      },
    });
  }
  return pino(base, opts.destination ?? pino.destination({ dest: 2, sync: false }));
}

/** A logger that drops everything: default for library code and tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
