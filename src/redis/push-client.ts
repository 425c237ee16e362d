/** createPushClient on Redis: a {@link RedisTimeSortedQueue} and a dispatcher over it, in one call. */
import type { CloseOptions, DispatcherStats } from '../dispatch/dispatcher-events.js';
import type { DispatcherOptions } from '../dispatch/dispatcher-options.js';
import { pushClientOver, type PushClient } from '../dispatch/push-client.js';
import * as check from '../validate.js';
import type { RedisTimeSortedQueueOptions } from './redis-queue-options.js';
import { RedisTimeSortedQueue } from './redis-time-sorted-queue.js';

/**
 * Options of the Redis {@link createPushClient}: the queue's (`prefix` (required), `redis`,
 * `shards`, `codec`, `lingerMs`, `maxBatchSize`, `maxPending`, `maxValueBytes`, `perKeyOrder`,
 * `maxCoalesce`, `clock`) and the dispatcher's (everything else, `leaseMs` included: it is the
 * lease of every claim the dispatcher makes), in one object. The in-memory queue's `sizeOf` and
 * `maxBatchBytes` have no Redis counterpart. A `clock` object serves both the queue and the
 * dispatcher; with `'server'` (the default) the dispatcher keeps its own monotonic clock.
 */
export interface RedisPushClientOptions<K extends string, V>
  extends Omit<DispatcherOptions<K, V>, 'source' | 'clock'>,
    Omit<RedisTimeSortedQueueOptions<V>, 'leaseMs'> {}

/** A Redis queue and a dispatcher, started. `publish` resolves once the record is stored in Redis. */
export interface RedisPushClient<K extends string, V> extends PushClient<K, V, Promise<void>> {
  readonly queue: RedisTimeSortedQueue<K, V>;
  /**
   * Refuses further publishes from this client, finishes (or returns to the queue) the batches
   * this dispatcher has claimed, and closes the connections the queue opened: the one made from
   * a URL and the wake subscription. A client passed in as `redis` is left open: it is yours to
   * close. Records still pending stay in Redis for the other dispatchers on the prefix, or the
   * next one to start; `await flush()` first to send them before closing. After `close()`,
   * `stats()` returns the figures read at close. Idempotent.
   */
  close(options?: CloseOptions): Promise<void>;
}

/** The options that configure the queue; the dispatcher gets the rest. */
const queueOptionNames: ReadonlySet<string> = new Set([
  'prefix', 'redis', 'shards', 'codec', 'lingerMs', 'maxBatchSize', 'maxPending', 'maxValueBytes', 'perKeyOrder', 'maxCoalesce', 'clock',
] satisfies (keyof RedisTimeSortedQueueOptions<unknown>)[]);

type SourcelessDispatcherOptions<K, V> = Omit<DispatcherOptions<K, V>, 'source'>;

/**
 * Builds a `RedisTimeSortedQueue` and a `Dispatcher` over it, and starts the dispatcher. Every
 * process that publishes to or delivers from one queue uses the same `prefix` and `shards`.
 *
 * @example
 * const client = createPushClient({ prefix: 'webhooks', endpoint: (customer) => urls.get(customer) });
 * await client.publish('customer-42', { event: 'order.paid', id: 7 });
 * await client.close();
 *
 * @throws InvalidArgumentError for a bad option (no `prefix`, no `endpoint`, …); nothing is left open
 */
export function createPushClient<K extends string = string, V = unknown>(options: RedisPushClientOptions<K, V>): RedisPushClient<K, V> {
  const o = check.optionsObject('options', options);
  const queueOptions: Record<string, unknown> = {};
  const dispatcherOptions: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(o)) {
    if (value !== undefined) (queueOptionNames.has(name) ? queueOptions : dispatcherOptions)[name] = value;
  }
  if (typeof o.clock === 'object') dispatcherOptions['clock'] = o.clock;
  const queue = new RedisTimeSortedQueue<K, V>(queueOptions as unknown as RedisTimeSortedQueueOptions<V>);
  let base: PushClient<K, V, Promise<void>>;
  try {
    base = pushClientOver(queue, dispatcherOptions as unknown as SourcelessDispatcherOptions<K, V>);
  } catch (error) {
    // The queue has started connecting: a bad dispatcher option must not leave that open.
    void queue.quit();
    throw error;
  }
  let closed: Promise<void> | undefined;
  let statsAtClose: DispatcherStats | undefined;
  const client: RedisPushClient<K, V> = {
    queue,
    dispatcher: base.dispatcher,
    publish: base.publish,
    flush: base.flush,
    close(closeOptions) {
      closed ??= closeAndQuit(base, queue, closeOptions).then((stats) => void (statsAtClose = stats));
      return closed;
    },
    stats: () => statsAtClose ?? base.stats(),
    on(event, listener) {
      base.on(event, listener);
      return client;
    },
    replayDeadLetters: base.replayDeadLetters,
  };
  return client;
}

/** Closes the dispatcher, reads the final figures while the connection is still open, then quits the queue. */
async function closeAndQuit<K extends string, V>(
  base: PushClient<K, V, Promise<void>>,
  queue: RedisTimeSortedQueue<K, V>,
  options: CloseOptions | undefined,
): Promise<DispatcherStats> {
  try {
    await base.close(options);
    // stats() alone would give the counts of the loop's last pass; the queue's own are fresher.
    const stats = base.stats();
    const counts = await queue.counts().catch(() => undefined);
    return counts === undefined ? stats : { ...stats, pending: counts.pending, pendingKeys: counts.keys, claimed: counts.claimed };
  } finally {
    await queue.quit();
  }
}
