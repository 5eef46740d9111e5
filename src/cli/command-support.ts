/**
 * Shared plumbing of the pipeline commands: config + logger from the common flags, comma lists,
 * and signal handling (first SIGINT/SIGTERM = graceful, second = immediate exit).
 */
import { loadConfig, type Config, type FlagOverride } from '../config/load.js';
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
 * Runs `graceful` on the first SIGINT/SIGTERM; a second signal exits at once (code 130).
 * Returns a function that removes the handlers.
 */
export function onShutdownSignal(graceful: (signal: NodeJS.Signals) => void): () => void {
  let seen = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (seen) {
      process.stderr.write(`filings-export: second ${signal}; exiting now\n`);
      process.exit(130);
    }
    seen = true;
    graceful(signal);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
