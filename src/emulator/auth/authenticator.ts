/**
 * API-key authentication of section 5: the presented key is hashed (sha256) and looked up; the
 * account and key states then decide 401/403 with the exact strings of section 7.
 */
import { createHash } from 'node:crypto';
import type { EmulatorClock } from '../runtime.js';
import type { AccountEntry, KeyEntry, KeysFile } from './keys-file.js';

/** The exact 401/403 `error` strings of section 7. */
export const AUTH_ERRORS = {
  required: 'API key required',
  invalid: 'Invalid API key',
  accountDisabled: 'Account is disabled',
  revoked: 'API key has been revoked',
  keyDisabled: 'API key is disabled',
  expired: 'API key has expired',
} as const;

/** A key that passed authentication, with its account. */
export interface AuthenticatedKey {
  key: KeyEntry;
  account: AccountEntry;
}

export type AuthResult =
  { ok: true; auth: AuthenticatedKey } | { ok: false; status: 401 | 403; error: string; keyId?: string };

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export class Authenticator {
  private readonly byHash = new Map<string, AuthenticatedKey>();

  constructor(
    keys: KeysFile,
    private readonly clock: EmulatorClock,
  ) {
    for (const account of keys.accounts) {
      for (const key of account.keys) this.byHash.set(key.sha256, { key, account });
    }
  }

  /** Every key of the file with its account (stats, limits). */
  entries(): IterableIterator<AuthenticatedKey> {
    return this.byHash.values();
  }

  /** Whether a plaintext key is in the file (the CLI prints the demo key only if it is). */
  knows(plaintext: string): boolean {
    return this.byHash.has(sha256Hex(plaintext));
  }

  /**
   * Checks in the order of section 7's table: missing, unknown, account disabled, key revoked,
   * key disabled, key expired (`now >= expires_at`).
   */
  authenticate(header: string | string[] | undefined): AuthResult {
    const presented = Array.isArray(header) ? header[0] : header;
    if (presented === undefined || presented.trim() === '') {
      return { ok: false, status: 401, error: AUTH_ERRORS.required };
    }
    const found = this.byHash.get(sha256Hex(presented.trim()));
    if (!found) return { ok: false, status: 401, error: AUTH_ERRORS.invalid };
    const keyId = found.key.id;
    if (found.account.status === 'disabled') {
      return { ok: false, status: 403, error: AUTH_ERRORS.accountDisabled, keyId };
    }
    if (found.key.status === 'revoked') return { ok: false, status: 403, error: AUTH_ERRORS.revoked, keyId };
    if (found.key.status === 'disabled')
      return { ok: false, status: 403, error: AUTH_ERRORS.keyDisabled, keyId };
    if (found.key.expires_at !== null && this.clock.now() >= Date.parse(found.key.expires_at)) {
      return { ok: false, status: 403, error: AUTH_ERRORS.expired, keyId };
    }
    return { ok: true, auth: found };
  }
}
