/**
 * DelayQueue: one job per id, run once when it is due. "Cancel an order 30 minutes after
 * creation unless it was paid"; "close the chat 30 minutes after the last reply".
 *
 * The queue keeps its jobs in a {@link DelayStore} (in memory: {@link MemoryDelayStore}, over the
 * core `SortedQueue`) and runs them with one wake-up timer armed at the next due time. It never
 * polls: the timer is re-armed when a schedule or cancel moves the next due time, or when a
 * shared store's `onWake` says another process may have made it earlier, and there is no timer
 * at all while no job is held.
 */
import { AbortedError, InvalidArgumentError, QueueClosedError } from '../errors.js';
import type { MaybePromise } from '../queue/batch-source.js';
import { setLongTimeout, type Clock, type LongTimeout } from '../time.js';
import * as check from '../validate.js';
import {
  resolveDelayQueueOptions,
  type DelayedJob,
  type DelayQueueOptions,
  type DelayQueueStats,
  type DelayStore,
  type JobClaim,
  type JobDeadLetter,
  type ResolvedDelayQueueOptions,
  type ScheduleOptions,
} from './delay-queue-options.js';
import { MemoryDelayStore } from './memory-delay-store.js';

/** A handler running now. */
interface Run<P> {
  readonly claim: JobClaim<P>;
  readonly controller: AbortController;
  /** `cancel(id)` was called while it ran: it is neither retried nor dead-lettered. */
  cancelled: boolean;
}

/**
 * Runs one job per id at its due time: `schedule(id, payload, { delayMs } | { at })` stores or
 * replaces it, `cancel(id)` removes it, `handler(job)` runs it when due.
 *
 * - A job is removed only once its handler resolves. A handler that throws is retried with
 *   backoff (`maxAttempts`, `minDelayMs`, `maxDelayMs` or `retryPolicy`), then dead-lettered:
 *   handed to `onDeadLetter`, or kept in a bounded list (`takeDeadLetters()`).
 * - At most `concurrency` handlers run at once, and a job id never runs twice at once: scheduling
 *   an id whose handler is running stores the new job, which becomes due only after that run.
 *   If the run then fails, it is not retried: the new schedule stands.
 * - Due jobs run in due order, equal due times in schedule order, claimed `batchSize` at a time
 *   with a turn of the event loop in between.
 * - The queue runs from construction (picking up jobs already in a persistent store) until
 *   `close()`. Its one timer is armed only while jobs are held, and unref'd unless `ref: true`.
 */
export class DelayQueue<P = unknown> {
  readonly #options: ResolvedDelayQueueOptions<P>;
  readonly #store: DelayStore<P>;
  readonly #clock: Clock;
  readonly #running = new Map<string, Run<P>>();
  readonly #deadLetters: JobDeadLetter<P>[] = [];
  readonly #idleWaiters: (() => void)[] = [];
  readonly #stats = { scheduled: 0, cancelled: 0, completed: 0, retried: 0, deadLettered: 0 };
  #wake: LongTimeout | undefined;
  #wakeAt: number | undefined;
  #pumping = false;
  #lastSize = 0;
  #pumpDone: Promise<void> = Promise.resolve();
  /** A schedule, cancel or finished run came in while the runner was busy: look at the store again. */
  #again = false;
  /** Jobs claimed since the runner last yielded to the event loop. */
  #claimedThisTurn = 0;
  /** The store's `onWake` called since the runner last read `nextDueAt()`: read it again. */
  #recheck = false;
  #rechecking = false;
  #unsubscribeWake: (() => void) | undefined;
  #closed = false;

  /** @throws InvalidArgumentError naming the first bad option. */
  constructor(options: DelayQueueOptions<P>) {
    this.#options = resolveDelayQueueOptions(options);
    this.#store = this.#options.store ?? new MemoryDelayStore<P>({ maxJobs: this.#options.maxJobs });
    this.#clock = this.#options.clock;
    try {
      this.#unsubscribeWake = this.#store.onWake?.(this.#onStoreWake);
    } catch (error) {
      this.#report(error); // the queue still runs what it schedules itself
    }
    this.#kick();
  }

