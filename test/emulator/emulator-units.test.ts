/**
 * Pure pieces of the emulator's HTTP layer whose edge cases are awkward to reach over HTTP:
 * URL prefixing on serialised JSON, the viewer's byte-offset highlight, quota period boundaries,
 * and the fault plan's precedence and `times` accounting.
 */
import { describe, expect, it } from 'vitest';
import { FaultPlan, parseFaultRules, seededRandom } from '../../src/emulator/faults/fault-plan.js';
import { periodEndMs, periodOf } from '../../src/emulator/limits/quota-ledger.js';
import { urlRewriter } from '../../src/emulator/server/respond.js';
import { highlight } from '../../src/emulator/server/routes/viewer.js';

describe('urlRewriter', () => {
  const rewrite = urlRewriter('http://h:1/');

  it('prefixes absolute-path URL members, nested ones too, and leaves absolute URLs alone', () => {
    const json = JSON.stringify({
      evidence_url: '/api/evidence/e1/open',
      document_url: 'https://www.sec.gov/x.htm',
      serving: { blob_url: '/s/series/a/1' },
      viewer_url: null,
    });
    expect(JSON.parse(rewrite(json))).toEqual({
      evidence_url: 'http://h:1/api/evidence/e1/open',
      document_url: 'https://www.sec.gov/x.htm',
      serving: { blob_url: 'http://h:1/s/series/a/1' },
      viewer_url: null,
    });
  });

  it('never touches the inside of a string value that looks like a URL member', () => {
    const tricky = { snippet_text: '"evidence_url":"/api/x" and \\"a_url\\":\\"/b' };
    expect(JSON.parse(rewrite(JSON.stringify(tricky)))).toEqual(tricky);
  });

  it('escapes a base URL with `$` safely', () => {
    expect(JSON.parse(urlRewriter('http://h/$1$&')(JSON.stringify({ a_url: '/p' })))).toEqual({
      a_url: 'http://h/$1$&/p',
    });
  });
});

describe('highlight', () => {
  const doc = Buffer.from('<p>Revenue <ix:nonFraction>391,035</ix:nonFraction> total</p>', 'utf8');
  const start = doc.indexOf('<ix:');
  const end = doc.indexOf('</ix:nonFraction>') + '</ix:nonFraction>'.length;

  it('wraps exactly the byte range and keeps every other byte', () => {
    const out = highlight(doc, start, end).toString('utf8');
    expect(out).toContain('<mark id="ffx-evidence"><ix:nonFraction>391,035</ix:nonFraction></mark>');
    expect(
      out.replace(/<style>.*?<\/style>|<script>.*?<\/script>|<mark id="ffx-evidence">|<\/mark>/g, ''),
    ).toBe(doc.toString('utf8'));
  });

  it('leaves the document unmarked for missing or impossible offsets', () => {
    for (const [s, e] of [
      [null, null],
      [10, 5],
      [0, doc.length + 1],
    ] as const) {
      expect(highlight(doc, s, e).toString('utf8')).not.toContain('<mark');
    }
  });
});

describe('quota periods (UTC)', () => {
  it('days and months end at 00:00 UTC, across a year end', () => {
    const nye = Date.UTC(2025, 11, 31, 23, 59, 59);
    expect(periodOf('daily', nye)).toBe('2025-12-31');
    expect(periodOf('monthly', nye)).toBe('2025-12');
    expect(periodEndMs('daily', nye)).toBe(Date.UTC(2026, 0, 1));
    expect(periodEndMs('monthly', nye)).toBe(Date.UTC(2026, 0, 1));
    expect(periodEndMs('monthly', Date.UTC(2024, 1, 10))).toBe(Date.UTC(2024, 2, 1));
  });
});

describe('FaultPlan', () => {
  const req = {
    operation: 'facts/full',
    tickers: ['AAPL'],
    headerKind: undefined,
    headerMs: undefined,
    dataRequest: true,
  };

  it('header beats rules, rules beat the rate, and a rule fires exactly `times` times', () => {
    const plan = new FaultPlan(1, () => 0);
    plan.addRules([{ fault: 'truncate', times: 2, ticker: 'aapl' }]);
    expect(plan.decide({ ...req, headerKind: 'reset' })?.kind).toBe('reset');
    expect(plan.decide(req)?.kind).toBe('truncate');
    expect(plan.decide(req)?.kind).toBe('truncate');
    expect(plan.decide(req)).toMatchObject({ kind: '503', source: 'rate' });
    expect(plan.decide({ ...req, dataRequest: false })).toBeUndefined();
    expect(plan.listRules()).toEqual([]);
  });

  it('parses rules with defaults and rejects bad fields by path', () => {
    expect(parseFaultRules({ rules: [{ fault: 'slow', ms: 10 }] })).toEqual([
      { fault: 'slow', times: 1, ms: 10 },
    ]);
    expect(parseFaultRules({})).toBe('rules: expected an array');
    expect(parseFaultRules({ rules: [{ fault: '503', operation: 1 }] })).toBe(
      'rules[0].operation: expected a string',
    );
  });

  it('a seeded random source repeats', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const xs = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});
