/** `filings-export emulator keygen`: a new random plaintext key, its sha256 and a keys-file entry. */
import { randomBytes } from 'node:crypto';
import { EmulatorConfigError } from '../errors.js';
import { sha256Hex } from './authenticator.js';
import type { KeyEntry } from './keys-file.js';

export const DEFAULT_KEY_PREFIX = 'ffx_live_b2b_';

export interface GeneratedKey {
  /** The plaintext: shown once, never stored. */
  key: string;
  sha256: string;
  /** Ready to paste into `accounts[].keys` of a keys file. */
  entry: KeyEntry;
}

/** @param prefix must end in `_b2b_` (section 5.1). @defaultValue `ffx_live_b2b_` */
export function generateKey(prefix = DEFAULT_KEY_PREFIX): GeneratedKey {
  if (!/^[A-Za-z0-9_]*_b2b_$/.test(prefix)) {
    throw new EmulatorConfigError(
      `--prefix "${prefix}": a key prefix is letters, digits and _ ending in "_b2b_"`,
    );
  }
  // 160 random bits, hex: no characters that need quoting in shells or headers.
  const key = `${prefix}${randomBytes(20).toString('hex')}`;
  const sha256 = sha256Hex(key);
  return {
    key,
    sha256,
    entry: {
      id: `key_${sha256.slice(0, 12)}`,
      sha256,
      status: 'active',
      expires_at: null,
      entitlements: [],
      rate_limit_per_minute: null,
      quota: { daily: null, monthly: null },
    },
  };
}
