/** The shapes a queue hands out. */

/** A key's values taken from the queue together, oldest first. */
export interface Batch<K, V> {
  /** The key (customer) the values were published to. */
  readonly key: K;
  /** The values, in publish order. The array is the caller's to keep. */
  readonly values: V[];
}

/**
 * A batch claimed for at-least-once processing: its values stay held by the queue until
 * `ack` removes them or `nack` (or an expired lease) puts them back in front of the key.
 */
export interface ClaimedBatch<K, V> extends Batch<K, V> {
  /**
   * The batch id. Stable across redeliveries: a batch that is nacked or whose lease expires
   * comes back whole, under the same id (send it as `webhook-id` so receivers can dedupe).
   */
  readonly id: string;
  /** This claim's token. Each claim of the batch gets a new one; settling with an old one is refused. */
  readonly token: string;
  /** 1 on the first claim of this batch, +1 on each redelivery. */
  readonly attempt: number;
  /** When the lease runs out, on the queue's clock; the batch then returns to the queue by itself. */
  readonly leaseExpiresAt: number;
  /** When the oldest value of the batch was published, on the queue's clock. */
  readonly enqueuedAt: number;
}

/** What `ack`, `nack`, `extendLease` and `split` accept to name a claim: the claimed batch, or its id. */
export type ClaimRef = string | { readonly id: string; readonly token?: string };

/** A key's place in the queue and its pending values, as `peek()` and iteration show them. */
export interface QueueEntry<S, K, V> {
  readonly key: K;
  /** The key's place: the smallest sort key among its pending values. */
  readonly sortKey: S;
  /** A copy of the key's pending values, oldest first. */
  readonly values: readonly V[];
}
