/**
 * The dispatch bench's lateness probes: a queue that notes when each due batch is claimed, and an
 * undici `Agent` that notes when each batch's request is handed to it, both against the batch's
 * due time (its oldest value's publish time + lingerMs, on the queue's monotonic clock).
 */
import { Agent, type Dispatcher as UndiciDispatcher } from 'undici';
import type { ClaimedBatch } from '../../src/queue/batch.js';
import type { ClaimOptions } from '../../src/queue/claim-options.js';
import { TimeSortedQueue, type TimeTakeOptions } from '../../src/queue/time-sorted-queue.js';
import { monotonicClock } from '../../src/time.js';

/** Lateness samples: each batch's due time and how late a moment of it came, both on the queue's (monotonic) clock. */
export class Lateness {
  readonly due: number[] = [];
  readonly late: number[] = [];

  add(due: number, at: number): void {
    this.due.push(due);
    this.late.push(at - due);
  }

  /** The samples of batches due from `from` on (`steady`), or before it. */
  split(from: number): { start: number[]; steady: number[] } {
    const start: number[] = [];
    const steady: number[] = [];
    for (let i = 0; i < this.due.length; i++) (this.due[i]! < from ? start : steady).push(this.late[i]!);
    return { start, steady };
  }
}

/** A queue that notes how late each batch is claimed; forced claims (the final flush) are not counted. */
export class TimedQueue<K, V> extends TimeSortedQueue<K, V> {
  readonly claims = new Lateness();
  /** Due time of each batch claimed, by id, for the request-start side. */
  readonly dueById = new Map<string, number>();

  override claim(maxMessages?: number, options?: ClaimOptions & TimeTakeOptions): ClaimedBatch<K, V>[] {
    const claimed = super.claim(maxMessages, options);
    if (options?.force !== true) {
      const now = this.now();
      for (const batch of claimed) {
        const due = batch.enqueuedAt + this.lingerMs;
        this.claims.add(due, now);
        this.dueById.set(batch.id, due);
      }
    }
    return claimed;
  }
}

/** An `Agent` that notes how late each request starts against its batch's due time. */
export class TimedAgent extends Agent {
  readonly starts = new Lateness();
  readonly #dueById: Map<string, number>;

  constructor(options: Agent.Options, dueById: Map<string, number>) {
    super(options);
    this.#dueById = dueById;
  }

  override dispatch(options: Agent.DispatchOptions, handler: UndiciDispatcher.DispatchHandler): boolean {
    const id = (options.headers as Record<string, string> | null | undefined)?.['webhook-id'];
    const due = id === undefined ? undefined : this.#dueById.get(id);
    if (due !== undefined) {
      this.starts.add(due, monotonicClock.now());
      this.#dueById.delete(id!);
    }
    return super.dispatch(options, handler);
  }
}

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** The smallest value with at least a share `q` (0..1) of the values at or below it. */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}
