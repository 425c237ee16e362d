/**
 * Two dispatchers racing for the same due key: exactly one wins, every time. Each queue
 * instance has its own connection, as separate processes would; the claim is one script, so
 * Redis runs the two claims one after the other and the second finds nothing.
 */
import { afterAll, expect, it } from 'vitest';
import { RedisSortedQueue, RedisTimeSortedQueue } from '../../src/redis/index.js';
import { cleanup, describeRedis, redisUrl, testClient, uniquePrefix } from './redis-helper.js';

describeRedis('racing claimers', () => {
  const admin = testClient();
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) await cleanup(admin, prefix);
    await admin.quit();
  });

  function pair<Q extends { quit(): Promise<void> }>(make: (prefix: string) => Q): [Q, Q] {
    const prefix = uniquePrefix('race');
    prefixes.push(prefix);
    return [make(prefix), make(prefix)];
  }

  it('exactly one of two claimers gets a due key, 200 times over', async () => {
    const [a, b] = pair((prefix) => new RedisSortedQueue<string, number>({ redis: redisUrl, prefix }));
    try {
      for (let round = 0; round < 200; round++) {
        await a.publish(round, 'customer', round);
        const [gotA, gotB] = await Promise.all([a.claim(10), b.claim(10)]);
        const winners = [gotA, gotB].filter((got) => got.length > 0);
        expect(winners).toHaveLength(1);
        const [batch] = winners[0] ?? [];
        expect(batch?.values).toEqual([round]);
        await (gotA.length > 0 ? a : b).ack(batch!);
      }
      expect(await a.counts()).toEqual({ pending: 0, claimed: 0, keys: 0 });
    } finally {
      await Promise.all([a.quit(), b.quit()]);
    }
  }, 60_000);

  it('many keys, two claimers in a loop: every value claimed exactly once, no key twice in flight', async () => {
    const [a, b] = pair((prefix) => new RedisTimeSortedQueue<string, number>({ redis: redisUrl, prefix, lingerMs: 0, maxBatchSize: 5 }));
    try {
      const published = Array.from({ length: 2000 }, (_, i) => i);
      await Promise.all(published.map((i) => a.publish(`k${i % 50}`, i)));
      const seen: number[] = [];
      const inFlight = new Set<string>();
      const worker = async (queue: RedisTimeSortedQueue<string, number>): Promise<void> => {
        for (let batches = await queue.claim(40); batches.length > 0; batches = await queue.claim(40)) {
          for (const batch of batches) {
            expect(inFlight.has(batch.key)).toBe(false);
            inFlight.add(batch.key);
          }
          await Promise.resolve();
          for (const batch of batches) {
            seen.push(...batch.values);
            inFlight.delete(batch.key);
            await queue.ack(batch);
          }
        }
      };
      await Promise.all([worker(a), worker(b)]);
      expect(seen.sort((x, y) => x - y)).toEqual(published);
    } finally {
      await Promise.all([a.quit(), b.quit()]);
    }
  }, 60_000);
});
