/**
 * What an output root holds and where: the layout, snapshot manifests, the snapshots stored and
 * published, and the `latest` pointer with the reader-order upload that moves it. Public outside
 * src/output: loads no DuckDB.
 */
export {
  CHANGE_KINDS,
  type ChangeKind,
  type ChangesFile,
  type FileCompany,
  isPublished,
  listSnapshots,
  type Manifest,
  MANIFEST_VERSION,
  type ManifestChanges,
  type ManifestDataset,
  type ManifestFile,
  type ManifestPart,
  parseManifest,
  type QuotaWaitSummary,
  readManifest,
  type SnapshotInfo,
} from './manifest.js';
export {
  assertDataset,
  assertSnapshotDate,
  assertSnapshotId,
  buildDir,
  dataFileName,
  extensionOf,
  MANIFEST_FILE,
  manifestPath,
  partitionRelDir,
  schemaRegistryPath,
  SCHEMAS_DIR,
  snapshotDir,
  SNAPSHOTS_DIR,
  STAGING_DIR,
  stagingSnapshotDir,
  SUCCESS_FILE,
  successPath,
  toPosix,
} from './paths.js';
export { comparePublishOrder, inPublishOrder, type PublishStamp, publishedAfter } from './publish-order.js';
export {
  latestPublishedSnapshot,
  latestStoredSnapshot,
  listPublishedSnapshots,
  listStoredSnapshots,
  newestInListing,
  newestPublishedOtherThan,
  readStoredManifest,
  readStoredText,
  stampOf,
  type StoredSnapshot,
  withLocalSnapshot,
} from './stored-snapshots.js';
export { type LatestPointer, readLatest, uploadSnapshot } from './upload-snapshot.js';
export { writeLatest } from './upload-snapshot.js';
