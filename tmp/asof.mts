import { loadStore } from '../src/emulator/data/load-store.ts';
const store = await loadStore({});
const a = store.at('2025-10-30'), b = store.at('2025-11-05');
for (const c of store.companies()) {
  const [ca, cb] = [await a.seriesCatalog(c.cik), await b.seriesCatalog(c.cik)];
  const [fa, fb] = [await a.factsFull(c.cik), await b.factsFull(c.cik)];
  const [ia, ib] = [await a.issuerReference(c.cik), await b.issuerReference(c.cik)];
  console.log(c.ticker, 'catalog', ca.length, cb.length, JSON.stringify(ca) === JSON.stringify(cb) ? 'same' : 'DIFF', 'facts', fa.length, fb.length, JSON.stringify(fa) === JSON.stringify(fb) ? 'same' : 'DIFF', ia.as_of_date, ib.as_of_date);
}
await store.close();
