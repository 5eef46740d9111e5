/**
 * `GET /viewer/search/<result_key>`: a chunk's viewer_url. Serves the bundled filing document with
 * the chunk's byte range [html_offset_start, html_offset_end) marked and scrolled into view, using
 * the evidence viewer's highlighter (src/emulator/server/routes/viewer.ts); `?view=filing` serves
 * the whole document unmarked, as the evidence viewer does.
 */
import { sendJson } from '../../server/respond.js';
import type { RawRoute } from '../../server/routes/route-context.js';
import { highlight } from '../../server/routes/viewer.js';
import { readDataFile } from '../../data/index.js';
import { searchService } from './deps.js';

export const chunkViewer: RawRoute = {
  method: 'GET',
  pattern: /^\/viewer\/search\/([0-9a-f]{64})$/,
  async handle({ res, url, params, deps }) {
    const key = params[0] ?? '';
    const index = await searchService(deps).filings();
    const chunk = index.chunk(key);
    const file = chunk ? index.documentFile(chunk) : undefined;
    if (!chunk || !file) {
      await sendJson(res, 404, { error: `Unknown search result: ${key}` });
      return;
    }
    const doc = await readDataFile(file);
    const body = url.searchParams.get('view') === 'filing' ? doc : highlight(doc, chunk.start, chunk.end);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length });
    await new Promise<void>((resolve) => res.end(body, resolve));
  },
};
