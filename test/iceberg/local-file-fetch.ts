/**
 * A fetch for absolute local paths with HEAD and Range, so icebird and hyparquet (which read
 * through the global fetch) read a local Iceberg table as they would a bucket. Any other URL
 * goes to the real fetch.
 */
import { readFile } from 'node:fs/promises';

type Fetch = typeof globalThis.fetch;

export function localFileFetch(real: Fetch): Fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith('/')) return real(input, init);
    let body: Buffer;
    try {
      body = await readFile(url);
    } catch {
      return new Response(null, { status: 404, statusText: 'Not Found' });
    }
    if (init?.method === 'HEAD')
      return new Response(null, { status: 200, headers: { 'content-length': String(body.length) } });
    const range = /^bytes=(\d+)-(\d*)$/.exec(new Headers(init?.headers).get('range') ?? '');
    if (range === null) return new Response(new Uint8Array(body), { status: 200 });
    const start = Number(range[1]);
    const end = range[2] === '' ? body.length : Math.min(Number(range[2]) + 1, body.length);
    return new Response(new Uint8Array(body.subarray(start, end)), {
      status: 206,
      headers: { 'content-range': `bytes ${start}-${end - 1}/${body.length}` },
    });
  };
}
