/** The in-memory SortedQueue as a {@link StoreUnderTest}: every call answers synchronously. */
import { SortedQueue } from '../../src/index.js';
import type { StoreFactory } from './store.js';

export const memoryStore: StoreFactory = ({ clock, leaseMs, maxBatchSize, perKeyOrder }) => {
  const queue = new SortedQueue<number, string, number>({ clock, leaseMs, maxBatchSize, perKeyOrder });
  return {
    publish: (sortKey, key, value) => queue.publish(sortKey, key, value),
    pull: (max) => queue.pull(max),
    claim: (max) => queue.claim(max),
    ack: (batch) => queue.ack(batch),
    nack: (batch, options) => queue.nack(batch, options),
    remove: (key) => queue.remove(key),
    counts: () => queue.counts(),
    entries: () => [...queue],
    checkInvariants: () => queue.checkInvariants(),
    dispose: () => queue.clear(),
  };
};
