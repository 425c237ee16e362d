/**
 * The contracts of {@link DelayQueue}: its jobs, its handler, its options (defaults and
 * validation in one place), and the {@link DelayStore} a backend implements: in memory today,
 * Redis later, with the queue and its runner unchanged.
 */
import { backoffDelay } from '../dispatch/retry.js';
import { InvalidArgumentError } from '../errors.js';
import type { MaybePromise } from '../queue/batch-source.js';
import { MAX_TIMER_DELAY_MS, monotonicClock, type Clock } from '../time.js';
import * as check from '../validate.js';

/** A job as stored, handed to the handler and returned by `get`. Frozen. */
export interface DelayedJob<P> {
  /** The caller's id (an order id, a chat id). Scheduling the same id again replaces the job. */
  readonly id: string;
  readonly payload: P;
  /** When the job is due, on the queue's clock. For a retry: when the retry is due. */
  readonly dueAt: number;
  /** 1-based number of the attempt that runs (or will run) the job: 1, then 2 for the first retry, … */
  readonly attempt: number;
}

/** When a job is due: exactly one of `delayMs` and `at`. */
export type ScheduleOptions =
  /** Milliseconds from now; finite and >= 0. Delays beyond 2^31-1 ms (24.8 days) are fine. */
  | { delayMs: number; at?: never }
  /** A time on the queue's clock, or a `Date` (read as epoch ms, which the default clock follows). A past time is due at once. */
  | { at: number | Date; delayMs?: never };

/** What a handler receives besides the job. */
export interface JobContext {
  /**
   * Aborted (with an `AbortedError`) when the job is cancelled while it runs, or when `close()`
   * stops waiting for it. The handler is never interrupted: it decides whether to stop.
   */
  readonly signal: AbortSignal;
}

/** Runs a due job. Resolving acks it (it is removed); throwing or rejecting fails the attempt. */
export type JobHandler<P> = (job: DelayedJob<P>, context: JobContext) => unknown;

/**
 * After a failed attempt: the milliseconds to wait before the next one, or `undefined` to stop
 * and dead-letter the job. `attempt` is the 1-based number of the attempt that just failed.
 */
export type JobRetryPolicy = (error: unknown, attempt: number) => number | undefined;

/** A job that failed for good, with the error of its last attempt. */
export interface JobDeadLetter<P> {
  readonly job: DelayedJob<P>;
  readonly error: unknown;
  /** When it was dead-lettered, on the queue's clock. */
  readonly at: number;
}

/** Counters of a {@link DelayQueue} since it was created, and the handlers running now. */
export interface DelayQueueStats {
  /** Calls to `schedule` that stored a job (replacements included). */
  scheduled: number;
  /** Calls to `cancel` that removed a pending job or cancelled a running one. */
  cancelled: number;
  /** Handlers running now. */
  running: number;
  /** Attempts whose handler resolved (the job was acked). */
  completed: number;
  /** Failed attempts put back for another try. */
  retried: number;
  /** Jobs that failed their last attempt (handed to `onDeadLetter`, or kept in the list). */
  deadLettered: number;
}

/** A job claimed from a {@link DelayStore} by one runner; pass it back to `ack` or `nack`. */
export interface JobClaim<P> {
  readonly job: DelayedJob<P>;
  /** The store's proof of this claim (a lease token). Opaque to the queue. */
  readonly token: string;
}

/**
 * Where a {@link DelayQueue} keeps its jobs. Every method may answer synchronously (in memory)
 * or with a promise (a network store); the queue awaits each one.
 *
 * A store holds at most one pending job per id, and hands a job to one claim at a time: while a
 * job is claimed, a new schedule of its id waits until the claim is settled.
 */
