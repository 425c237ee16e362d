/**
 * The shape the conformance suite drives: the operations of a sorted queue with numeric sort
 * keys, string keys and number values, each possibly asynchronous. The in-memory queue answers
 * synchronously, the Redis queue with promises; the suite awaits every call, so both look alike.
 */
import type { Batch, ClaimedBatch, ManualClock, QueueCounts, QueueEntry } from '../../src/index.js';

/** A value, or a promise of one. */
export type Awaitable<T> = T | Promise<T>;

/** A queue under test. */
export interface StoreUnderTest {
  publish(sortKey: number, key: string, value: number): Awaitable<void>;
  pull(maxMessages?: number): Awaitable<Batch<string, number>[]>;
  claim(maxMessages?: number): Awaitable<ClaimedBatch<string, number>[]>;
  ack(batch: ClaimedBatch<string, number>): Awaitable<void>;
  nack(batch: ClaimedBatch<string, number>, options: { delayMs: number }): Awaitable<void>;
  remove(key: string): Awaitable<number[]>;
  counts(): Awaitable<QueueCounts>;
  /** Claimable keys in place order, with their pending values. */
  entries(): Awaitable<readonly QueueEntry<number, string, number>[]>;
  /** Throws on a broken invariant of the store's own data. */
  checkInvariants(): Awaitable<void>;
  /** Frees what the store holds (Redis: deletes its keys). */
  dispose(): Awaitable<void>;
}

/** How the suite configures a store. */
export interface StoreSetup {
  maxBatchSize: number;
  perKeyOrder: boolean;
  leaseMs: number;
  /** The time the store must read: leases and nack delays are measured on it. */
  clock: ManualClock;
}

/** Makes a fresh, empty store for one run of the suite. */
export type StoreFactory = (setup: StoreSetup) => Awaitable<StoreUnderTest>;
