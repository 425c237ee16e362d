/**
 * duebatch: collect records per key, release each key's records as one batch when it is due,
 * and deliver the batches over HTTP with retries, signatures and an ack step.
 */
export * from './errors.js';
export { monotonicClock, ManualClock, setLongTimeout, sleep, MAX_TIMER_DELAY_MS } from './time.js';
export type { Clock, LongTimeout, LongTimeoutOptions } from './time.js';
export type { Batch, ClaimedBatch, ClaimRef, QueueEntry } from './queue/batch.js';
export type { ClaimOptions, AckOptions, NackOptions, ExtendLeaseOptions } from './queue/claim-options.js';
export { BatchQueue } from './queue/batch-queue.js';
export type { BatchQueueOptions, SortedQueueOptions, Comparator } from './queue/queue-options.js';
export { SortedQueue } from './queue/sorted-queue.js';
export type { UpToOptions } from './queue/sorted-queue.js';
export { TimeSortedQueue } from './queue/time-sorted-queue.js';
export type { TimeSortedQueueOptions, TimeTakeOptions } from './queue/time-sorted-queue.js';
export type { BatchSource, MaybePromise, QueueCounts, SourceClaimOptions } from './queue/batch-source.js';
export { Dispatcher } from './dispatch/dispatcher.js';
export type { DispatcherEvents, DispatcherStats, SentEvent, RetryEvent, CloseOptions } from './dispatch/dispatcher-events.js';
export type { DispatcherOptions, Endpoint, HeadersOption } from './dispatch/dispatcher-options.js';
export { createPushClient, pushClientOver } from './dispatch/push-client.js';
export type { PushClient, PushClientOptions, PublishQueue } from './dispatch/push-client.js';
export { DeadLetterList } from './dispatch/dead-letters.js';
export type { DeadLetter, DeadLetterCode, DeadLetterReason } from './dispatch/dead-letters.js';
export type { DeliveryResponse } from './dispatch/transport.js';
export type { Serializer } from './dispatch/body.js';
export type { CircuitOptions } from './dispatch/circuit.js';
export type { LatencySummary } from './dispatch/latency.js';
export { verifySignature, sign, webhookHeaders, parseSigningSecret } from './dispatch/signature.js';
export type { SignOptions, VerifyOptions, SignedHeaders, IncomingHeaders } from './dispatch/signature.js';
export {
  createRetryPolicy,
  backoffDelay,
  parseRetryAfter,
  classifyError,
  DEFAULT_RETRY_STATUSES,
  DEFAULT_RETRY_ERROR_CODES,
} from './dispatch/retry.js';
export type { RetryPolicy, RetryOptions, DeliveryFailure, BackoffOptions } from './dispatch/retry.js';
export { TimerWheel } from './timers/timer-wheel.js';
export type { TimerWheelOptions, TimerWheelStats } from './timers/timer-wheel.js';
export { DelayQueue } from './timers/delay-queue.js';
export { MemoryDelayStore } from './timers/memory-delay-store.js';
export type { MemoryDelayStoreOptions } from './timers/memory-delay-store.js';
export type {
  DelayedJob,
  ScheduleOptions,
  JobContext,
  JobHandler,
  JobRetryPolicy,
  JobDeadLetter,
  DelayQueueStats,
  DelayQueueOptions,
  DelayStore,
  JobClaim,
} from './timers/delay-queue-options.js';
