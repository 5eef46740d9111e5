/** Local faults of staging (a full disk, no permission…), in words that name the path. */
import { coerceError, OutputError } from '../../../errors.js';

/** An OutputError naming the path and the system's reason (ENOSPC, EACCES, ENOTDIR, EROFS…). */
export function localFault(what: string, err: unknown): OutputError {
  const e = coerceError(err) as NodeJS.ErrnoException;
  return new OutputError('OUTPUT_FAILED', `${what}: ${e.code ? `${e.code} ` : ''}${e.message}`, {
    cause: err,
  });
}
