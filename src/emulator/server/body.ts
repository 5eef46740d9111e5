/** Reading a request body with a size cap (413 beyond it) and parsing it as a JSON object (400). */
import type { IncomingMessage } from 'node:http';
import { HttpError, badRequest } from './http-error.js';
import type { Body } from './request-fields.js';

/** @defaultValue 1 MiB: the largest legal body (100 series keys) is under 8 KB. */
export const MAX_BODY_BYTES = 1024 * 1024;

export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    throw new HttpError(413, `Request body too large: ${declared} bytes (limit ${maxBytes})`, {
      Connection: 'close',
    });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      req.resume();
      throw new HttpError(413, `Request body too large: over ${maxBytes} bytes`, { Connection: 'close' });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export function parseJsonObject(raw: Buffer): Body {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw badRequest('Malformed JSON: request body is empty (expected a JSON object)');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err: unknown) {
    throw badRequest(`Malformed JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw badRequest('Request body must be a JSON object');
  }
  return v as Body;
}
