/** createPushClient: a queue and a dispatcher in one call. */
import type { BatchSource } from '../queue/batch-source.js';
import { TimeSortedQueue, type TimeSortedQueueOptions } from '../queue/time-sorted-queue.js';
import * as check from '../validate.js';
import { Dispatcher } from './dispatcher.js';
import type { CloseOptions, DispatcherEvents, DispatcherStats } from './dispatcher-events.js';
import type { DispatcherOptions } from './dispatcher-options.js';

/** A queue a push client can publish to: a `TimeSortedQueue`, or a Redis one. */
export type PublishQueue<K, V, P> = BatchSource<K, V> & { publish(key: K, value: V): P };

/**
 * Options of {@link createPushClient}: the queue's (`lingerMs`, `maxBatchSize`, `maxBatchBytes`,
 * `sizeOf`, `maxPending`, `perKeyOrder`) and the dispatcher's (everything else), in one object.
 * `clock` serves both.
 */
export interface PushClientOptions<K, V> extends Omit<DispatcherOptions<K, V>, 'source'>, Omit<TimeSortedQueueOptions<V>, 'leaseMs'> {}

/** A queue and a dispatcher, started. */
export interface PushClient<K, V, P = void> {
  readonly queue: PublishQueue<K, V, P>;
  readonly dispatcher: Dispatcher<K, V>;
  /**
   * Queues `value` for `key`; it goes out with the key's batch when the batch is due.
   * @throws QueueFullError at `maxPending`, QueueClosedError after `close()`, InvalidArgumentError for bad input
   */
  publish(key: K, value: V): P;
  /** Sends everything pending now and resolves once all of it is acked or dead-lettered. */
  flush(): Promise<void>;
  /** Stops accepting publishes, delivers what is pending, and dead-letters what is left after `timeoutMs`. */
  close(options?: CloseOptions): Promise<void>;
  /** The dispatcher's counters and latency percentiles; see `Dispatcher.stats()`. */
  stats(): DispatcherStats;
  /** Listens to the dispatcher's events. */
  on<E extends keyof DispatcherEvents<K, V>>(event: E, listener: (...args: DispatcherEvents<K, V>[E]) => void): PushClient<K, V, P>;
  /** Publishes the values of the dead letters kept in memory again (after fixing the endpoint, say); returns how many values. */
  replayDeadLetters(): Promise<number>;
}

const queueOptionNames = ['lingerMs', 'maxBatchSize', 'maxBatchBytes', 'sizeOf', 'maxPending', 'perKeyOrder', 'clock'] as const;

/**
 * Builds a `TimeSortedQueue` and a `Dispatcher` over it, and starts the dispatcher.
 *
 * @example
 * const client = createPushClient({ endpoint: (customer) => urls.get(customer), lingerMs: 1000 });
 * client.publish('customer-42', { event: 'order.paid', id: 7 });
 * await client.close();
 */
export function createPushClient<K = string, V = unknown>(options: PushClientOptions<K, V>): PushClient<K, V> {
  const o = check.optionsObject('options', options);
  const queueOptions: TimeSortedQueueOptions<V> = {};
  for (const name of queueOptionNames) if (o[name] !== undefined) Object.assign(queueOptions, { [name]: o[name] });
  return pushClientOver(new TimeSortedQueue<K, V>(queueOptions), o as PushClientOptions<K, V>);
}

/** A push client over a queue built elsewhere (the Redis entry point uses it). */
export function pushClientOver<K, V, P>(queue: PublishQueue<K, V, P>, options: Omit<DispatcherOptions<K, V>, 'source'>): PushClient<K, V, P> {
  const dispatcher = new Dispatcher<K, V>({ ...options, source: queue }).start();
  const client: PushClient<K, V, P> = {
    queue,
    dispatcher,
    publish: (key, value) => queue.publish(key, value),
    flush: () => dispatcher.flush(),
    close: (closeOptions) => dispatcher.close(closeOptions),
    stats: () => dispatcher.stats(),
    on(event, listener) {
      dispatcher.on(event, listener as never);
      return client;
    },
    async replayDeadLetters() {
      let count = 0;
      for (const letter of dispatcher.deadLetters.take()) {
        for (const value of letter.values) {
          await queue.publish(letter.key, value);
          count++;
        }
      }
      return count;
    },
  };
  return client;
}