export interface DelayStore<P> {
  /** Stores `job`, replacing the pending job with its id. @throws QueueFullError at the store's bound, storing nothing. */
  schedule(job: DelayedJob<P>): MaybePromise<void>;
  /** Removes the pending job with this id (a claimed one stays claimed); whether there was one. */
  cancel(id: string): MaybePromise<boolean>;
  /** The pending job with this id, else the claimed one, else `undefined`. */
  get(id: string): MaybePromise<DelayedJob<P> | undefined>;
  /** Jobs held: pending plus claimed. */
  size(): MaybePromise<number>;
  /** Claims at most `limit` jobs due by `now`, earliest due first, equal due times in schedule order. */
  claimDue(now: number, limit: number): MaybePromise<JobClaim<P>[]>;
  /** Removes a claimed job for good. */
  ack(claim: JobClaim<P>): MaybePromise<void>;
  /**
   * Replaces a claimed job by `retry` (same id, next attempt, later due time), unless its id was
   * scheduled again while it was claimed: then that schedule stands and the claim is just removed.
   * Whether `retry` was stored.
   */
  nack(claim: JobClaim<P>, retry: DelayedJob<P>): MaybePromise<boolean>;
  /**
   * When the queue should look at the store next: the next pending, unclaimed job's due time
   * (possibly in the past), or an earlier moment when something else may become claimable then
   * (a network store: another worker's lease running out); `undefined` when there is none.
   */
  nextDueAt(): MaybePromise<number | undefined>;
  /**
   * Optional, for stores shared between processes: calls `listener` when the next due time may
   * have become earlier because of another process (a schedule elsewhere, a lease that will
   * expire), or when such news may have been missed (a reconnect). The queue then reads
   * `nextDueAt()` again and re-arms its timer if the answer is earlier, so it sleeps until the next
   * due time instead of polling. Returns the unsubscribe function. A store used by one queue only
   * (the in-memory one) needs none: every schedule goes through that queue.
   */
  onWake?(listener: () => void): () => void;
}

/** Options of {@link DelayQueue}. */
export interface DelayQueueOptions<P> {
  /** Runs each due job. Required. */
  handler: JobHandler<P>;
  /** Handlers running at once, over all jobs (a job id never runs twice at once). @default 10 */
  concurrency?: number;
  /**
   * Most due jobs claimed in one go, and run between two turns of the event loop: 100,000 jobs
   * due at one instant are taken in batches of this many, with I/O in between.
   * @default 1000
   */
  batchSize?: number;
  /** Attempts in total, the first included; 1 means never retry. Ignored with `retryPolicy`. @default 8 */
  maxAttempts?: number;
  /** Shortest wait before a retry, and the base of its exponential backoff. Ignored with `retryPolicy`. @default 500 */
  minDelayMs?: number;
  /**
   * Longest wait before a retry (ignored by a `retryPolicy`). Also the pause before a job that
   * could not be dead-lettered (the list is full) is tried again, and before the runner tries a
   * failing store again. At most 2^31-1.
   * @default 60_000
   */
  maxDelayMs?: number;
  /**
   * Your own retry policy, `(error, attempt) => delayMs | undefined` (`undefined`: dead-letter).
   * @default backoffDelay(attempt, { minDelayMs, maxDelayMs }) while attempt < maxAttempts
   */
  retryPolicy?: JobRetryPolicy;
  /**
   * Receives each job that failed for good, with the last error. If it throws, the error goes to
   * `onError` and the job is kept in the dead-letter list instead.
   * @default none: dead letters are kept in the list (see `takeDeadLetters()`)
   */
  onDeadLetter?: (job: DelayedJob<P>, error: unknown) => unknown;
  /**
   * Bound of the in-memory dead-letter list. When it is full, a job that failed for good stays
   * scheduled and is tried again after `maxDelayMs`: nothing is dropped.
   * @default 1000
   */
  maxDeadLetters?: number;
  /** Receives errors of the store (a lost connection) and of `onDeadLetter`. @default process.emitWarning */
  onError?: (error: unknown) => void;
  /** Where jobs are kept. @default an in-memory `MemoryDelayStore` bounded by `maxJobs` */
  store?: DelayStore<P>;
  /**
   * Bound of the default in-memory store: jobs held, pending plus running. Beyond it `schedule`
   * rejects with `QueueFullError`. Not allowed with `store` (bound your store instead).
   * @default Infinity
   */
  maxJobs?: number;
  /**
   * Whether the wake-up timer keeps the process alive while jobs are scheduled, as a plain
   * `setTimeout` would. Either way there is no timer at all while the queue holds no jobs.
   * @default false
   */
  ref?: boolean;
  /** The clock due times are measured on. @default monotonicClock */
  clock?: Clock;
}

