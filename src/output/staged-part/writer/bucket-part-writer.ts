/**
 * Staging a part under an output root on a bucket (`s3://`): the part writer stages in a local temp
 * dir, and finish() puts the part's files on the storage, the sidecar first as locally.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputError } from '../../../errors.js';
import { toPosix } from '../../catalog/index.js';
import { removeTempDir, type Storage } from '../../storage/index.js';
import { fieldsSidecarPath } from '../layout.js';
import type { PartWriter, StagedPart } from '../types.js';
import { createPartWriter, type PartWriterOptions } from './part-writer.js';

/**
 * A part writer that stages in a temp dir and puts the part on the storage in finish(). The
 * pointer's size and sha256 are those of the stored object (the same bytes).
 */
export function createRemotePartWriter(
  storage: Storage,
  opts: Omit<PartWriterOptions, 'root'>,
  tmpDir?: string,
): PartWriter {
  const local = mkdtempSync(join(tmpDir ?? tmpdir(), 'filings-export-part-'));
  const inner = createPartWriter({ ...opts, root: local });
  return {
    get rows() {
      return inner.rows;
    },
    write: (row, rawJson) => inner.write(row, rawJson),
    writeText: (row) => inner.writeText(row),
    stagingId: inner.stagingId,
    // Staged in this machine's temp dir: no other worker can read it before it is stored.
    written: () => undefined,
    async finish(): Promise<StagedPart> {
      try {
        const staged = await inner.finish();
        const path = join(local, staged.file);
        await storage.putFile(toPosix(fieldsSidecarPath(staged.file)), fieldsSidecarPath(path));
        const stored = await storage.putFile(staged.file, path);
        if (stored.bytes !== staged.bytes)
          throw new OutputError(
            'OUTPUT_FAILED',
            `${storage.url(staged.file)}: stored ${stored.bytes} bytes, staged ${staged.bytes}`,
          );
        return staged;
      } finally {
        await removeTempDir(local);
      }
    },
    async abort(): Promise<void> {
      await inner.abort();
      await removeTempDir(local);
    },
  };
}
