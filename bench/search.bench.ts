/**
 * Emulator search speed (issue 7): building the filing index from the bundled documents (listing,
 * HTML → chunks, BM25), and search latency over HTTP on a running emulator: the first
 * company-scoped search (which builds the index lazily), then the median of varied company-scoped
 * searches, and the median of registry (search/entities) searches after the company is loaded.
 */
import { DEMO_API_KEY } from '../src/emulator/demo-key.js';
import { BUNDLED_DATA_DIR, startEmulator } from '../src/emulator/index.js';
import { buildCorpus } from '../src/emulator/search/chunks/corpus.js';
import { listFilingDocuments } from '../src/emulator/search/chunks/filing-list.js';
import { FilingIndex } from '../src/emulator/search/indexes/filing-index.js';
import MiniSearch from 'minisearch';
import { Bm25Index } from '../src/emulator/search/indexes/bm25.js';
import { queryTerms, tokenize } from '../src/emulator/search/indexes/tokenize.js';
import { median } from './support/stats.js';
import type { BenchResult } from './support/types.js';

const QUERIES: ReadonlyArray<{ ticker: string; query: string }> = [
  { ticker: 'AAPL', query: 'global and regional economic conditions' },
  { ticker: 'AAPL', query: 'iPhone' },
  { ticker: 'AAPL', query: 'State Aid Decision' },
  { ticker: 'NVDA', query: 'data center revenue' },
  { ticker: 'NVDA', query: 'export controls China' },
  { ticker: 'TSLA', query: 'covenant restrictions' },
  { ticker: 'TSLA', query: 'automotive regulatory credits' },
  { ticker: 'MSFT', query: 'cloud revenue' },
  { ticker: 'GOOGL', query: 'advertising revenues' },
  { ticker: 'META', query: 'legal proceedings privacy' },
  { ticker: 'AMZN', query: 'fulfillment network' },
];
const ROUNDS = 5;

async function post(url: string, op: string, body: unknown): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/b2b/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': DEMO_API_KEY },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return { ms: performance.now() - t0, status: res.status };
}

export async function run(): Promise<BenchResult[]> {
  const out: BenchResult[] = [];

  const t0 = performance.now();
  const docs = await listFilingDocuments(BUNDLED_DATA_DIR);
  const listMs = performance.now() - t0;
  const corpus = await buildCorpus(docs, (d) => ({ name: d.registrantName, currentTicker: d.ticker }));
  const index = new FilingIndex(corpus);
  const totalMs = performance.now() - t0;
  const chars = corpus.chunks.reduce((n, c) => n + c.text.length, 0);
  out.push({
    group: 'search',
    name: 'filing index build (list + chunk + BM25)',
    value: totalMs,
    unit: 'ms',
    target: '< 3000 ms',
    ok: totalMs < 3000,
    note: `${docs.length} docs, ${corpus.chunks.length} chunks, ${(chars / 1e6).toFixed(1)}M chars; list ${listMs.toFixed(0)} ms, chunk ${corpus.buildMs.toFixed(0)} ms, BM25 ${index.buildMs.toFixed(0)} ms`,
  });

  out.push(
    ...compareWithMiniSearch(
      corpus.chunks.map((c) => tokenize(c.heading ? `${c.heading}\n${c.text}` : c.text)),
    ),
  );

  const emu = await startEmulator({ port: 0 });
  try {
    const valid = QUERIES.filter((q) => docs.some((d) => d.ticker === q.ticker));
    const first = valid[0];
    if (!first) throw new Error('no bundled filing documents to search');
    const cold = await post(emu.url, 'search/filings', first);
    out.push({
      group: 'search',
      name: 'first search/filings after start (builds index)',
      value: cold.ms,
      unit: 'ms',
      target: '< 3000 ms',
      ok: cold.status === 200 && cold.ms < 3000,
      note: `status ${cold.status}`,
    });
    const times: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const q of valid) {
        const t = await post(emu.url, 'search/filings', { ...q, limit: 10 });
        if (t.status !== 200) throw new Error(`search/filings ${q.ticker} answered ${t.status}`);
        times.push(t.ms);
      }
    }
    const med = median(times);
    out.push({
      group: 'search',
      name: 'search/filings company-scoped median over HTTP',
      value: med,
      unit: 'ms',
      target: '< 50 ms',
      ok: med < 50,
      note: `${times.length} requests, ${valid.length} queries x ${ROUNDS}; p90 ${[...times].sort((a, b) => a - b)[Math.floor(times.length * 0.9)]?.toFixed(1)} ms`,
    });

    const warm = await post(emu.url, 'search/entities', { ticker: 'AAPL', query: 'revenue' });
    const entityTimes: number[] = [];
    for (const query of ['revenue', 'net income', 'iPhone', 'operating lease liability', 'Greater China']) {
      for (let r = 0; r < ROUNDS; r++)
        entityTimes.push((await post(emu.url, 'search/entities', { ticker: 'AAPL', query })).ms);
    }
    const entityMed = median(entityTimes);
    out.push({
      group: 'search',
      name: 'search/entities AAPL median over HTTP (registry loaded)',
      value: entityMed,
      unit: 'ms',
      target: '< 50 ms',
      ok: entityMed < 50,
      note: `${entityTimes.length} requests; first call (loads AAPL catalogs) ${warm.ms.toFixed(0)} ms`,
    });
  } finally {
    await emu.close();
  }
  return out;
}

