/**
 * The page's "Running" block (browser code, inlined): a progress bar per running snapshot with
 * the parts finished, the ETA at the pace so far and the request rate since it started.
 */
export const RUNNING_HTML = `<h2>Running</h2>
<div id="running" class="muted">nothing running</div>`;

export const RUNNING_SCRIPT = `
function renderRunning(s) {
  const box = document.getElementById('running');
  const running = s.snapshots.filter((x) => x.state === 'running' || x.state === 'enqueuing');
  if (!running.length) { box.className = 'muted'; box.textContent = 'nothing running'; return; }
  box.className = ''; box.replaceChildren();
  for (const snap of running) {
    const t = snap.total, finished = t.total - t.pending;
    const pct = t.total ? Math.floor((100 * finished) / t.total) : 0;
    const minutesSoFar = (Date.parse(s.generatedAt) - Date.parse(snap.createdAt)) / 60000;
    const rate = minutesSoFar > 0 ? snap.requests / minutesSoFar : 0;
    const text = num(finished) + ' of ' + counted(t.total, 'part', 'parts', num(t.total)) + ' (' + pct + ' %) · ETA ' + (snap.eta || '–') + ' · ' + rate.toFixed(1) + ' requests/min';
    const bar = el('progress'); bar.max = Math.max(1, t.total); bar.value = finished; bar.setAttribute('aria-label', snap.id + ': ' + text);
    const row = el('div', undefined, 'run'); row.dataset.running = snap.id;
    row.append(el('strong', snap.id), ' ', bar, ' ', el('span', text, 'muted'));
    box.append(row);
  }
}
`;
