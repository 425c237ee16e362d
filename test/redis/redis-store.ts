/** RedisSortedQueue as a conformance {@link StoreUnderTest}, on a shared client with a fresh prefix per run. */
import type { Redis } from 'ioredis';
import { RedisSortedQueue } from '../../src/redis/index.js';
import type { StoreFactory } from '../conformance/store.js';
import { cleanup, uniquePrefix } from './redis-helper.js';

export function redisStore(client: Redis, shards = 1): StoreFactory {
  return ({ clock, leaseMs, maxBatchSize, perKeyOrder }) => {
    const prefix = uniquePrefix('conformance');
    const queue = new RedisSortedQueue<string, number>({ redis: client, prefix, shards, clock, leaseMs, maxBatchSize, perKeyOrder });
    return {
      publish: (sortKey, key, value) => queue.publish(sortKey, key, value),
      pull: (max) => queue.pull(max),
      claim: (max) => queue.claim(max),
      ack: (batch) => queue.ack(batch),
      nack: (batch, options) => queue.nack(batch, options),
      remove: (key) => queue.remove(key),
      counts: () => queue.counts(),
      entries: () => queue.entries(),
      checkInvariants: () => queue.checkInvariants(),
      dispose: async () => {
        await queue.quit();
        await cleanup(client, prefix);
      },
    };
  };
}
