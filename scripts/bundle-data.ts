/**
 * Copies an SEC data directory (layout of shared/data/sec: companyfacts/, submissions/, filings/,
 * reference/) into the project's bundled copy, data/sec/, gzip-compressing every file so the clone
 * stays small. The emulator reads `.gz` files transparently, so bytes (and byte offsets into filings)
 * are exactly those of the source.
 *
 * usage: npm run bundle-data -- [SOURCE_DIR] [TARGET_DIR]
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, stat, copyFile } from 'node:fs/promises';
import { join, relative, dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip, constants } from 'node:zlib';

const source = process.argv[2] ?? '../shared/data/sec';
const target = process.argv[3] ?? 'data/sec';

async function* walk(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(p);
    else if (entry.isFile()) yield p;
  }
}

let files = 0;
let inBytes = 0;
let outBytes = 0;
for await (const file of walk(source)) {
  const rel = relative(source, file);
  const isDoc = rel === 'README.md';
  const dest = join(target, isDoc ? 'SOURCE.md' : `${rel}.gz`);
  await mkdir(dirname(dest), { recursive: true });
  if (isDoc) await copyFile(file, dest);
  else
    await pipeline(
      createReadStream(file),
      createGzip({ level: constants.Z_BEST_COMPRESSION }),
      createWriteStream(dest),
    );
  files++;
  inBytes += (await stat(file)).size;
  outBytes += (await stat(dest)).size;
}
console.log(
  `bundled ${files} files from ${source} into ${target}: ${(inBytes / 1e6).toFixed(1)} MB -> ${(outBytes / 1e6).toFixed(1)} MB`,
);
