/**
 * A keys file whose only key is limited to one request a minute, a day and a month, on an account
 * limited the same: what the `none` overrides of the emulator must lift (emulator-limits and
 * emulator-cli tests).
 */
import { createHash } from 'node:crypto';
import type { KeysFile } from '../../src/emulator/auth/keys-file.js';

export const TIGHT_KEY = 'ffx_live_b2b_test_tight_0123456789abcdef';

export function tightKeysFile(): KeysFile {
  return {
    accounts: [
      {
        id: 'acct_tight',
        status: 'active',
        quota: { daily: 1, monthly: 1 },
        keys: [
          {
            id: 'key_tight',
            sha256: createHash('sha256').update(TIGHT_KEY).digest('hex'),
            status: 'active',
            expires_at: null,
            entitlements: [],
            rate_limit_per_minute: 1,
            quota: { daily: 1, monthly: 1 },
          },
        ],
      },
    ],
  };
}
