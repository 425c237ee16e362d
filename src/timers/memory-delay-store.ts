/** The in-memory {@link DelayStore}, over the core `SortedQueue`. */
import { UnknownBatchError } from '../errors.js';
import type { ClaimedBatch } from '../queue/batch.js';
import { SortedQueue } from '../queue/sorted-queue.js';
import * as check from '../validate.js';
import type { DelayedJob, DelayStore, JobClaim } from './delay-queue-options.js';

/**
 * Claims live in the process that runs them, so an in-memory lease has nothing to guard against
 * but a handler running long, which must not be handed out twice: it never runs out.
 */
const IN_PROCESS_LEASE_MS = 2 ** 52;

/** Options of {@link MemoryDelayStore}. */
export interface MemoryDelayStoreOptions {
  /** Bound on the jobs held, pending plus claimed; a schedule beyond it throws `QueueFullError`. @default Infinity */
  maxJobs?: number;
}

/**
 * The in-memory {@link DelayStore}: a `SortedQueue` keyed by job id, sorted by due time (equal
 * due times in schedule order), plus a `Map` per id for `get`. Synchronous; O(log n) per job.
 */
export class MemoryDelayStore<P> implements DelayStore<P> {
  readonly #queue: SortedQueue<number, string, DelayedJob<P>>;
  readonly #pending = new Map<string, DelayedJob<P>>();
  readonly #claimed = new Map<string, ClaimedBatch<string, DelayedJob<P>>>();

  constructor(options?: MemoryDelayStoreOptions) {
    const maxJobs = check.positiveLimit('options.maxJobs', check.optionsObject('options', options).maxJobs ?? Infinity);
    // perKeyOrder: an id scheduled again while its job is claimed waits until the claim is settled.
    this.#queue = new SortedQueue({ maxPending: maxJobs, leaseMs: IN_PROCESS_LEASE_MS, perKeyOrder: true });
  }

  schedule(job: DelayedJob<P>): void {
    // Removing first frees the replaced job's place, so a replacement never meets the bound.
    this.#queue.remove(job.id);
    this.#queue.publish(job.dueAt, job.id, job);
    this.#pending.set(job.id, job);
  }

  cancel(id: string): boolean {
    this.#pending.delete(id);
    return this.#queue.remove(id).length > 0;
  }

  get(id: string): DelayedJob<P> | undefined {
    return this.#pending.get(id) ?? this.#claimed.get(id)?.values[0];
  }

  size(): number {
    return this.#queue.size + this.#queue.claimedCount;
  }

  claimDue(now: number, limit: number): JobClaim<P>[] {
    return this.#queue.claim(limit, { upTo: now }).map((batch) => {
      // One pending job per id, so every batch holds exactly one job.
      const job = batch.values[0] as DelayedJob<P>;
      this.#pending.delete(job.id);
      this.#claimed.set(job.id, batch);
      return { job, token: batch.token };
    });
  }

  ack(claim: JobClaim<P>): void {
    this.#queue.ack(this.#batchOf(claim), { token: claim.token });
    this.#claimed.delete(claim.job.id);
  }

  nack(claim: JobClaim<P>, retry: DelayedJob<P>): boolean {
    this.ack(claim);
    if (this.#pending.has(retry.id)) return false;
    this.schedule(retry);
    return true;
  }

  nextDueAt(): number | undefined {
    return this.#queue.peek()?.sortKey;
  }

  #batchOf(claim: JobClaim<P>): ClaimedBatch<string, DelayedJob<P>> {
    const batch = this.#claimed.get(claim.job.id);
    if (batch === undefined) throw new UnknownBatchError(claim.job.id);
    return batch;
  }
}
