/**
 * telemetry/proof-open (4.15): 202 `{ "ok": true }`. Outside the monthly quota, inside the rate
 * limit; not a data request, so `--fault-rate` spares it (explicit faults still apply).
 */
import { optionalString, requiredString } from '../request-fields.js';
import { defineOperation } from './route-context.js';

const OPTIONAL = ['cik', 'source_accession', 'series_key', 'metric_id', 'viewer_url', 'surface'] as const;

export const telemetryProofOpen = defineOperation<{ evidenceKey: string }>({
  id: 'telemetry/proof-open',
  dataRequest: false,
  countsMonthly: false,
  parse(body) {
    const evidenceKey = requiredString(body, 'evidence_key');
    for (const f of OPTIONAL) optionalString(body, f, 2000);
    return { evidenceKey };
  },
  handle: () => Promise.resolve({ kind: 'json', status: 202, body: { ok: true } }),
});
