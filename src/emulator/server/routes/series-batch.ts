/**
 * series/batch (4.12): metadata for up to 100 series ids, in request order; unknown ids are
 * omitted without error, a repeated id is answered once (at its first position).
 */
import type { SeriesMetadata } from '../../store.js';
import { seriesIds } from '../request-fields.js';
import { defineOperation } from './route-context.js';

export const seriesBatch = defineOperation<{ ids: string[] }>({
  id: 'series/batch',
  parse: (body) => ({ ids: [...new Set(seriesIds(body))] }),
  async handle(p, ctx) {
    const found = await Promise.all(p.ids.map((id) => ctx.deps.store.seriesById(id)));
    const series = found.filter((s): s is SeriesMetadata => s !== undefined);
    return { kind: 'envelope', fields: {}, rowsField: 'series', rows: series };
  },
});
