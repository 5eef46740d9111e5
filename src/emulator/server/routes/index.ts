/**
 * The route tables. One line per operation; search routes are added by the search modules
 * (e.g. `searchEntities` from ../../search/…), in the same way.
 */
import { dimsCatalog, seriesCatalog } from './catalogs.js';
import { evidenceEnriched } from './evidence.js';
import {
  factsCore,
  factsCoreBySeries,
  factsFull,
  factsFullBySeries,
  factsLatest,
  factsLatestBySeries,
} from './facts.js';
import { issuerReference } from './issuer.js';
import { sandboxFacts } from './sandbox-facts.js';
import { seriesBatch } from './series-batch.js';
import { seriesBlob } from './series-blob.js';
import { telemetryProofOpen } from './telemetry.js';
import {
  chunkViewer,
  sandboxSearch,
  searchEntities,
  searchFilings,
  searchSeries,
} from '../../search/routes/index.js';
import type { B2bRoute, RawRoute } from './route-context.js';
import { documentViewer, evidenceOpen, evidenceViewer } from './viewer.js';

/** `/api/b2b/<id>` operations (POST, key, limits, faults). */
export const B2B_ROUTES: readonly B2bRoute[] = [
  factsLatest,
  factsLatestBySeries,
  factsCore,
  factsFull,
  factsCoreBySeries,
  factsFullBySeries,
  seriesCatalog,
  dimsCatalog,
  seriesBatch,
  evidenceEnriched,
  issuerReference,
  telemetryProofOpen,
  searchEntities,
  searchSeries,
  searchFilings,
];

/** Routes without a key (GET blobs, evidence links, viewer, sandbox). */
export const RAW_ROUTES: readonly RawRoute[] = [
  seriesBlob,
  evidenceOpen,
  evidenceViewer,
  documentViewer,
  sandboxFacts,
  sandboxSearch,
  chunkViewer,
];
