import type { Command } from 'commander';
import type { CliApp } from './app.js';
import { registerEmulatorCommand } from './emulator-command.js';
import { registerPipelineCommands } from './pipeline-command.js';
import { registerDdlCommand } from './ddl-command.js';
import { registerVerifyCommand } from './verify-command.js';

/**
 * Registers every subcommand. Each lives in its own module under src/cli/ and is imported lazily,
 * so `filings-export emulator` does not load BullMQ and `worker` does not load the emulator.
 */
export function registerCommands(program: Command, app: CliApp): void {
  registerEmulatorCommand(program);
  registerPipelineCommands(program, app);
  registerVerifyCommand(program);
  registerDdlCommand(program);
}
