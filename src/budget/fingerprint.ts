import { createHash } from 'node:crypto';

/**
 * Identifies an API key without revealing it: the first 16 hex digits of its sha256. Used in Redis
 * key names, logs and status; the key itself is never stored.
 */
export function keyFingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex').slice(0, 16);
}