/** {@link DelayQueueOptions} with every default applied. */
export interface ResolvedDelayQueueOptions<P> {
  handler: JobHandler<P>;
  concurrency: number;
  batchSize: number;
  maxDelayMs: number;
  retryPolicy: JobRetryPolicy;
  onDeadLetter: ((job: DelayedJob<P>, error: unknown) => unknown) | undefined;
  maxDeadLetters: number;
  onError: (error: unknown) => void;
  store: DelayStore<P> | undefined;
  maxJobs: number;
  ref: boolean;
  clock: Clock;
}

/** What a store must implement, checked when one is passed. */
const STORE_METHODS = ['schedule', 'cancel', 'get', 'size', 'claimDue', 'ack', 'nack', 'nextDueAt'] as const;

/** Applies defaults and validates; throws `InvalidArgumentError` naming the first bad option. */
export function resolveDelayQueueOptions<P>(options: DelayQueueOptions<P>): ResolvedDelayQueueOptions<P> {
  const o = check.optionsObject('options', options);
  const maxAttempts = check.positiveInteger('options.maxAttempts', o.maxAttempts ?? 8);
  const minDelayMs = check.nonNegativeNumber('options.minDelayMs', o.minDelayMs ?? 500);
  const maxDelayMs = o.maxDelayMs ?? 60_000;
  if (typeof maxDelayMs !== 'number' || !(maxDelayMs >= minDelayMs && maxDelayMs <= MAX_TIMER_DELAY_MS)) {
    throw new InvalidArgumentError('options.maxDelayMs', `a number from minDelayMs (${minDelayMs}) to 2^31-1`, maxDelayMs);
  }
  const resolved: ResolvedDelayQueueOptions<P> = {
    handler: check.func('options.handler', o.handler),
    concurrency: check.positiveInteger('options.concurrency', o.concurrency ?? 10),
    batchSize: check.positiveInteger('options.batchSize', o.batchSize ?? 1000),
    maxDelayMs,
    retryPolicy:
      o.retryPolicy === undefined
        ? defaultRetryPolicy(maxAttempts, minDelayMs, maxDelayMs)
        : check.func('options.retryPolicy', o.retryPolicy),
    onDeadLetter: o.onDeadLetter === undefined ? undefined : check.func('options.onDeadLetter', o.onDeadLetter),
    maxDeadLetters: check.positiveInteger('options.maxDeadLetters', o.maxDeadLetters ?? 1000),
    onError: o.onError === undefined ? emitWarning : check.func('options.onError', o.onError),
    store: o.store,
    maxJobs: check.positiveLimit('options.maxJobs', o.maxJobs ?? Infinity),
    ref: check.boolean('options.ref', o.ref ?? false),
    clock: o.clock ?? monotonicClock,
  };
  if (typeof resolved.clock !== 'object' || resolved.clock === null || typeof resolved.clock.now !== 'function') {
    throw new InvalidArgumentError('options.clock', 'an object with a now() method', resolved.clock);
  }
  if (o.store !== undefined) {
    const store = o.store as unknown as Record<string, unknown>;
    const missing = STORE_METHODS.find((name) => typeof store?.[name] !== 'function');
    if (missing !== undefined) throw new InvalidArgumentError('options.store', `a DelayStore (with ${missing}())`, o.store);
    if (store['onWake'] !== undefined && typeof store['onWake'] !== 'function') {
      throw new InvalidArgumentError('options.store', 'a DelayStore (whose onWake, if any, is a function)', o.store);
    }
    if (o.maxJobs !== undefined) throw new InvalidArgumentError('options.maxJobs', 'unset when options.store is given', o.maxJobs);
  }
  return resolved;
}

/** Exponential backoff with jitter (see `backoffDelay`) until `maxAttempts` attempts were made. */
function defaultRetryPolicy(maxAttempts: number, minDelayMs: number, maxDelayMs: number): JobRetryPolicy {
  return (_error, attempt) => (attempt < maxAttempts ? backoffDelay(attempt, { minDelayMs, maxDelayMs }) : undefined);
}

function emitWarning(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(`DelayQueue: ${String(error)}`));
}
