/**
 * The contract the dispatcher reads from. The in-memory queues satisfy it synchronously, the
 * Redis queues asynchronously; the dispatcher awaits every call, so both look the same to it.
 */
import type { ClaimedBatch } from './batch.js';

/** A value, or a promise of one. */
export type MaybePromise<T> = T | Promise<T>;

/** What a queue holds, as {@link BatchSource.counts} reports it. */
export interface QueueCounts {
  /** Values waiting to be claimed (due or not). */
  pending: number;
  /** Values claimed and not yet settled. */
  claimed: number;
  /** Keys with pending values. */
  keys: number;
}

/** Options of {@link BatchSource.claim}. */
export interface SourceClaimOptions {
  leaseMs?: number;
  maxBatches?: number;
  force?: boolean;
  includeDeferred?: boolean;
}

/** A queue of per-key batches that a consumer claims, then acks or nacks. */
export interface BatchSource<K, V> {
  /**
   * True when other processes claim from the same queue (Redis). A closing dispatcher then
   * finishes or returns its own claims instead of draining the queue.
   */
  readonly shared?: boolean;
  /**
   * Claims due batches in place order: `maxMessages` values and `maxBatches` batches at most;
   * `force` also takes keys that are not due yet, `includeDeferred` keys deferred by a nack.
   */
  claim(maxMessages: number, options?: SourceClaimOptions): MaybePromise<ClaimedBatch<K, V>[]>;
  /** Removes a claimed batch's values for good. */
  ack(batch: ClaimedBatch<K, V>): MaybePromise<void>;
  /** Puts a claimed batch back in front of its key, not claimable for `delayMs`. */
  nack(batch: ClaimedBatch<K, V>, options?: { delayMs?: number }): MaybePromise<void>;
  /** Moves a claim's lease to `leaseMs` from now. */
  extendLease(batch: ClaimedBatch<K, V>, options: { leaseMs: number }): MaybePromise<ClaimedBatch<K, V>>;
  /** Replaces a claimed batch by parts of `counts[i]` values, each settled on its own. */
  split(batch: ClaimedBatch<K, V>, counts: readonly number[]): MaybePromise<ClaimedBatch<K, V>[]>;
  /** Milliseconds until the next batch is due or a lease comes back (0: now), `undefined` when nothing is held. */
  nextDueIn(): MaybePromise<number | undefined>;
  /** Calls `listener(dueInMs)` when a publish makes a key due at a new, possibly earlier, time. Returns an unsubscribe function. */
  onWake(listener: (dueInMs: number) => void): () => void;
  /** Makes a key deferred by a nack claimable now; whether it was deferred. */
  resume(key: K): MaybePromise<boolean>;
  /** What the queue holds now. */
  counts(): MaybePromise<QueueCounts>;
  /** Refuses further publishes. */
  close(): MaybePromise<void>;
}
