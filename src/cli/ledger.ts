/**
 * The receiver's books: which requests it has accepted (by `webhook-id`), how many records each
 * customer got, whether each customer's records came in order, and how late they came.
 */
import { DeliveryLatency } from './latency.js';
import type { DemoRecord } from './producers.js';

/** What the ledger counted. */
export interface LedgerCounts {
  /** Records accepted the first time their request came. */
  delivered: number;
  /** Records in requests whose `webhook-id` was accepted before: acknowledged, not counted again. */
  duplicates: number;
  /** Requests whose `webhook-id` was accepted before. */
  duplicateRequests: number;
  /** Records whose `seq` was not above the last one their customer got. */
  orderViolations: number;
  /** Records that came to another customer's endpoint. */
  misrouted: number;
  /** Customers that got at least one record. */
  customers: number;
}

/** Books of the accepted requests. */
export class DeliveryLedger {
  readonly latency = new DeliveryLatency();
  // A real receiver would forget ids after the sender's retry window; the demo is short.
  readonly #acceptedIds = new Set<string>();
  readonly #lastSeq = new Map<string, number>();
  readonly #counts = { delivered: 0, duplicates: 0, duplicateRequests: 0, orderViolations: 0, misrouted: 0 };

  /**
   * Books one accepted request to `customer`'s endpoint. A request seen before (same id: a retry
   * after a lost response) is a duplicate: its records are not counted, checked or timed again.
   * @param nowMs receipt time, `Date.now()` like the records' `at`
   */
  accept(id: string, customer: string, records: readonly DemoRecord[], nowMs: number): void {
    if (this.#acceptedIds.has(id)) {
      this.#counts.duplicateRequests++;
      this.#counts.duplicates += records.length;
      return;
    }
    this.#acceptedIds.add(id);
    for (const record of records) this.#book(customer, record, nowMs);
  }

  /** Whether a request with this `webhook-id` was accepted. */
  hasAccepted(id: string): boolean {
    return this.#acceptedIds.has(id);
  }

  counts(): LedgerCounts {
    return { ...this.#counts, customers: this.#lastSeq.size };
  }

  #book(customer: string, record: DemoRecord, nowMs: number): void {
    this.#counts.delivered++;
    this.latency.record(nowMs - record.at);
    if (record.customer !== customer) this.#counts.misrouted++;
    const last = this.#lastSeq.get(record.customer) ?? -1;
    if (record.seq <= last) this.#counts.orderViolations++;
    else this.#lastSeq.set(record.customer, record.seq);
  }
}
