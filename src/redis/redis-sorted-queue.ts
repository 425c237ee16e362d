/** RedisSortedQueue: the SortedQueue's semantics, with its data in Redis, shared by many processes. */
import { InvalidArgumentError } from '../errors.js';
import type { ClaimOptions } from '../queue/claim-options.js';
import type { Batch, ClaimedBatch } from '../queue/batch.js';
import type { UpToOptions } from '../queue/sorted-queue.js';
import * as check from '../validate.js';
import { RedisBatchQueue } from './redis-batch-queue.js';
import type { RedisQueueOptions } from './redis-queue-options.js';
import { numberArg } from './replies.js';

/**
 * A queue of per-key batches ordered by a numeric sort key, kept in Redis. A key has one place:
 * the smallest sort key among its pending values, ties in publish order. `pull` and `claim`
 * hand keys out in place order, one batch per key.
 *
 * Sort keys are numbers only (any double but NaN; ±Infinity too): Redis orders them, and a
 * comparator cannot run on the server.
 *
 * @typeParam K - key, e.g. a customer id (a string)
 * @typeParam V - value (anything the codec encodes; not `undefined`)
 */
export class RedisSortedQueue<K extends string = string, V = unknown> extends RedisBatchQueue<K, V> {
  /** @throws InvalidArgumentError for a bad option. */
  constructor(options: RedisQueueOptions<V>) {
    super(options, 's', 0);
  }

  /**
   * Appends `value` to `key`'s pending values. Publishes of one tick go to Redis together, one
   * script call per shard; the promise settles once this one is stored (or refused).
   *
   * @throws InvalidArgumentError for a NaN or non-number sort key, a non-string key, an undefined or oversized value
   * @throws QueueFullError when the queue holds `maxPending` values; nothing is stored
   * @throws QueueClosedError after `close()`
   * @throws CodecError when the codec cannot encode the value
   * @throws StoreError when Redis cannot be reached or the script fails; nothing is stored
   */
  async publish(sortKey: number, key: K, value: V): Promise<void> {
    checkSortKey(sortKey);
    await this.add(numberArg(sortKey), key, value);
  }

  /** Removes and returns batches in place order (see the in-memory `pull`); with `upTo`, only keys placed at most there. */
  pull(maxMessages?: number, options?: UpToOptions<number>): Promise<Batch<K, V>[]> {
    return this.takeUpTo('pull', maxMessages, this.#upTo(options));
  }

  /** Claims batches in place order (see the in-memory `claim`); with `upTo`, only keys placed at most there. */
  claim(maxMessages?: number, options?: ClaimOptions & UpToOptions<number>): Promise<ClaimedBatch<K, V>[]> {
    return this.takeUpTo('claim', maxMessages, this.#upTo(options), options);
  }

  #upTo(options: UpToOptions<number> | undefined): string {
    const upTo = check.optionsObject('options', options).upTo;
    if (upTo === undefined) return '';
    checkSortKey(upTo, 'options.upTo');
    return numberArg(upTo);
  }
}

function checkSortKey(sortKey: unknown, name = 'sortKey'): void {
  if (typeof sortKey !== 'number' || Number.isNaN(sortKey)) {
    throw new InvalidArgumentError(name, 'a number other than NaN (Redis queues take numeric sort keys)', sortKey);
  }
}
