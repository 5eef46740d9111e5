/**
 * Hashes what the emulator answers, for a refactor that must not change it: every single-company
 * operation of every bundled company, company-scoped and cross-company searches, as sha256 of each
 * response body (its own origin, a free port, taken out). Prints one line per operation (its combined hash over the companies) and a total.
 * Run it on the revision before and after a change and compare the output:
 *
 *   node bin/run-ts.mjs bench/support/emulator-output-hash.ts > after.txt
 */
import { createHash } from 'node:crypto';
import { bundledTestStore, startTestEmulator } from '../../test/helpers/emulator.js';

/** Operations that take one company (`ticker` or `cik`), section 4 of the interface. */
const COMPANY_OPERATIONS = [
  'facts/latest',
  'facts/core',
  'facts/full',
  'series/catalog',
  'dims/catalog',
  'evidence/enriched',
  'issuer/reference',
] as const;
/** Searches, each asked per company and once across companies. */
const SEARCHES = ['search/filings', 'search/entities', 'search/series'] as const;
const QUERIES = ['revenue', 'net income', 'risk factors'] as const;

async function post(url: string, key: string, op: string, body: object): Promise<string> {
  const res = await fetch(`${url}/api/b2b/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
  // Links carry the emulator's own origin, a free port that differs per run.
  return `${res.status} ${(await res.text()).replaceAll(url, 'EMULATOR')}`;
}

const store = await bundledTestStore();
const emulator = await startTestEmulator();
try {
  const perOperation = new Map<string, ReturnType<typeof createHash>>();
  const add = (op: string, text: string): void => {
    let h = perOperation.get(op);
    if (h === undefined) perOperation.set(op, (h = createHash('sha256')));
    h.update(createHash('sha256').update(text).digest());
  };
  const companies = store.companies();
  for (const c of companies) {
    const scope = c.ticker === null || c.ticker === undefined ? { cik: c.cik } : { ticker: c.ticker };
    for (const op of COMPANY_OPERATIONS) add(op, await post(emulator.url, emulator.apiKey, op, scope));
    for (const op of SEARCHES) {
      for (const query of QUERIES)
        add(op, await post(emulator.url, emulator.apiKey, op, { ...scope, query }));
    }
  }
  for (const op of SEARCHES) {
    for (const query of QUERIES)
      add(`${op} (cross-company)`, await post(emulator.url, emulator.apiKey, op, { query }));
  }
  const total = createHash('sha256');
  console.log(`companies ${companies.length}`);
  for (const [op, h] of [...perOperation].sort(([a], [b]) => a.localeCompare(b))) {
    const hex = h.digest('hex');
    total.update(hex);
    console.log(`${op} ${hex}`);
  }
  console.log(`total ${total.digest('hex')}`);
} finally {
  await emulator.close();
}
