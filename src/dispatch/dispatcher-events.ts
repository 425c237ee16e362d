/** The events, stats and close options of the {@link Dispatcher}: its public shapes. */
import type { ClaimedBatch } from '../queue/batch.js';
import type { DeadLetter } from './dead-letters.js';
import type { LatencySummary } from './latency.js';
import type { DeliveryFailure } from './retry.js';

/** A batch (or part) the endpoint accepted. */
export interface SentEvent<K, V> {
  batch: ClaimedBatch<K, V>;
  statusCode: number;
  /** Age of the batch's oldest value when it was acked, in ms. */
  latencyMs: number;
}

/** A failed attempt that will be retried. */
export interface RetryEvent<K, V> {
  batch: ClaimedBatch<K, V>;
  /** The attempt that failed (1-based). */
  attempt: number;
  /** Wait before the next attempt. */
  delayMs: number;
  failure: DeliveryFailure;
  error: Error;
}

/** The events of a {@link Dispatcher}. */
export interface DispatcherEvents<K, V> {
  /** A batch (or part) was acked by its endpoint. */
  sent: [event: SentEvent<K, V>];
  /** An attempt failed and the batch goes back to the queue for a retry after a backoff. */
  retry: [event: RetryEvent<K, V>];
  /** A batch went to the dead-letter path. */
  deadLetter: [letter: DeadLetter<K, V>];
  /** A key's circuit opened: its batches rest until `until` (dispatcher clock). */
  paused: [event: { key: K; until: number }];
  /** Something failed outside one delivery (the queue store, a dead-letter handler). Only emitted when listened to. */
  error: [error: Error];
}

/** Counters and gauges of a {@link Dispatcher}. */
export interface DispatcherStats {
  /** Values waiting in the queue. */
  pending: number;
  /** Keys with values waiting. */
  pendingKeys: number;
  /** Values claimed and not settled (in flight or between attempts of a split batch). */
  claimed: number;
  /** Batches being delivered by this dispatcher now. */
  inFlight: number;
  sentBatches: number;
  sentValues: number;
  /** HTTP requests made, retries included. */
  requests: number;
  retries: number;
  deadLetteredBatches: number;
  deadLetteredValues: number;
  /** Keys paused by the circuit now. */
  pausedKeys: number;
  /** Age of a batch's oldest value when acked. */
  latency: LatencySummary;
}

/** Options of {@link Dispatcher.close}. */
export interface CloseOptions {
  /** How long to keep delivering before the rest is dead-lettered as `shutdown` (`Infinity`: no deadline). @default 30_000 */
  timeoutMs?: number;
}
