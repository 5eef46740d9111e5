/**
 * An empty setting is not a default: a config variable set to '' (or blanks) is refused by the
 * real CLI with exit code 2 and one line naming the variable, before anything connects; before
 * this rule `FILINGS_API_URL=` silently meant the local emulator's address.
 */
import { describe, expect, it } from 'vitest';
import { CONFIG_ENV_NAMES } from '../../src/config/load.js';
import { CLI_BIN, runToExit, type CliResult } from '../helpers/processes.js';

/** The CLI with exactly `env` (these tests build the whole environment). */
const runCli = (args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> => runToExit(CLI_BIN, args, env);

/** The environment of a user with a key and nothing else set (no inherited settings). */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, FILINGS_API_KEY: 'ffx_test_b2b_x' };
  for (const name of CONFIG_ENV_NAMES) if (name !== 'FILINGS_API_KEY') delete env[name];
  return env;
}

describe('empty environment variables', () => {
  it('FILINGS_API_URL= is refused naming the variable, not read as the emulator address', async () => {
    const r = await runCli(['run', '--tickers', 'NVDA', '--local'], { ...baseEnv(), FILINGS_API_URL: '' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'filings-export: environment FILINGS_API_URL is set but empty (an empty variable is not the default): give it a value or unset it (unset FILINGS_API_URL) [CONFIG_INVALID]',
    ]);
  });

  it('every variable the config reads is checked by the same rule, blanks included', async () => {
    const env = baseEnv();
    for (const name of CONFIG_ENV_NAMES) env[name] = name === 'REDIS_URL' ? '  ' : '';
    const r = await runCli(['status'], env);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`environment ${CONFIG_ENV_NAMES.join(', ')} are set but empty`);
    expect(lines[0]).toContain(`(unset ${CONFIG_ENV_NAMES.join(' ')})`);
  });
});