/**
 * The alternative measured for docs/decisions.md (Search): MiniSearch over the same tokens. Reports
 * build and query times of both, and how far MiniSearch's score of our top hit is from true BM25.
 */
function compareWithMiniSearch(docs: string[][]): BenchResult[] {
  let t = performance.now();
  const own = new Bm25Index(docs.map((tokens, id) => ({ id, tokens })));
  const ownBuild = performance.now() - t;
  t = performance.now();
  const split = (s: string): string[] => (s ? s.split(' ') : []);
  const mini = new MiniSearch<{ id: number; t: string }>({
    fields: ['t'],
    tokenize: split,
    processTerm: (x) => x,
  });
  mini.addAll(docs.map((tokens, id) => ({ id, t: tokens.join(' ') })));
  const miniBuild = performance.now() - t;
  const queries = [
    'global and regional economic conditions',
    'interest rate risk',
    'revenue',
    'supply chain disruptions',
  ];
  const ownTimes: number[] = [];
  const miniTimes: number[] = [];
  let maxRelDiff = 0;
  for (const q of queries) {
    const terms = queryTerms(q);
    for (let i = 0; i < 20; i++) {
      let s = performance.now();
      const a = own.search(terms);
      ownTimes.push(performance.now() - s);
      s = performance.now();
      const b = mini.search(terms.join(' '), {
        bm25: { k: 1.2, b: 0.75, d: 0 },
        prefix: false,
        fuzzy: false,
      });
      miniTimes.push(performance.now() - s);
      const top = a[0];
      const same = top ? b.find((r) => r.id === top.id) : undefined;
      if (top && same) maxRelDiff = Math.max(maxRelDiff, Math.abs(same.score - top.bm25) / top.bm25);
    }
  }
  return [
    {
      group: 'search',
      name: 'BM25 build: own vs MiniSearch (same tokens)',
      value: ownBuild,
      unit: 'ms',
      note: `MiniSearch ${miniBuild.toFixed(0)} ms for ${docs.length} chunks`,
    },
    {
      group: 'search',
      name: 'BM25 query median: own vs MiniSearch',
      value: median(ownTimes),
      unit: 'ms',
      note: `MiniSearch ${median(miniTimes).toFixed(2)} ms; its score of our top hit differs by up to ${(maxRelDiff * 100).toFixed(0)} % (Lucene idf, distinct-term lengths, x matched terms)`,
    },
  ];
}
