/**
 * The Redis queues against the in-memory ones, operation by operation, over the whole API
 * (test/conformance/run-differential.ts): split, extendLease, resume, claim options, the time
 * queue's linger and full-batch rules, nextDueIn, stale settles. Both run on one ManualClock.
 */
import { afterAll, it } from 'vitest';
import { ManualClock, SortedQueue, TimeSortedQueue } from '../../src/index.js';
import { RedisSortedQueue, RedisTimeSortedQueue } from '../../src/redis/index.js';
import { checkDifferential, type FullStore } from '../conformance/run-differential.js';
import { cleanup, describeRedis, testClient, uniquePrefix } from './redis-helper.js';

const leaseMs = 500;

describeRedis('Redis queues against the in-memory queues', () => {
  const client = testClient();
  afterAll(() => client.quit());

  it.each([true, false])('RedisSortedQueue answers as SortedQueue does (perKeyOrder %s)', async (perKeyOrder) => {
    await checkDifferential(async () => {
      const clock = new ManualClock(1000);
      const prefix = uniquePrefix('diff-sorted');
      const memory = new SortedQueue<number, string, number>({ clock, leaseMs, perKeyOrder, maxBatchSize: 4 });
      const redis = new RedisSortedQueue<string, number>({ redis: client, prefix, clock, leaseMs, perKeyOrder, maxBatchSize: 4 });
      const advance = (ms: number): void => clock.advance(ms);
      const reference: FullStore = {
        publish: (s, k, v) => memory.publish(s, k, v),
        claim: (max, { force: _f, ...o }) => memory.claim(max, o),
        pull: (max, { force: _f, ...o }) => memory.pull(max, o),
        ack: (b) => memory.ack(b),
        nack: (b, o) => memory.nack(b, o),
        extendLease: (b, o) => memory.extendLease(b, o),
        split: (b, c) => memory.split(b, c),
        resume: (k) => memory.resume(k),
        remove: (k) => memory.remove(k),
        counts: () => memory.counts(),
        nextDueIn: () => memory.nextDueIn(),
        entries: () => [...memory],
        advance: () => undefined,
      };
      const subject: FullStore = {
        publish: (s, k, v) => redis.publish(s, k, v),
        claim: (max, { force: _f, ...o }) => redis.claim(max, o),
        pull: (max, { force: _f, ...o }) => redis.pull(max, o),
        ack: (b) => redis.ack(b),
        nack: (b, o) => redis.nack(b, o),
        extendLease: (b, o) => redis.extendLease(b, o),
        split: (b, c) => redis.split(b, c),
        resume: (k) => redis.resume(k),
        remove: (k) => redis.remove(k),
        counts: () => redis.counts(),
        nextDueIn: () => redis.nextDueIn(),
        entries: () => redis.entries(),
        advance,
      };
      return { reference, subject, dispose: () => cleanup(client, prefix) };
    }, { numRuns: 60 });
  }, 120_000);

  it('RedisTimeSortedQueue answers as TimeSortedQueue does (linger, full batches, force, drain)', async () => {
    await checkDifferential(async () => {
      const clock = new ManualClock(1000);
      const prefix = uniquePrefix('diff-time');
      const options = { clock, leaseMs, lingerMs: 200, maxBatchSize: 3 };
      const memory = new TimeSortedQueue<string, number>(options);
      const redis = new RedisTimeSortedQueue<string, number>({ redis: client, prefix, ...options });
      const reference: FullStore = {
        publish: (_s, k, v) => memory.publish(k, v),
        claim: (max, { upTo: _u, ...o }) => memory.claim(max, o),
        pull: (max, { force }) => (force ? memory.drain(max) : memory.pull(max)),
        ack: (b) => memory.ack(b),
        nack: (b, o) => memory.nack(b, o),
        extendLease: (b, o) => memory.extendLease(b, o),
        split: (b, c) => memory.split(b, c),
        resume: (k) => memory.resume(k),
        remove: (k) => memory.remove(k),
        counts: () => memory.counts(),
        nextDueIn: () => memory.nextDueIn(),
        entries: () => [...memory],
        advance: () => undefined,
      };
      const subject: FullStore = {
        publish: (_s, k, v) => redis.publish(k, v),
        claim: (max, { upTo: _u, ...o }) => redis.claim(max, o),
        pull: (max, { force }) => (force ? redis.drain(max) : redis.pull(max)),
        ack: (b) => redis.ack(b),
        nack: (b, o) => redis.nack(b, o),
        extendLease: (b, o) => redis.extendLease(b, o),
        split: (b, c) => redis.split(b, c),
        resume: (k) => redis.resume(k),
        remove: (k) => redis.remove(k),
        counts: () => redis.counts(),
        nextDueIn: () => redis.nextDueIn(),
        entries: () => redis.entries(),
        advance: (ms) => clock.advance(ms),
      };
      return { reference, subject, dispose: () => cleanup(client, prefix) };
    }, { numRuns: 60 });
  }, 120_000);
});
