/**
 * Staged NDJSON is read line by line at the newline byte only, whatever the chunking of the bytes:
 * one byte at a time, cut inside a multi-byte UTF-8 character, cut inside a JSON string. Lines
 * hold what JSON.stringify leaves raw (U+2028, U+2029) and CR as JSON whitespace, which Node's
 * readline takes for line ends (U+2028 / U+2029 from Node 24, a bare CR on every version).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ndjsonLines } from '../../src/output/staged-part/ndjson-lines.js';
import { scanFieldKinds } from '../../src/output/staged-part/sidecar.js';

const records: Record<string, unknown>[] = [
  { id: 1, text: 'line separator \u2028 paragraph separator \u2029 end' },
  { id: 2, text: 'non-BMP 😀 𝄞, accents éü, CJK 漢字' },
  { id: 3, text: 'escaped breaks\nand\r\nstay inside', n: 12.5 },
  { id: 4, text: '' },
];
/** JSON text as the writer makes it, plus one line with CR as whitespace between tokens (legal JSON). */
const lines = [...records.map((r) => JSON.stringify(r)), '{"id":5,\r"text":"after a bare CR"}'];
const bytes = Buffer.from(`${lines.join('\n')}\n`, 'utf8');

async function* chunked(buf: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const cut of [...cuts, buf.length]) {
    yield Uint8Array.from(buf.subarray(at, cut)); // a copy: the reader must not rely on one backing buffer
    at = cut;
  }
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of ndjsonLines(source, 'test.ndjson')) out.push(line);
  return out;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('ndjsonLines', () => {
  it('reads the same lines from one chunk and from one-byte chunks', async () => {
    expect(await collect(chunked(bytes, []))).toEqual(lines);
    expect(await collect(chunked(bytes, range(1, bytes.length)))).toEqual(lines);
  });

  it('reads the same lines when a chunk ends inside a multi-byte character', async () => {
    const emoji = bytes.indexOf(Buffer.from('😀', 'utf8'));
    expect(emoji).toBeGreaterThan(0);
    for (const cut of [emoji + 1, emoji + 2, emoji + 3]) {
      // A continuation byte starts the next chunk: the character is cut.
      expect(bytes[cut]! & 0xc0).toBe(0x80);
      expect(await collect(chunked(bytes, [cut]))).toEqual(lines);
    }
  });

  it('reads the same lines when chunks end inside strings, at every cut point', async () => {
    const inString = bytes.indexOf(Buffer.from('paragraph', 'utf8')) + 4;
    expect(await collect(chunked(bytes, [inString]))).toEqual(lines);
    for (const cut of range(1, bytes.length)) {
      expect(await collect(chunked(bytes, [cut]))).toEqual(lines);
    }
  });

  it('keeps a last line without a newline and yields nothing for empty input', async () => {
    expect(await collect(chunked(Buffer.from('{"a":1}\n{"b":2}'), [3]))).toEqual(['{"a":1}', '{"b":2}']);
    expect(await collect(chunked(Buffer.alloc(0), []))).toEqual([]);
  });

  it('names the line whose bytes are not UTF-8', async () => {
    const bad = Buffer.concat([
      Buffer.from('{"a":1}\n{"a":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}\n'),
    ]);
    await expect(collect(chunked(bad, [9]))).rejects.toMatchObject({
      code: 'OUTPUT_FAILED',
      message: 'test.ndjson line 2: not valid UTF-8',
    });
  });
});

describe('scanFieldKinds over a gzip file', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('counts every row and the longest line, whatever the lines hold', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fx-ndjson-lines-'));
    dirs.push(dir);
    const path = join(dir, 'AAPL.ndjson.gz');
    // Two gzip members, the second starting inside a character: no member need hold whole lines.
    const cut = bytes.indexOf(Buffer.from('漢', 'utf8')) + 1;
    await writeFile(path, Buffer.concat([gzipSync(bytes.subarray(0, cut)), gzipSync(bytes.subarray(cut))]));
    const scanned = await scanFieldKinds(path);
    expect(scanned.rows).toBe(lines.length);
    expect(scanned.maxLineChars).toBe(Math.max(...lines.map((l) => l.length)) + 1);
    expect(scanned.fields.names).toEqual(['id', 'text', 'n']);
  });

  it('names the file and line that is not JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fx-ndjson-lines-'));
    dirs.push(dir);
    const path = join(dir, 'BAD.ndjson.gz');
    await writeFile(path, gzipSync('{"a":1}\n{"a":\n'));
    await expect(scanFieldKinds(path)).rejects.toMatchObject({
      code: 'OUTPUT_FAILED',
      message: expect.stringContaining(`${path} line 2: `) as unknown,
    });
  });
});
