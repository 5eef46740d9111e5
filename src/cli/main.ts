/**
 * The `filings-export` CLI. Thin: it parses arguments, loads config, builds the resources a
 * subcommand needs, and owns process exit and signals. Each subcommand lives in its own module.
 */
import { Command, CommanderError } from 'commander';
import { FilingsExportError, coerceError } from '../errors.js';
import type { CliApp } from './app.js';
import { registerCommands } from './commands/index.js';
import { HELP } from './help.js';

/** Runs the CLI on `argv`; sets process.exitCode, never calls process.exit on success. */
export async function runCli(argv: readonly string[], app: CliApp): Promise<void> {
  const program = new Command('filings-export')
    .description('Export the Filing Facts API into warehouse snapshots; emulate the API locally.')
    .showHelpAfterError()
    .configureHelp(HELP)
    .exitOverride();
  registerCommands(program, app);
  try {
    await program.parseAsync([...argv]);
  } catch (err: unknown) {
    reportFailure(err);
  }
}

function reportFailure(err: unknown): void {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode;
  } else {
    const e = coerceError(err);
    const code = e instanceof FilingsExportError ? ` [${e.code}]` : '';
    process.stderr.write(`filings-export: ${e.message}${code}\n`);
    if (process.env.DEBUG) process.stderr.write(`${e.stack ?? ''}\n`);
    process.exitCode = e instanceof FilingsExportError && e.code === 'CONFIG_INVALID' ? 2 : 1;
  }
}
