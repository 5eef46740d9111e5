/**
 * The lines of an NDJSON byte stream, cut at the newline byte only. readline cannot be used: from
 * Node 24 it also ends lines at U+2028 / U+2029, which JSON.stringify leaves raw inside strings,
 * and it always ends them at a bare CR, which JSON allows as whitespace.
 */
import { OutputError } from '../../errors.js';

const NEWLINE = 0x0a;

/**
 * Each line's text without its `\n` (a final line without one included), in order. Cutting bytes
 * before decoding makes the result independent of how the source chunks them: 0x0A never occurs
 * inside a multi-byte UTF-8 sequence. Bytes that are not UTF-8 throw OUTPUT_FAILED naming the line.
 *
 * @param source byte chunks of any size, e.g. a gunzip stream
 * @param label names the source in errors (a file path)
 */
export async function* ndjsonLines(source: AsyncIterable<Uint8Array>, label: string): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending: Uint8Array[] = [];
  let lineNo = 0;
  const decode = (parts: Uint8Array[]): string => {
    lineNo++;
    try {
      return decoder.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    } catch (err: unknown) {
      throw new OutputError('OUTPUT_FAILED', `${label} line ${lineNo}: not valid UTF-8`, { cause: err });
    }
  };
  for await (const chunk of source) {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      pending.push(chunk.subarray(start, nl));
      yield decode(pending);
      pending = [];
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) yield decode(pending);
}
