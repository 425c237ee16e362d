/**
 * Shards: a queue's keys spread over N hash tags (so a Redis Cluster can put them on different
 * nodes), and claims visit every shard, starting at a different one each call.
 */
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { RedisSortedQueue } from '../../src/redis/index.js';
import { cleanup, describeRedis, keysOf, testClient, uniquePrefix } from './redis-helper.js';

describeRedis('shards', () => {
  const client = testClient();
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) await cleanup(client, prefix);
    await client.quit();
  });

  function queue(shards: number): RedisSortedQueue<string, number> {
    const prefix = uniquePrefix('shards');
    prefixes.push(prefix);
    return new RedisSortedQueue<string, number>({ redis: client, prefix, shards, clock: new ManualClock(0) });
  }

  it('spreads keys over N hash tags, a key in one of them only', async () => {
    const q = queue(4);
    await Promise.all(Array.from({ length: 200 }, (_, i) => q.publish(i, `customer-${i % 40}`, i)));
    const keys = await keysOf(client, q.prefix);
    const tags = new Set(keys.map((k) => k.slice(0, k.indexOf('}') + 1)));
    expect([...tags].sort()).toEqual([0, 1, 2, 3].map((i) => `{${q.prefix}/${i}}`));
    const tagsOfCustomer = new Map<string, Set<string>>();
    for (const key of keys.filter((k) => k.includes(':v:'))) {
      const customer = key.slice(key.indexOf(':v:') + 3);
      (tagsOfCustomer.get(customer) ?? tagsOfCustomer.set(customer, new Set()).get(customer))?.add(key.slice(0, key.indexOf('}')));
    }
    expect(tagsOfCustomer.size).toBe(40);
    for (const set of tagsOfCustomer.values()) expect(set.size).toBe(1);
    expect(await q.counts()).toEqual({ pending: 200, claimed: 0, keys: 40 });
    await q.checkInvariants();
  });

  it('claims visit all shards fairly: each call starts at the next shard', async () => {
    const q = queue(4);
    await Promise.all(Array.from({ length: 400 }, (_, i) => q.publish(i, `customer-${i}`, i)));
    const perShard = [0, 0, 0, 0];
    let calls = 0;
    for (let batches = await q.claim(5); batches.length > 0; batches = await q.claim(5)) {
      calls++;
      for (const batch of batches) {
        perShard[Number(batch.id.split('-')[0])]! += 1;
        await q.ack(batch);
      }
      if (calls % 4 === 0 && calls <= 60) {
        // Every round of four calls took the same from each shard (shards hold 100 ± 25 keys).
        expect(Math.max(...perShard) - Math.min(...perShard)).toBe(0);
      }
    }
    expect(perShard.reduce((a, b) => a + b)).toBe(400);
    expect(await q.counts()).toEqual({ pending: 0, claimed: 0, keys: 0 });
  });

  it('fills one claim from several shards when the first runs dry, and merges entries by place', async () => {
    const q = queue(3);
    await Promise.all(Array.from({ length: 9 }, (_, i) => q.publish(i, `k${i}`, i)));
    const batches = await q.claim(9);
    expect(batches.map((b) => b.values[0]).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    await Promise.all(batches.map((b) => q.nack(b)));
    expect((await q.entries()).map((e) => e.sortKey)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
