/**
 * Dead-lettered records, counted from the dispatcher's `deadLetter` events: by reason, and how
 * many of them the receiver had accepted anyway (every response to their request was lost, then
 * the retries ran out). Those are delivered AND dead-lettered, and must not be subtracted twice
 * when the lost records are counted.
 */
import type { DeadLetter, DeadLetterCode } from '../../src/dispatch/dead-letters.js';

/** What the tally counted, in records (values) unless named otherwise. */
export interface DeadLetterCounts {
  values: number;
  batches: number;
  /** Records per reason code; reasons that did not occur are absent. */
  byReason: Partial<Record<DeadLetterCode, number>>;
  /** Dead-lettered records whose request the receiver had accepted. */
  deliveredAnyway: number;
}

/** Counts dead letters as they come. */
export class DeadLetterTally {
  readonly #counts: DeadLetterCounts = { values: 0, batches: 0, byReason: {}, deliveredAnyway: 0 };

  /** @param accepted whether the receiver accepted a request with this `webhook-id` */
  constructor(private readonly accepted: (id: string) => boolean) {}

  add(letter: DeadLetter<unknown, unknown>): void {
    const n = letter.values.length;
    this.#counts.values += n;
    this.#counts.batches++;
    this.#counts.byReason[letter.reason.code] = (this.#counts.byReason[letter.reason.code] ?? 0) + n;
    if (this.accepted(letter.id)) this.#counts.deliveredAnyway += n;
  }

  counts(): DeadLetterCounts {
    return { ...this.#counts, byReason: { ...this.#counts.byReason } };
  }
}
