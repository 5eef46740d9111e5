/**
 * Which published snapshot is newer, in one place: the one published later. A snapshot holds the
 * API's data as of the moment it ran, so the order of publication is the order of the data; the
 * label date (`snapshot_date`, a calendar date in the time zone of whoever started it) never
 * decides. `latest`, the base of an incremental night, load, prune, verify, ddl, status and the
 * page all derive "newest" from this comparison (docs/output.md, "What the date and `latest` mean").
 */

/** What the order reads of a snapshot: its id and its manifest's `published_at` (ISO-8601). */
export interface PublishStamp {
  snapshot_id: string;
  /** Absent or unreadable (a snapshot not published, a hand-made manifest): sorts as the oldest. */
  published_at?: string | null | undefined;
}

function publishedMs(s: PublishStamp): number {
  const ms = Date.parse(s.published_at ?? '');
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

/**
 * Oldest first: by publish time, then by id so that equal times still order the same way
 * everywhere. Parsed as instants, so two writers' spellings of one time compare equal.
 */
export function comparePublishOrder(a: PublishStamp, b: PublishStamp): number {
  const d = publishedMs(a) - publishedMs(b);
  if (d !== 0 && !Number.isNaN(d)) return d < 0 ? -1 : 1;
  return a.snapshot_id < b.snapshot_id ? -1 : a.snapshot_id > b.snapshot_id ? 1 : 0;
}

/** Whether `a` was published after `b` (the newer of the two). */
export function publishedAfter(a: PublishStamp, b: PublishStamp): boolean {
  return comparePublishOrder(a, b) > 0;
}

/** The items sorted oldest first by the stamp `stampOf` gives each (a copy). */
export function inPublishOrder<T>(items: readonly T[], stampOf: (item: T) => PublishStamp): T[] {
  return [...items].sort((a, b) => comparePublishOrder(stampOf(a), stampOf(b)));
}
