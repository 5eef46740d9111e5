/**
 * What the program entry injects into the CLI: the composition root's wiring. The job definitions
 * live in jobs/, above src/, so the entry (bin/filings-export.mjs) hands them in, loaded lazily so
 * that commands without workers never load them.
 */
import type { JobDefinitions } from '../pipeline/index.js';

export interface CliApp {
  /** Every job type's definition (jobs/index.ts). */
  loadJobs(): Promise<JobDefinitions>;
}
