/**
 * The page's "Nights" block (browser code, inlined): the last 30 snapshots as bar charts of
 * duration, requests and rows, the nightly schedule's missed dates as crosses on the same axis,
 * and one table under the charts with every number they draw.
 */
export const TIMELINE_HTML = `<h2>Nights</h2>
<div id="timeline" class="muted">no snapshots yet</div>`;

export const TIMELINE_SCRIPT = `
function renderTimeline(h) {
  const box = document.getElementById('timeline');
  if (!h.nights.length && !h.missed.length) { box.textContent = 'no snapshots yet'; return; }
  const items = h.nights.map((n) => ({ key: n.date + ' ' + n.startedAt, night: n }));
  h.missed.forEach((d) => items.push({ key: d, missed: d }));
  items.sort((a, b) => a.key.localeCompare(b.key));
  const rowsOf = (n) => Object.values(n.rows).reduce((a, b) => a + b, 0);
  const bars = (value, fmt) => items.map((i) => i.missed
    ? { missed: true, label: 'missed night ' + i.missed }
    : { label: i.night.id + ' (' + i.night.state + ')', value: value(i.night), cls: i.night.state });
  const charts = el('div', undefined, 'charts');
  charts.append(
    barChart('Duration of the last ' + counted(h.nights.length, 'snapshot') + ' (minutes)', bars((n) => (n.durationMs || 0) / 60000), (v) => v.toFixed(1) + ' min'),
    barChart('Requests sent per snapshot', bars((n) => n.requests), num),
    barChart('Rows per snapshot', bars(rowsOf), num),
  );
  const t = table(['date', 'snapshot', 'state', 'duration', 'requests', 'rows per dataset', 'reused parts', 'changed parts', 'failed parts'],
    items.map((i) => i.missed
      ? [i.missed, '–', 'missed', '–', '–', '–', '–', '–', '–']
      : [i.night.date, i.night.id, i.night.state, minutes(i.night.durationMs), num(i.night.requests),
         Object.entries(i.night.rows).map(([d, r]) => d + ' ' + num(r)).join(', '),
         num(i.night.reusedParts), num(i.night.changedParts), num(i.night.failedParts)]));
  t.classList.add('nights');
  const trs = t.querySelectorAll('tr');
  items.forEach((i, k) => { if (i.night) trs[k + 1].dataset.night = i.night.id; else trs[k + 1].className = 'failed'; });
  const misses = !h.schedule ? 'no nightly schedule set up'
    : h.missed.length ? 'missed nights (' + h.schedule.pattern + ' ' + h.schedule.tz + '): ' + h.missed.join(', ')
    : 'no missed nights (' + h.schedule.pattern + ' ' + h.schedule.tz + ')';
  box.className = ''; box.replaceChildren(charts, el('div', misses, h.missed.length ? 'failed' : 'muted'), t);
}
`;
