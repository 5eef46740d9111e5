/**
 * Every subcommand, one module each under src/cli/commands/. Registering them loads only
 * commander and the option parsers; a command's own modules load when it runs, so
 * `filings-export emulator` does not load BullMQ and `worker` does not load the emulator.
 */
import type { Command } from 'commander';
import type { CliApp } from '../app.js';
import * as cancel from './cancel.js';
import * as dashboard from './dashboard.js';
import * as ddl from './ddl.js';
import * as demo from './demo.js';
import * as emulator from './emulator.js';
import * as iceberg from './iceberg.js';
import * as load from './load.js';
import * as prune from './prune.js';
import * as run from './run.js';
import * as schedule from './schedule.js';
import * as status from './status.js';
import * as verify from './verify.js';
import * as worker from './worker.js';

/** What every command module exports: its registration (and its `run`, called by the action). */
interface CommandModule {
  register(program: Command, app: CliApp): void;
}

/** In the order of `filings-export --help`. */
const COMMANDS: readonly CommandModule[] = [
  emulator,
  worker,
  run,
  schedule,
  status,
  cancel,
  dashboard,
  demo,
  verify,
  ddl,
  iceberg,
  load,
  prune,
];

export function registerCommands(program: Command, app: CliApp): void {
  for (const c of COMMANDS) c.register(program, app);
}
