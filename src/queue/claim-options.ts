/** Options of the claim-side calls of a queue: `claim`, `ack`, `nack`, `extendLease`. */

/** Options of `claim`. */
export interface ClaimOptions {
  /** Lease of these batches. @default the queue's `leaseMs` */
  leaseMs?: number;
  /** Most batches to claim, e.g. a consumer's free concurrency slots. @default no bound */
  maxBatches?: number;
  /** Also take keys deferred by a nack, as if their delay had run out (shutdown). @default false */
  includeDeferred?: boolean;
}

/** Options of `ack`. */
export interface AckOptions {
  /** The claim's token; taken from the claimed batch when one is passed. Without it no staleness check is possible. */
  token?: string;
}

/** Options of `nack`. */
export interface NackOptions extends AckOptions {
  /** The key is not claimable again before this time (queue clock). */
  notBefore?: number;
  /** The key is not claimable again for this many milliseconds. */
  delayMs?: number;
}

/** Options of `extendLease`. */
export interface ExtendLeaseOptions extends AckOptions {
  /** New lease, from now. @default the queue's `leaseMs` */
  leaseMs?: number;
}
