/**
 * The shipped alert rules (deploy/prometheus/alerts.yml) pass `promtool check rules`, their unit
 * tests (alerts.test.yml, alerts-days.test.yml) pass `promtool test rules`, and those tests can fail: a rule with a
 * looser threshold is caught. A missing promtool is named as such.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { ALERTS_FILE, ALERTS_TEST_FILES, promtool } from '../helpers/prometheus.js';

const temps: string[] = [];
afterAll(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

interface RuleTests {
  tests: { alert_rule_test?: { alertname: string }[] }[];
}

describe('the alert rules', () => {
  it('pass promtool check rules', async () => {
    const r = await promtool(['check', 'rules', ALERTS_FILE]);
    expect(r.output).toContain('SUCCESS: 8 rules found');
    expect(r.code).toBe(0);
  });

  it('pass their promtool unit tests', async () => {
    const r = await promtool(['test', 'rules', ...ALERTS_TEST_FILES]);
    expect(r.output.match(/SUCCESS/g)).toHaveLength(ALERTS_TEST_FILES.length);
    expect(r.code).toBe(0);
  });

  it('have a unit test for every rule', async () => {
    const rules = parse(await readFile(ALERTS_FILE, 'utf8')) as { groups: { rules: { alert: string }[] }[] };
    const tested = new Set<string>();
    for (const file of ALERTS_TEST_FILES)
      for (const t of (parse(await readFile(file, 'utf8')) as RuleTests).tests)
        for (const a of t.alert_rule_test ?? []) tested.add(a.alertname);
    const names = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(names).toHaveLength(8);
    expect(names.filter((n) => !tested.has(n))).toEqual([]);
  });

  it('say "promtool not installed" when it is missing, not that its empty output lacks SUCCESS', async () => {
    const missing = join(tmpdir(), `fx-no-such-dir-${process.pid}`, 'promtool');
    await expect(promtool(['check', 'rules', ALERTS_FILE], missing)).rejects.toThrow(
      `promtool not installed: ${missing} does not exist; install Debian's prometheus`,
    );
  });

  it('catch a rule that drifts: 28 h instead of 26 h fails the missed-night test', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fx-rules-'));
    temps.push(dir);
    const rules = await readFile(ALERTS_FILE, 'utf8');
    expect(rules).toContain('> 26 * 3600');
    await writeFile(join(dir, 'alerts.yml'), rules.replace('> 26 * 3600', '> 28 * 3600'));
    // Only the missed-night test, to keep it short.
    const days = ALERTS_TEST_FILES.find((f) => f.endsWith('alerts-days.test.yml')) ?? '';
    const all = parse(await readFile(days, 'utf8')) as RuleTests;
    all.tests = all.tests.filter((t) =>
      (t.alert_rule_test ?? []).some((a) => a.alertname === 'FilingsExportNoPublishedSnapshot'),
    );
    await writeFile(join(dir, 'alerts.test.yml'), stringify(all));
    const r = await promtool(['test', 'rules', join(dir, 'alerts.test.yml')]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('alertname: FilingsExportNoPublishedSnapshot, time: 1d3h');
  });
});
