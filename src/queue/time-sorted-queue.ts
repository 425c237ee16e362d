/**
 * TimeSortedQueue: the clock as the sort key. A key's batch is due `lingerMs` after its oldest
 * pending value, or at once when it is full.
 */
import * as check from '../validate.js';
import type { Batch, ClaimedBatch } from './batch.js';
import { BatchQueue } from './batch-queue.js';
import type { ClaimOptions } from './claim-options.js';
import { compareNumbers, type BatchQueueOptions } from './queue-options.js';

/** Options of {@link TimeSortedQueue}. */
export interface TimeSortedQueueOptions<V> extends BatchQueueOptions<V> {
  /**
   * How long a key collects values before its batch is due, from its oldest pending value
   * ("after the window, send all the customer produced in it").
   * @default 1000
   */
  lingerMs?: number;
}

/** Options of `pull` and `claim` on a {@link TimeSortedQueue}. */
export interface TimeTakeOptions {
  /** Take keys whether due or not (shutdown, flush). @default false */
  force?: boolean;
}

/**
 * Per-key batches released when due. A key is due when its oldest pending value is
 * `lingerMs` old, or as soon as it holds `maxBatchSize` values or `maxBatchBytes` bytes.
 * `pull` and `claim` return due keys only; `nextDueAt()` says when the next one is due.
 *
 * Time comes from the injected `clock` (default: monotonic, so a wall-clock step neither
 * releases nor holds batches). Internally a key's sort key is its due time.
 */
export class TimeSortedQueue<K = string, V = unknown> extends BatchQueue<number, K, V> {
  /** The window, in milliseconds. */
  readonly lingerMs: number;

  /** @throws InvalidArgumentError for a bad option. */
  constructor(options?: TimeSortedQueueOptions<V>) {
    super(options, compareNumbers, true);
    this.lingerMs = check.nonNegativeNumber('options.lingerMs', options?.lingerMs ?? 1000);
  }

  /**
   * Appends `value` to `key`'s pending values. O(1) for a key that already has pending values
   * (O(log n) for a new key, or when the value fills the batch and makes the key due now).
   *
   * @throws InvalidArgumentError for a null or undefined key, an undefined value
   * @throws QueueFullError when the queue holds `maxPending` values; nothing is stored
   * @throws QueueClosedError after `close()`
   */
  publish(key: K, value: V): void {
    // A key collecting values keeps its place: the clock only moves on, so a new value's due time
    // is never earlier. Only a new key (or a new run of one) needs the clock.
    let state = this.appendToRun(key, value);
    if (state === undefined) {
      const now = this.now();
      state = this.add(now + this.lingerMs, key, value, now);
    }
    const { maxBatchSize, maxBatchBytes } = this.options;
    if (state.values.length >= maxBatchSize || (state.extra?.bytes ?? 0) >= maxBatchBytes) this.advance(state, this.now());
  }

  /** Removes and returns due batches; see {@link BatchQueue.pull} for the `maxMessages` rules. */
  override pull(maxMessages?: number, options?: TimeTakeOptions): Batch<K, V>[] {
    return this.pullUpTo(maxMessages, this.#upTo(options));
  }

  /** Claims due batches; see {@link BatchQueue.claim}. */
  override claim(maxMessages?: number, options?: ClaimOptions & TimeTakeOptions): ClaimedBatch<K, V>[] {
    return this.claimUpTo(maxMessages, this.#upTo(options), options);
  }

  /** Everything pending, due or not, in place order (for shutdown). */
  drain(maxMessages?: number): Batch<K, V>[] {
    return this.pullUpTo(maxMessages, undefined);
  }

  /**
   * When the next key is due, on the queue's clock (an absolute time, in the past if one is due
   * already), counting deferred keys and expiring leases; `undefined` when nothing is pending or claimed.
   */
  override nextDueAt(): number | undefined {
    this.tick();
    const head = this.head()?.sortKey;
    const back = this.nextReturnAt();
    if (head === undefined) return back;
    return back === undefined ? head : Math.min(head, back);
  }

  protected override dueAtOf(sortKey: number): number {
    return sortKey;
  }

  #upTo(options: TimeTakeOptions | undefined): number | undefined {
    const force = check.boolean('options.force', check.optionsObject('options', options).force ?? false);
    return force ? undefined : this.now();
  }
}
