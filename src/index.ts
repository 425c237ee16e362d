/**
 * duebatch: collect records per key, release each key's records as one batch when it is due,
 * and deliver the batches over HTTP with retries, signatures and an ack step.
 */
export * from './errors.js';
export { monotonicClock, ManualClock, setLongTimeout, sleep, MAX_TIMER_DELAY_MS } from './time.js';
export type { Clock, LongTimeout, LongTimeoutOptions } from './time.js';
export type { Batch, ClaimedBatch, ClaimRef, QueueEntry } from './queue/batch.js';
export type { ClaimOptions, AckOptions, NackOptions, ExtendLeaseOptions } from './queue/batch-queue.js';
export { BatchQueue } from './queue/batch-queue.js';
export type { BatchQueueOptions, SortedQueueOptions, Comparator } from './queue/queue-options.js';
export { SortedQueue } from './queue/sorted-queue.js';
export type { UpToOptions } from './queue/sorted-queue.js';
export { TimeSortedQueue } from './queue/time-sorted-queue.js';
export type { TimeSortedQueueOptions, TimeTakeOptions } from './queue/time-sorted-queue.js';
export type { BatchSource, MaybePromise, QueueCounts } from './queue/batch-source.js';
