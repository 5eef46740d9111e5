/**
 * manual_review of a chunk (section 3.2 gives the states, not how they are reached). The emulator
 * derives it deterministically, so the same chunk always answers the same:
 * - confidence below 0.5 → `needs_review` (no reviewer yet): the classifier was unsure;
 * - else by the first byte of the chunk's result_key: 0–9 (≈4 %) `needs_review`, 10–12 (≈1 %)
 *   `rejected` with a reviewer note, everything else `verified`;
 * - reviewed chunks name the reviewer `emulator-review` and were reviewed two days after filing.
 */
export type ReviewStatus = 'verified' | 'rejected' | 'needs_review';

/** A chunk's `manual_review` as the emulator derives it (the contract's ManualReview). */
export interface ChunkReview {
  status: ReviewStatus;
  reviewer: string | null;
  note: string | null;
  reviewed_at: string | null;
}

export const REVIEWER = 'emulator-review';
export const LOW_CONFIDENCE = 0.5;

function reviewedAt(filedAt: string | null): string | null {
  if (!filedAt) return null;
  const t = Date.parse(`${filedAt}T00:00:00Z`);
  return Number.isNaN(t) ? null : new Date(t + 2 * 86_400_000 + 15 * 3_600_000).toISOString();
}

export function reviewFor(resultKey: string, confidence: number, filedAt: string | null): ChunkReview {
  if (confidence < LOW_CONFIDENCE) {
    return {
      status: 'needs_review',
      reviewer: null,
      note: 'low section-classification confidence',
      reviewed_at: null,
    };
  }
  const bucket = parseInt(resultKey.slice(0, 2), 16);
  if (bucket < 10) {
    return { status: 'needs_review', reviewer: null, note: 'queued for spot check', reviewed_at: null };
  }
  if (bucket < 13) {
    return {
      status: 'rejected',
      reviewer: REVIEWER,
      note: 'section boundary disputed: passage belongs to a neighbouring section',
      reviewed_at: reviewedAt(filedAt),
    };
  }
  return { status: 'verified', reviewer: REVIEWER, note: null, reviewed_at: reviewedAt(filedAt) };
}
