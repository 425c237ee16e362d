/**
 * The heap bound the load scenario holds the run to, derived from what the options promise:
 * the queue holds at most `maxPending` values (pending plus claimed), whatever the producers try.
 *
 *   bound = live baseline + maxPending × (recordBytes + PER_RECORD_OVERHEAD_BYTES) × HEAP_FACTOR + HEAP_SLACK_BYTES
 *
 * It is checked against the live heap (after a full collection, see `live-heap.ts`) at the end
 * of the outage, when the queue has been full longest; the live baseline is taken the same way
 * before the run starts.
 *
 * - `recordBytes`: the record's payload (its padding string, one byte per character).
 * - PER_RECORD_OVERHEAD_BYTES (320): the record object and its other fields (customer string,
 *   seq, timestamp), its slot in the key's array, and its share of the key's state and claim.
 *   Measured: with 1 KiB records, 10,000, 24,000 and 100,000 held cost 1.31 KiB of live heap
 *   each, so 320 bytes above the payload.
 * - HEAP_FACTOR (1.5): room above one copy per held record, for the bodies of the batches in
 *   flight (up to `concurrency` of them) and for records that cost more than measured here.
 * - HEAP_SLACK_BYTES (8 MiB): what does not grow with `maxPending`: undici's and the HTTP
 *   server's buffers and sockets, the ledger's ids, the histograms. Measured: about 4 MiB.
 *
 * An unbounded queue fed the same way holds every record the producers tried to publish during
 * the outage, which the flags make at least twice `maxPending`. With the defaults (`npm run
 * chaos -- --scenario load`: 48,000 tried against 10,000 held, 1 KiB each) that is about 63 MB
 * of live heap above the baseline against a bound of 27 MB above it: a queue that ignored its
 * bound would fail the check. (With tiny records or a small `maxPending`, the slack dominates
 * and only the "filled to maxPending" check would notice.)
 *
 * The heap high-water the report prints (`heapUsed` sampled every 250 ms) includes garbage V8
 * has not collected yet, up to a few times the live heap; it is shown, not checked.
 */

/** Heap a held record may cost beyond its payload, in bytes. */
export const PER_RECORD_OVERHEAD_BYTES = 320;
/** Copies of a held record that may be on the heap at once. */
export const HEAP_FACTOR = 1.5;
/** Heap that does not grow with `maxPending`. */
export const HEAP_SLACK_BYTES = 8 * 1_048_576;

/** What the bound is computed from. */
export interface HeapBoundInputs {
  /** Live heap before the run started. */
  baselineBytes: number;
  maxPending: number;
  /** Payload bytes per record. */
  recordBytes: number;
}

/** The most live heap the load scenario may hold, in bytes. */
export function heapBound(inputs: HeapBoundInputs): number {
  const perRecord = (inputs.recordBytes + PER_RECORD_OVERHEAD_BYTES) * HEAP_FACTOR;
  return inputs.baselineBytes + inputs.maxPending * perRecord + HEAP_SLACK_BYTES;
}
