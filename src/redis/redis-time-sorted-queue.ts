/** RedisTimeSortedQueue: the TimeSortedQueue's semantics, with its data in Redis and the server's clock. */
import type { ClaimOptions } from '../queue/claim-options.js';
import type { Batch, ClaimedBatch } from '../queue/batch.js';
import type { BatchSource } from '../queue/batch-source.js';
import type { TimeTakeOptions } from '../queue/time-sorted-queue.js';
import * as check from '../validate.js';
import { RedisBatchQueue } from './redis-batch-queue.js';
import type { RedisTimeSortedQueueOptions } from './redis-queue-options.js';

/**
 * Per-key batches released when due, kept in Redis. A key is due `lingerMs` after its oldest
 * pending value was published, or as soon as it holds `maxBatchSize` values. Due times come
 * from the Redis server's clock (`TIME`), so processes whose clocks disagree still agree on
 * what is due. `claim` returns due keys only; `nextDueIn()` says when the next one is due.
 */
export class RedisTimeSortedQueue<K extends string = string, V = unknown>
  extends RedisBatchQueue<K, V>
  implements BatchSource<K, V>
{
  /** The window, in milliseconds. */
  readonly lingerMs: number;

  /** @throws InvalidArgumentError for a bad option. */
  constructor(options: RedisTimeSortedQueueOptions<V>) {
    const lingerMs = check.nonNegativeNumber('options.lingerMs', options?.lingerMs ?? 1000);
    super(options, 't', lingerMs);
    this.lingerMs = lingerMs;
  }

  /**
   * Appends `value` to `key`'s pending values. Publishes of one tick go to Redis together, one
   * script call per shard; the promise settles once this one is stored (or refused).
   *
   * @throws InvalidArgumentError for a non-string key, an undefined or oversized value
   * @throws QueueFullError when the queue holds `maxPending` values; nothing is stored
   * @throws QueueClosedError after `close()`
   * @throws CodecError when the codec cannot encode the value
   * @throws StoreError when Redis cannot be reached or the script fails; nothing is stored
   */
  async publish(key: K, value: V): Promise<void> {
    await this.add('', key, value);
  }

  /** Removes and returns due batches (with `force`, due or not); see the in-memory `pull`. */
  pull(maxMessages?: number, options?: TimeTakeOptions): Promise<Batch<K, V>[]> {
    return this.takeUpTo('pull', maxMessages, upTo(options));
  }

  /** Claims due batches (with `force`, due or not); see the in-memory `claim`. */
  claim(maxMessages?: number, options?: ClaimOptions & TimeTakeOptions): Promise<ClaimedBatch<K, V>[]> {
    return this.takeUpTo('claim', maxMessages, upTo(options), options);
  }

  /** Everything pending, due or not, in place order (for shutdown). */
  drain(maxMessages?: number): Promise<Batch<K, V>[]> {
    return this.takeUpTo('pull', maxMessages, '');
  }
}

function upTo(options: TimeTakeOptions | undefined): string {
  return check.boolean('options.force', check.optionsObject('options', options).force ?? false) ? '' : 'now';
}
