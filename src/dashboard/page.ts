/**
 * The status page: one static HTML document whose script polls `api/state` every second and
 * renders it with textContent only (data never becomes markup). No build step, no framework.
 * Each block with a chart is its own module under blocks/, inlined here.
 */
import { BURN_DOWN_HTML, BURN_DOWN_SCRIPT } from './blocks/burn-down.js';
import { CHARTS_CSS, CHARTS_SCRIPT } from './blocks/charts.js';
import { COUNTED_SCRIPT } from '../counted.js';
import { RUNNING_HTML, RUNNING_SCRIPT } from './blocks/running.js';
import { TIMELINE_HTML, TIMELINE_SCRIPT } from './blocks/timeline.js';

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>filings-export</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1d2330; }
  h1 { font-size: 1.3rem; margin: 0 0 .2rem; } h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
  table { border-collapse: collapse; margin: .3rem 0 .8rem; } td, th { padding: .2rem .6rem; border-bottom: 1px solid #e3e6ee; text-align: right; }
  td:first-child, th:first-child { text-align: left; } .muted { color: #68708a; }
  .state { font-weight: 600; } .published { color: #1b7a3a; } .failed, .stopped, .cancelled { color: #b3261e; } .running { color: #1f5fbf; }
  .banner { background: #fff4e5; border: 1px solid #f0c36d; padding: .5rem .8rem; margin: .6rem 0; }
  .snapshot { border: 1px solid #e3e6ee; padding: .6rem .9rem; margin: .6rem 0; border-radius: 6px; }
  progress { width: 16rem; vertical-align: middle; }
${CHARTS_CSS}</style>
</head>
<body>
<h1>filings-export</h1>
<div class="muted">updated <span id="updated">…</span> · <a href="queues">jobs (Bull Board)</a></div>
<div id="outage" class="banner" hidden></div>
${RUNNING_HTML}
${TIMELINE_HTML}
<h2>Budget</h2>
<div id="budget" class="muted">no API key configured for this dashboard</div>
${BURN_DOWN_HTML}
<h2>Snapshots</h2>
<div id="snapshots"></div>
<h2>Last errors</h2>
<div id="errors" class="muted">none</div>
<script>
const token = new URLSearchParams(location.search).get('token');
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
const num = (n) => n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US');
${COUNTED_SCRIPT}function table(head, rows) {
  const t = el('table'); const h = el('tr'); head.forEach((c) => h.append(el('th', c))); t.append(h);
  rows.forEach((r) => { const tr = el('tr'); r.forEach((c) => tr.append(el('td', c))); t.append(tr); });
  return t;
}
${CHARTS_SCRIPT}${RUNNING_SCRIPT}${TIMELINE_SCRIPT}${BURN_DOWN_SCRIPT}
// "Warehouse loads": one line per snapshot whose load job (output.load_into) ran.
function warehouseLoad(snap) {
  if (!snap.load) return null;
  const line = el('div', 'warehouse load: ' + snap.load.outcome + ' at ' + snap.load.at + ' · ' + snap.load.message, snap.load.outcome === 'loaded' ? 'muted' : 'banner');
  line.dataset.load = snap.load.outcome;
  return line;
}
function render(s) {
  document.getElementById('updated').textContent = s.generatedAt;
  const outage = document.getElementById('outage');
  outage.hidden = !s.apiOutage; outage.textContent = s.apiOutage || '';
  renderRunning(s); renderTimeline(s.history); renderBurnDown(s);
  const b = s.budget; const budget = document.getElementById('budget');
  if (b) {
    budget.replaceChildren(table(['', 'value'], [
      ['rate (requests/min)', num(b.effectiveRequestsPerMinute) + ' (configured ' + b.configuredRequestsPerMinute + ', key limit ' + (b.serverLimitPerMinute === null ? 'not reported yet' : b.serverLimitPerMinute === 0 ? 'none' : num(b.serverLimitPerMinute)) + ')'],
      ['window', b.window ? num(b.window.sent) + ' of ' + num(b.window.allowed) + ' sent, ends ' + b.window.endsAt : 'idle'],
      ['holds', b.holds.length ? b.holds.map((h) => h.reason + ' until ' + h.until).join('; ') : 'none'],
      ['daily quota', num(b.daily.used) + ' used of ' + num(b.daily.limit) + (b.daily.exhaustedUntil ? ', spent until ' + b.daily.exhaustedUntil : '')],
      ['monthly quota', num(b.monthly.used) + ' used of ' + num(b.monthly.limit) + (b.monthly.exhaustedUntil ? ', spent until ' + b.monthly.exhaustedUntil : '')],
    ]));
  }
  const list = document.getElementById('snapshots'); list.replaceChildren();
  if (!s.snapshots.length) list.append(el('div', 'no snapshots yet', 'muted'));
  for (const snap of s.snapshots) {
    const box = el('div', undefined, 'snapshot'); box.dataset.snapshot = snap.id;
    const head = el('div'); head.append(el('strong', snap.id), ' ', el('span', snap.state, 'state ' + snap.state));
    if (snap.id === s.latest) { const tag = el('span', ' · latest', 'latest'); tag.title = 'published last under the output root'; head.append(tag); }
    head.append(el('span', ' · ' + snap.trigger + ' · ' + snap.date + ' · started ' + snap.createdAt + (snap.eta ? ' · ETA ' + snap.eta : ''), 'muted'));
    box.append(head);
    if (snap.waiting) box.append(el('div', 'waiting: ' + snap.waiting, 'banner'));
    if (snap.noWorker) box.append(el('div', 'waiting: ' + snap.noWorker, 'banner no-worker'));
    const rows = Object.entries(snap.datasets).map(([d, p]) => [d, num(p.done), num(p.not_found), num(p.bad_request), num(p.failed), num(p.pending), num(p.total), num(p.rows)]);
    const t = snap.total; rows.push(['all', num(t.done), num(t.not_found), num(t.bad_request), num(t.failed), num(t.pending), num(t.total), num(t.rows)]);
    box.append(table(['dataset', 'done', 'not found', 'bad request', 'failed', 'pending', 'parts', 'rows'], rows));
    if (snap.message) box.append(el('div', snap.message, 'muted'));
    for (const m of snap.notFound) box.append(el('div', 'not found: ' + m.company + ': ' + m.answer, 'banner not-found'));
    if (snap.notFoundCount > snap.notFound.length) box.append(el('div', '… and ' + (snap.notFoundCount - snap.notFound.length) + ' more not found', 'banner not-found'));
    const load = warehouseLoad(snap); if (load) box.append(load);
    list.append(box);
  }
  const errors = document.getElementById('errors');
  if (s.errors.length) errors.replaceChildren(table(['snapshot', 'dataset', 'company', 'message'], s.errors.map((e) => [e.snapshot, e.dataset, e.company, e.message])));
  else errors.textContent = 'none';
}
async function poll() {
  try {
    const res = await fetch('api/state' + (token ? '?token=' + encodeURIComponent(token) : ''));
    if (res.ok) render(await res.json());
  } catch (e) { document.getElementById('updated').textContent = 'unreachable (' + e + ')'; }
  setTimeout(poll, 1000);
}
poll();
</script>
</body>
</html>
`;
