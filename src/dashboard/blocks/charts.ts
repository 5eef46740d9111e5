/**
 * The page's chart helpers (browser code, inlined into the page): bar and line charts drawn as
 * inline SVG, so the page needs no library and no network beyond its own server. Every chart
 * carries a <title> (and each bar its own), and the page puts the numbers under it as a table.
 * Browser script as text: no backticks and no template placeholders inside.
 */
export const CHARTS_CSS = `
  figure.chart { margin: .4rem 0; } figure.chart svg { display: block; max-width: 100%; height: auto; }
  .bar { fill: #7c9bd6; } .bar.published { fill: #4c9a63; } .bar.failed, .bar.stopped, .bar.cancelled { fill: #c4554d; }
  .bar.running, .bar.enqueuing { fill: #7c9bd6; } .miss { fill: #b3261e; font: 14px sans-serif; }
  .axis { stroke: #9aa1b5; } .tick { fill: #68708a; font: 10px sans-serif; }
  .line { fill: none; stroke: #1f5fbf; stroke-width: 2; } .projection { fill: none; stroke: #1f5fbf; stroke-dasharray: 5 4; }
  .limit { stroke: #b3261e; stroke-dasharray: 3 3; }
  .charts { display: flex; flex-wrap: wrap; gap: 0 1.5rem; }
`;

export const CHARTS_SCRIPT = `
const SVG_NS = 'http://www.w3.org/2000/svg';
function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}
function figure(caption, svg) {
  const fig = el('figure', undefined, 'chart'); fig.append(svg, el('figcaption', caption, 'muted')); return fig;
}
// items: { label, value, cls, missed }. A missed item draws a cross at the baseline instead of a bar.
function barChart(caption, items, fmt) {
  const W = 420, H = 110, n = Math.max(items.length, 1), bw = (W - 2) / n;
  const max = Math.max(1, ...items.map((i) => i.value || 0));
  const s = svgEl('svg', { viewBox: '0 0 ' + W + ' ' + (H + 14), width: W, height: H + 14, role: 'img', 'aria-label': caption });
  s.append(svgEl('title', {}, caption));
  items.forEach((it, k) => {
    const x = 1 + k * bw;
    if (it.missed) {
      const t = svgEl('text', { x: x + bw / 2, y: H - 2, 'text-anchor': 'middle', class: 'miss' }, '\\u00d7');
      t.append(svgEl('title', {}, it.label)); s.append(t); return;
    }
    const h = it.value > 0 ? Math.max(1, (it.value / max) * (H - 6)) : 0;
    const r = svgEl('rect', { x: x + 1, y: H - h, width: Math.max(1, bw - 2), height: h, class: 'bar ' + (it.cls || '') });
    r.append(svgEl('title', {}, it.label + ': ' + fmt(it.value))); s.append(r);
  });
  s.append(svgEl('line', { x1: 0, y1: H, x2: W, y2: H, class: 'axis' }));
  s.append(svgEl('text', { x: 0, y: 9, class: 'tick' }, 'max ' + fmt(max)));
  return figure(caption, s);
}
// A cumulative line (points [x, y]) with a dashed projection and a dashed limit, x in [0, xMax].
function lineChart(caption, points, projection, limit, xMax) {
  const W = 420, H = 120;
  const yMax = Math.max(1, limit || 0, ...points.map((p) => p[1]), ...projection.map((p) => p[1])) * 1.05;
  const px = (x) => (x / xMax) * (W - 2) + 1, py = (y) => H - (y / yMax) * (H - 4);
  const pts = (ps) => ps.map((p) => px(p[0]).toFixed(1) + ',' + py(p[1]).toFixed(1)).join(' ');
  const s = svgEl('svg', { viewBox: '0 0 ' + W + ' ' + (H + 14), width: W, height: H + 14, role: 'img', 'aria-label': caption });
  s.append(svgEl('title', {}, caption));
  if (limit) s.append(svgEl('line', { x1: 0, y1: py(limit), x2: W, y2: py(limit), class: 'limit' }));
  if (projection.length) s.append(svgEl('polyline', { points: pts(projection), class: 'projection' }));
  s.append(svgEl('polyline', { points: pts(points), class: 'line' }));
  s.append(svgEl('line', { x1: 0, y1: H, x2: W, y2: H, class: 'axis' }));
  s.append(svgEl('text', { x: 0, y: H + 12, class: 'tick' }, 'day 1'));
  s.append(svgEl('text', { x: W, y: H + 12, class: 'tick', 'text-anchor': 'end' }, 'day ' + xMax));
  return figure(caption, s);
}
function minutes(ms) {
  if (ms === null || ms === undefined) return '–';
  const s = Math.round(ms / 1000);
  return s < 60 ? s + ' s' : s < 3600 ? Math.floor(s / 60) + ' min ' + (s % 60) + ' s' : Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
}
`;
