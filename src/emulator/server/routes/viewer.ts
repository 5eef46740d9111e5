/**
 * Evidence links: `GET /api/evidence/<evidence_key>/open` redirects (302) to the viewer
 * `GET /viewer/evidence/<evidence_key>`, which serves the real filing document with the figure
 * highlighted: a <mark> is inserted at the evidence's byte offsets of the raw document, plus a
 * style and a script that scrolls to it. `GET /viewer/document/<path>` serves a whole bundled
 * document unmarked (filing_url). Paths agreed in store.ts.
 */
import type { ServerResponse } from 'node:http';
import type { EvidenceLocation } from '../../store.js';
import { sendJson } from '../respond.js';
import type { RawRoute } from './route-context.js';

const HTML = 'text/html; charset=utf-8';
export const HIGHLIGHT_ID = 'ffx-evidence';

export const evidenceOpen: RawRoute = {
  method: 'GET',
  pattern: /^\/api\/evidence\/([^/]+)\/open$/,
  async handle({ res, params, deps }) {
    const id = params[0] ?? '';
    const loc = await deps.store.evidenceLocation(id);
    if (!loc) {
      await sendJson(res, 404, { error: `Unknown evidence: ${id}` });
      return;
    }
    const target = loc.evidence.viewer_url ?? `/viewer/evidence/${encodeURIComponent(id)}`;
    const location = target.startsWith('/') ? `${deps.publicUrl()}${target}` : target;
    res.writeHead(302, { Location: location, 'Cache-Control': 'no-store', 'Content-Length': 0 });
    res.end();
  },
};

export const evidenceViewer: RawRoute = {
  method: 'GET',
  pattern: /^\/viewer\/evidence\/([^/]+)$/,
  async handle({ res, params, deps }) {
    const id = params[0] ?? '';
    const loc = await deps.store.evidenceLocation(id);
    if (!loc) {
      await sendHtml(res, 404, page('Unknown evidence', `<p>No evidence record ${escapeHtml(id)}.</p>`));
      return;
    }
    if (loc.documentPath === null) {
      await sendHtml(res, 200, xbrlOnlyPage(loc));
      return;
    }
    const doc = await deps.store.readDocument(loc.documentPath);
    await sendHtml(res, 200, highlight(doc, loc.start, loc.end));
  },
};

/** The whole bundled document behind filing_url; paths are relative to the data dir. */
export const documentViewer: RawRoute = {
  method: 'GET',
  pattern: /^\/viewer\/document\/(.+)$/,
  async handle({ res, params, deps }) {
    const path = params[0] ?? '';
    if (path.split('/').some((seg) => seg === '..' || seg === '.' || seg === '')) {
      await sendHtml(res, 400, page('Bad document path', `<p>${escapeHtml(path)}</p>`));
      return;
    }
    let doc: Buffer;
    try {
      doc = await deps.store.readDocument(path);
    } catch {
      await sendHtml(res, 404, page('Unknown document', `<p>No bundled document ${escapeHtml(path)}.</p>`));
      return;
    }
    await sendHtml(res, 200, doc);
  },
};

/**
 * Inserts the highlight at byte offsets [start, end) of the raw document; offsets outside the
 * document or reversed leave it unmarked. The style goes in front (valid enough for every browser),
 * the scroll script at the end.
 */
export function highlight(doc: Buffer, start: number | null, end: number | null): Buffer {
  const style = Buffer.from(
    `<style>#${HIGHLIGHT_ID}{background:#ffe066;outline:3px solid #f59f00;scroll-margin:40vh}</style>`,
  );
  const script = Buffer.from(
    `<script>document.getElementById(${JSON.stringify(HIGHLIGHT_ID)})?.scrollIntoView({block:'center'})</script>`,
  );
  if (start === null || end === null || start < 0 || end > doc.length || end <= start) {
    return Buffer.concat([style, doc]);
  }
  return Buffer.concat([
    style,
    doc.subarray(0, start),
    Buffer.from(`<mark id="${HIGHLIGHT_ID}">`),
    doc.subarray(start, end),
    Buffer.from('</mark>'),
    doc.subarray(end),
    script,
  ]);
}

function xbrlOnlyPage(loc: EvidenceLocation): string {
  const e = loc.evidence;
  return page(
    `Evidence ${e.evidence_key}`,
    `<p>This fact comes from XBRL data without a bundled filing document (locator ${escapeHtml(
      String(e.locator_type),
    )}).</p><dl><dt>Accession</dt><dd>${escapeHtml(e.source_accession)}</dd><dt>Form</dt><dd>${escapeHtml(
      String(e.source_form_type),
    )}</dd><dt>Filed</dt><dd>${escapeHtml(e.source_filed_at)}</dd></dl>${
      e.snippet_text
        ? `<blockquote><mark id="${HIGHLIGHT_ID}">${escapeHtml(e.snippet_text)}</mark></blockquote>`
        : ''
    }${e.document_url ? `<p><a href="${escapeHtml(e.document_url)}">Original document</a></p>` : ''}`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function sendHtml(res: ServerResponse, status: number, body: string | Buffer): Promise<void> {
  res.writeHead(status, { 'Content-Type': HTML, 'Content-Length': Buffer.byteLength(body) });
  return new Promise((resolve) => res.end(body, resolve));
}
