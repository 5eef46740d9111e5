/**
 * `--help` of the real CLI shows what must be given (issue 36: `prune --help` did not show that
 * `--keep` is required): the usage line names every required option and its line says so.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/processes.js';

describe('help of a command with a required option', () => {
  const cases = [
    { command: 'prune', option: '--keep <n>' },
    { command: 'load', option: '--into <target>' },
    { command: 'ddl', option: '--dialect <name>' },
  ];
  for (const { command, option } of cases) {
    it(`\`${command} --help\` says that ${option.split(' ')[0]} is required`, async () => {
      const r = await runCli([command, '--help']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`Usage: filings-export ${command} ${option} [options]`);
      const line = r.stdout
        .split('\nOptions:\n')[1]
        ?.split(/\n(?= {2}-)/)
        .find((l) => l.startsWith(`  ${option}`));
      expect(line?.replace(/\s+/g, ' ')).toMatch(/\(required\)$/);
    });
  }

  it('a command without one keeps the plain usage line', async () => {
    const r = await runCli(['status', '--help']);
    expect(r.stdout).toContain('Usage: filings-export status [options] [snapshot]');
    expect(r.stdout).not.toContain('(required)');
  });
});
