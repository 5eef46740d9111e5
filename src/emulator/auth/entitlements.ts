/** Entitlements a key may carry (section 5.8), and the 403 a route gives when one is missing. */
import type { AuthenticatedKey } from './authenticator.js';

export const CROSS_COMPANY_SEARCH = 'cross_company_search';

/** Section 7: `API key is not entitled for ...`; the cross-company search wording is exact. */
export function notEntitledMessage(entitlement: string): string {
  return entitlement === CROSS_COMPANY_SEARCH
    ? 'API key is not entitled for cross-company search'
    : `API key is not entitled for ${entitlement.replace(/_/g, ' ')}`;
}

export function hasEntitlement(auth: AuthenticatedKey, entitlement: string): boolean {
  return auth.key.entitlements.includes(entitlement);
}