  /**
   * Stores a job due after `delayMs`, or at `at`, replacing the pending job with this id if there
   * is one. Resolves with the stored job.
   *
   * @throws InvalidArgumentError for an empty or non-string id, or unless exactly one of
   * `delayMs` (finite, >= 0) and `at` (a finite number or a valid `Date`) is given; nothing is changed
   * @throws QueueFullError at `maxJobs`; nothing is changed
   * @throws QueueClosedError after `close()`
   */
  async schedule(id: string, payload: P, options: ScheduleOptions): Promise<DelayedJob<P>> {
    checkId(id);
    const dueAt = this.#dueAtOf(options);
    if (this.#closed) throw new QueueClosedError();
    const job: DelayedJob<P> = Object.freeze({ id, payload, dueAt, attempt: 1 });
    await this.#store.schedule(job);
    this.#stats.scheduled++;
    this.#kick();
    return job;
  }

  /**
   * Removes the pending job with this id. A job whose handler is running is not interrupted, but
   * its `signal` aborts and it is neither retried nor dead-lettered. Resolves with whether there
   * was a pending or running job.
   */
  async cancel(id: string): Promise<boolean> {
    checkId(id);
    const removed = await this.#store.cancel(id);
    const run = this.#running.get(id);
    const stopped = run !== undefined && !run.cancelled;
    if (stopped) {
      run.cancelled = true;
      run.controller.abort(new AbortedError(`job ${JSON.stringify(id)} was cancelled`));
    }
    if (removed) this.#kick(); // the next due time may have moved later, or gone
    if (removed || stopped) this.#stats.cancelled++;
    return removed || stopped;
  }

  /** The pending job with this id, else the running one, else `undefined`. */
  async get(id: string): Promise<DelayedJob<P> | undefined> {
    checkId(id);
    return this.#store.get(id);
  }

  /**
   * Jobs held: pending (waiting for their due time or a retry) plus running. Exact with an
   * in-memory store; with a remote store (Redis) it is the count read at the previous look,
   * and {@link count} reads it now.
   */
  get size(): number {
    const size = this.#store.size();
    if (!(size instanceof Promise)) return (this.#lastSize = size);
    size.then((fresh) => (this.#lastSize = fresh)).catch((error: unknown) => this.#report(error));
    return this.#lastSize;
  }

  /** Jobs held, read from the store now. */
  async count(): Promise<number> {
    return (this.#lastSize = await this.#store.size());
  }

  /** Counters since creation, and the handlers running now. */
  stats(): DelayQueueStats {
    return { ...this.#stats, running: this.#running.size };
  }

  /** Removes and returns the dead letters kept in memory, oldest first (to replay or store them elsewhere). */
  takeDeadLetters(): JobDeadLetter<P>[] {
    return this.#deadLetters.splice(0, this.#deadLetters.length);
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Stops the timer and claims no more jobs; `schedule` then rejects with `QueueClosedError`.
   * Resolves once every running handler has settled, or after `timeoutMs`: then the handlers still
   * running see their `signal` abort, and their outcome is still recorded when they finish.
   * Pending jobs stay in the store (a persistent store runs them after a restart). Idempotent.
   * @param options.timeoutMs - how long to wait for running handlers. @default Infinity
   */
  async close(options?: { timeoutMs?: number }): Promise<void> {
    const o = check.optionsObject('options', options);
    const timeoutMs = o.timeoutMs ?? Infinity;
    if (timeoutMs !== Infinity) check.nonNegativeNumber('options.timeoutMs', timeoutMs);
    this.#closed = true;
    this.#arm(undefined);
    this.#unsubscribeWake?.();
    this.#unsubscribeWake = undefined;
    await this.#pumpDone; // claims in flight become runs, which are waited for below
    if (this.#running.size === 0) return;
    await new Promise<void>((resolve) => {
      const timer = timeoutMs === Infinity ? undefined : setTimeout(() => {
        for (const run of this.#running.values()) run.controller.abort(new AbortedError('the DelayQueue was closed'));
        resolve();
      }, timeoutMs);
      timer?.unref();
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  #dueAtOf(options: ScheduleOptions): number {
    const o = check.optionsObject('options', options) as { delayMs?: unknown; at?: unknown };
    if ((o.delayMs === undefined) === (o.at === undefined)) {
      throw new InvalidArgumentError('options', 'an object with exactly one of delayMs and at', options);
    }
    if (o.delayMs !== undefined) return this.#clock.now() + check.nonNegativeNumber('options.delayMs', o.delayMs);
    const at = o.at instanceof Date ? o.at.getTime() : o.at;
    if (typeof at !== 'number' || !Number.isFinite(at)) throw new InvalidArgumentError('options.at', 'a finite number or a valid Date', o.at);
    return at;
  }

  // --- the runner -----------------------------------------------------------------------------

  /** Makes the runner look at the store: start what is due, then sleep until the next due time. */
  #kick(): void {
    if (this.#closed) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    this.#pumpDone = this.#pump();
  }

  async #pump(): Promise<void> {
    try {
      // Handlers never run inside the caller's schedule() or cancel(): start on a later microtask.
      await Promise.resolve();
      do {
        this.#again = false;
        await this.#startDue();
      } while (this.#again && !this.#closed);
    } catch (error) {
      this.#report(error);
      // The store failed (a lost connection, say): look again after maxDelayMs, not in a tight loop.
      this.#arm(this.#clock.now() + this.#options.maxDelayMs);
    } finally {
      this.#pumping = false;
      // A wake that came after the runner read nextDueAt() (or while it never got that far).
      if (this.#recheck) void this.#recheckDue();
    }
  }

  /** Claims and starts due jobs while slots are free, then arms the timer for the next one. */
  async #startDue(): Promise<void> {
    const { concurrency, batchSize } = this.#options;
    for (;;) {
      if (this.#closed) return;
      const free = concurrency - this.#running.size;
      // Every slot is busy: the next run to finish kicks the runner again.
      if (free <= 0) return;
      if (this.#claimedThisTurn >= batchSize) {
        await this.#nextTurn();
        continue;
      }
      const limit = Math.min(free, batchSize - this.#claimedThisTurn);
      const claims = await this.#store.claimDue(this.#clock.now(), limit);
      this.#claimedThisTurn += claims.length;
      for (const claim of claims) this.#start(claim);
      if (claims.length < limit) break;
    }
    this.#recheck = false; // this read sees whatever a wake so far announced
    this.#arm(await this.#store.nextDueAt());
  }

  /** Lets I/O and timers run before the next batch. */
  #nextTurn(): Promise<void> {
    return new Promise((resolve) => {
      const immediate = setImmediate(() => {
        this.#claimedThisTurn = 0;
        resolve();
      });
      if (!this.#options.ref) immediate.unref();
    });
  }

  /** Arms the one wake-up timer at `dueAt` (chained past 2^31-1 ms), or disarms it. */
  #arm(dueAt: number | undefined): void {
    if (dueAt === this.#wakeAt) return;
    this.#wake?.cancel();
    this.#wake = undefined;
    this.#wakeAt = undefined;
    if (dueAt === undefined || this.#closed) return;
    this.#wakeAt = dueAt;
    this.#wake = setLongTimeout(this.#onWake, dueAt, { clock: this.#clock, ref: this.#options.ref });
  }

  readonly #onWake = (): void => {
    this.#wake = undefined;
    this.#wakeAt = undefined;
    this.#claimedThisTurn = 0;
    this.#kick();
  };

  /**
   * The store's `onWake`: another process may have made the next due time earlier. Reads
   * `nextDueAt()` once (a burst of wakes shares one read in flight and one after it) and re-arms
   * if the answer is earlier; a runner busy at the time reads it itself, or again when it is done.
   */
  readonly #onStoreWake = (): void => {
    if (this.#closed) return;
    this.#recheck = true;
    if (!this.#pumping) void this.#recheckDue();
  };

  async #recheckDue(): Promise<void> {
    if (this.#rechecking) return; // the loop below sees #recheck
    this.#rechecking = true;
    try {
      while (this.#recheck && !this.#pumping && !this.#closed) {
        this.#recheck = false;
        const dueAt = await this.#store.nextDueAt();
        // Only ever earlier: a later answer may be stale against what the runner read meanwhile,
        // and an early wake-up costs one look at the store, a late one a late job.
        if (dueAt !== undefined && (this.#wakeAt === undefined || dueAt < this.#wakeAt)) this.#arm(dueAt);
      }
    } catch (error) {
      this.#report(error);
      // As the runner does when the store fails: look again after maxDelayMs at the latest.
      const retryAt = this.#clock.now() + this.#options.maxDelayMs;
      if (this.#wakeAt === undefined || retryAt < this.#wakeAt) this.#arm(retryAt);
    } finally {
      this.#rechecking = false;
    }
  }

  #start(claim: JobClaim<P>): void {
    const run: Run<P> = { claim, controller: new AbortController(), cancelled: false };
    this.#running.set(claim.job.id, run);
    void this.#run(run);
  }

  async #run(run: Run<P>): Promise<void> {
    try {
      const outcome = await this.#attempt(run);
      if (outcome.ok) {
        await this.#store.ack(run.claim);
        this.#stats.completed++;
      } else {
        await this.#fail(run, outcome.error);
      }
    } catch (storeError) {
      this.#report(storeError);
    } finally {
      this.#running.delete(run.claim.job.id);
      if (this.#running.size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
      this.#kick();
    }
  }

  /** Runs the handler once; what it throws is an outcome, not an exception. */
  async #attempt(run: Run<P>): Promise<{ ok: true } | { ok: false; error: unknown }> {
    try {
      await this.#options.handler(run.claim.job, { signal: run.controller.signal });
      return { ok: true };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** Settles a failed attempt: dropped if cancelled, else retried, else dead-lettered. */
  async #fail(run: Run<P>, error: unknown): Promise<void> {
    const { claim } = run;
    if (run.cancelled) {
      await this.#store.ack(claim);
      return;
    }
    const delayMs = this.#retryDelay(error, claim.job.attempt);
    if (delayMs !== undefined) {
      if (await this.#retry(claim, delayMs)) this.#stats.retried++;
      return;
    }
    if (await this.#deadLetter(claim.job, error)) {
      this.#stats.deadLettered++;
      await this.#store.ack(claim);
      return;
    }
    // The dead-letter list is full: keep the job scheduled rather than drop it.
    await this.#retry(claim, this.#options.maxDelayMs);
  }

  /** Puts the job back as its next attempt, `delayMs` from now; false when a new schedule of its id stands instead. */
  #retry(claim: JobClaim<P>, delayMs: number): MaybePromise<boolean> {
    const { job } = claim;
    const retry = Object.freeze({ ...job, dueAt: this.#clock.now() + delayMs, attempt: job.attempt + 1 });
    return this.#store.nack(claim, retry);
  }

  /** The policy's delay; a policy that throws or answers nonsense is reported and dead-letters the job. */
  #retryDelay(error: unknown, attempt: number): number | undefined {
    try {
      const delayMs = this.#options.retryPolicy(error, attempt);
      if (delayMs === undefined || (typeof delayMs === 'number' && Number.isFinite(delayMs) && delayMs >= 0)) return delayMs;
      throw new InvalidArgumentError('options.retryPolicy(error, attempt)', 'a finite number >= 0 or undefined', delayMs);
    } catch (policyError) {
      this.#report(policyError);
      return undefined;
    }
  }

  /** Hands a dead job to `onDeadLetter`, or keeps it in the list; false when the list is full. */
  async #deadLetter(job: DelayedJob<P>, error: unknown): Promise<boolean> {
    const { onDeadLetter, maxDeadLetters } = this.#options;
    if (onDeadLetter !== undefined) {
      try {
        await onDeadLetter(job, error);
        return true;
      } catch (hookError) {
        this.#report(hookError);
      }
    }
    if (this.#deadLetters.length >= maxDeadLetters) return false;
    this.#deadLetters.push({ job, error, at: this.#clock.now() });
    return true;
  }

  #report(error: unknown): void {
    try {
      this.#options.onError(error);
    } catch (secondary) {
      process.emitWarning(secondary instanceof Error ? secondary : new Error(String(secondary)));
    }
  }
}

function checkId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidArgumentError('id', 'a non-empty string', id);
}
