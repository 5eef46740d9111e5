/**
 * `GET /s/series/<series_id>/<version>` (2.8 serving.blob_url): immutable, so it is cacheable for
 * a year and carries the series' ETag; If-None-Match gives 304. No key, like a CDN object.
 */
import { createHash } from 'node:crypto';
import { sendJson } from '../respond.js';
import type { RawRoute } from './route-context.js';

export const seriesBlob: RawRoute = {
  method: 'GET',
  pattern: /^\/s\/series\/([^/]+)\/([^/]+)$/,
  async handle({ req, res, params, deps }) {
    const [id = '', versionText = ''] = params;
    const version = /^\d+$/.test(versionText) ? Number(versionText) : NaN;
    const blob = Number.isSafeInteger(version) ? await deps.store.seriesBlob(id, version) : undefined;
    if (!blob) {
      await sendJson(res, 404, { error: `Unknown series blob: ${id}/${versionText}` });
      return;
    }
    const text = JSON.stringify(blob);
    const meta = await deps.store.seriesById(id);
    const tag = meta?.serving.etag ?? createHash('sha256').update(text).digest('hex').slice(0, 32);
    const etag = tag.startsWith('"') || tag.startsWith('W/') ? tag : `"${tag}"`;
    const headers = { ETag: etag, 'Cache-Control': 'public, max-age=31536000, immutable' };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    await sendJson(res, 200, blob, headers);
  },
};
