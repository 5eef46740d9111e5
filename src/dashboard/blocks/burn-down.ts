/**
 * The page's monthly quota burn-down (browser code, inlined under the budget table): this
 * month's requests per day added up, the monthly limit, and where the current pace ends the
 * month. The ledger's `monthly.used` is the truth; the per-day split comes from the snapshot
 * records (requests counted on the day each snapshot started). The projection is the server's
 * (`monthProjection`, src/dashboard/history.ts): the page only draws and words it.
 */
export const BURN_DOWN_HTML = `<div id="burndown"></div>`;

export const BURN_DOWN_SCRIPT = `
function renderBurnDown(s) {
  const box = document.getElementById('burndown');
  const m = s.history.month, { used, limit, daysLeft, projected, runsOutFirst } = s.burnDown;
  let sum = 0;
  const days = m.perDay.slice(0, m.today).map((r, k) => { sum += r; return { day: k + 1, requests: r, total: sum }; });
  const caption = 'Month ' + m.month + ': ' + counted(used, 'request', 'requests', num(used)) + ' used' + (limit !== null ? ' of ' + num(limit) + ' (' + num(Math.max(0, limit - used)) + ' left)' : ', no monthly quota known')
    + ', ' + counted(daysLeft, 'day') + ' left; at this pace ' + num(projected) + ' by the month\\'s end'
    + (runsOutFirst ? ': the quota runs out first' : '');
  const chart = lineChart(caption, [[0, 0], ...days.map((d) => [d.day, d.total])], [[m.today, used], [m.daysInMonth, projected]], limit, m.daysInMonth);
  const t = table(['day', 'requests', 'month so far'], days.filter((d) => d.requests > 0).map((d) => [m.month + '-' + String(d.day).padStart(2, '0'), num(d.requests), num(d.total)]));
  box.replaceChildren(chart, t);
}
`;
