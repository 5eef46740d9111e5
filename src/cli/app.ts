/**
 * What the program entry injects into the CLI: the composition root's wiring. The job processors
 * live in jobs/, above src/, so the entry (bin/filings-export.mjs) hands them in, loaded lazily so
 * that commands without workers never load them.
 */
import type { JobProcessors } from '../pipeline/job-processors.js';

export interface CliApp {
  /** The processors of every job type (jobs/index.ts). */
  loadJobs(): Promise<JobProcessors>;
}
