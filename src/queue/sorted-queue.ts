/**
 * SortedQueue: values published per key, keys taken in order of a sort key of your choice.
 */
import { InvalidArgumentError } from '../errors.js';
import * as check from '../validate.js';
import type { Batch, ClaimedBatch } from './batch.js';
import { BatchQueue } from './batch-queue.js';
import type { ClaimOptions } from './claim-options.js';
import { compareNumbers, type Comparator, type SortedQueueOptions } from './queue-options.js';

/** Options of `pull` and `claim` on a {@link SortedQueue}. */
export interface UpToOptions<S> {
  /** Take only keys whose place is at most this sort key (e.g. a due time). @default no bound */
  upTo?: S;
}

/**
 * A queue of per-key batches ordered by sort key. A key has one place: the smallest sort key
 * among its pending values, ties kept in publish order. `pull` and `claim` hand keys out in
 * place order, as one batch per key.
 *
 * Without a `compare` option, sort keys are numbers; with one, anything but `undefined`.
 * Every key is claimable at once: for batches that become due with time, see `TimeSortedQueue`.
 *
 * @typeParam S - sort key (number by default)
 * @typeParam K - key, e.g. a customer id (any value but `null`/`undefined`; compared as `Map` keys)
 * @typeParam V - value (anything but `undefined`)
 */
export class SortedQueue<S = number, K = string, V = unknown> extends BatchQueue<S, K, V> {
  readonly #custom: Comparator<S> | undefined;

  /** @throws InvalidArgumentError for a bad option. */
  constructor(options?: SortedQueueOptions<S, V>) {
    const compare = options?.compare;
    if (compare !== undefined && typeof compare !== 'function') {
      throw new InvalidArgumentError('options.compare', 'a function', compare);
    }
    super(options, compare ?? (compareNumbers as unknown as Comparator<S>), compare === undefined);
    this.#custom = compare;
  }

  /**
   * Appends `value` to `key`'s pending values. O(1) when the key has pending values and
   * `sortKey` is not smaller than its place; O(log n) when the key is new or moves earlier.
   *
   * @throws InvalidArgumentError for an undefined or NaN sort key, a null or undefined key, an undefined value
   * @throws QueueFullError when the queue holds `maxPending` values; nothing is stored
   * @throws QueueClosedError after `close()`
   */
  publish(sortKey: S, key: K, value: V): void {
    this.#checkSortKey(sortKey);
    this.add(sortKey, key, value);
  }

  /**
   * Removes and returns batches in place order; see {@link BatchQueue.pull} for the
   * `maxMessages` rules. With `upTo`, only keys whose place is at most `upTo`.
   */
  override pull(maxMessages?: number, options?: UpToOptions<S>): Batch<K, V>[] {
    return this.pullUpTo(maxMessages, this.#upTo(options));
  }

  /** Claims batches in place order; see {@link BatchQueue.claim}. With `upTo`, only keys whose place is at most `upTo`. */
  override claim(maxMessages?: number, options?: ClaimOptions & UpToOptions<S>): ClaimedBatch<K, V>[] {
    return this.claimUpTo(maxMessages, this.#upTo(options), options);
  }

  /** Every key here is claimable at once, so a key placed now is due now. */
  protected override dueAtOf(): number {
    return this.now();
  }

  /**
   * When something next becomes claimable: now if a key is, else when a deferred key or an
   * expired lease comes back; `undefined` when nothing will.
   */
  override nextDueAt(): number | undefined {
    const now = this.tick();
    return this.head() === undefined ? this.nextReturnAt() : now;
  }

  #upTo(options: UpToOptions<S> | undefined): S | undefined {
    const upTo = check.optionsObject('options', options).upTo;
    if (upTo !== undefined) this.#checkSortKey(upTo, 'options.upTo');
    return upTo;
  }

  #checkSortKey(sortKey: S, name = 'sortKey'): void {
    if (sortKey === undefined) throw new InvalidArgumentError(name, 'a sort key other than undefined', sortKey);
    if (this.#custom === undefined) {
      if (typeof sortKey !== 'number' || Number.isNaN(sortKey)) {
        throw new InvalidArgumentError(name, 'a number other than NaN (or pass options.compare)', sortKey);
      }
    } else if (this.#custom(sortKey, sortKey) !== 0) {
      // A comparator that does not find a value equal to itself (NaN inside, say) would corrupt the index.
      throw new InvalidArgumentError(name, 'a sort key that options.compare finds equal to itself', sortKey);
    }
  }
}
