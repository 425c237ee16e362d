/**
 * Publishing: a tick's publishes coalesced into one script call per shard, each caller told
 * its own outcome; oversized values and bad input refused before anything is written; the
 * codec pluggable; a failed flush rejecting every publish in it with a typed error.
 */
import { Buffer } from 'node:buffer';
import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { RedisSortedQueue, RedisTimeSortedQueue, type Codec } from '../../src/redis/index.js';
import { cleanup, countCommands, describeRedis, keysOf, testClient, uniquePrefix } from './redis-helper.js';

describeRedis('publish', () => {
  const admin = testClient();
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) await cleanup(admin, prefix);
    await admin.quit();
  });
  const fresh = (name: string): string => {
    const prefix = uniquePrefix(name);
    prefixes.push(prefix);
    return prefix;
  };

  it('sends the publishes of one tick as one script call per shard', async () => {
    const client = testClient();
    const queue = new RedisTimeSortedQueue<string, number>({ redis: client, prefix: fresh('coalesce'), shards: 4 });
    await queue.counts(); // connect and load the scripts first
    const names = countCommands(client);
    await Promise.all(Array.from({ length: 1000 }, (_, i) => queue.publish(`customer-${i % 100}`, i)));
    expect(names.filter((n) => n === 'evalsha' || n === 'eval')).toHaveLength(4);
    expect((await queue.counts()).pending).toBe(1000);
    await queue.checkInvariants();
    await queue.quit();
    await client.quit();
  });

  it('refuses each publish beyond maxPending on its own; the others are stored', async () => {
    const queue = new RedisSortedQueue<string, number>({ redis: admin, prefix: fresh('full'), maxPending: 3 });
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => queue.publish(i, `k${i}`, i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_QUEUE_FULL', limit: 3 });
    expect(await queue.counts()).toEqual({ pending: 3, claimed: 0, keys: 3 });
  });

  it('refuses an oversized value with a typed error and writes nothing', async () => {
    const prefix = fresh('oversized');
    const queue = new RedisTimeSortedQueue<string, string>({ redis: admin, prefix, maxValueBytes: 100 });
    await expect(queue.publish('a', 'é'.repeat(60))).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT', argument: 'value' });
    await queue.publish('a', 'x'.repeat(98)); // 100 bytes as JSON
    await expect(queue.publish('a', 'x'.repeat(99))).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    expect((await queue.counts()).pending).toBe(1);
    const fresh2 = new RedisTimeSortedQueue<string, string>({ redis: admin, prefix: fresh('oversized-empty'), maxValueBytes: 10 });
    await expect(fresh2.publish('a', 'far too long')).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    expect(await keysOf(admin, fresh2.prefix)).toEqual([]);
  });

  it('refuses bad input before anything is written', async () => {
    const prefix = fresh('bad-input');
    const queue = new RedisSortedQueue<string, unknown>({ redis: admin, prefix });
    await expect(queue.publish(Number.NaN, 'a', 1)).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT', argument: 'sortKey' });
    await expect(queue.publish(1, 7 as unknown as string, 1)).rejects.toMatchObject({ argument: 'key' });
    await expect(queue.publish(1, 'a', undefined)).rejects.toMatchObject({ argument: 'value' });
    await expect(queue.publish(1, 'a', () => 1)).rejects.toMatchObject({ code: 'ERR_SERIALIZE' });
    await expect(queue.claim(0)).rejects.toMatchObject({ argument: 'maxMessages' });
    await expect(queue.nack('0-a-1', { delayMs: -1 })).rejects.toMatchObject({ argument: 'options.delayMs' });
    expect(await keysOf(admin, prefix)).toEqual([]);
    expect(() => new RedisSortedQueue({ prefix: 'has space' })).toThrow(expect.objectContaining({ argument: 'options.prefix' }));
    expect(() => new RedisSortedQueue({ prefix: 'p', shards: 0, redis: admin })).toThrow(expect.objectContaining({ argument: 'options.shards' }));
    const prefixed = testClient();
    prefixed.options.keyPrefix = 'app:';
    expect(() => new RedisSortedQueue({ prefix: 'p', redis: prefixed })).toThrow(expect.objectContaining({ argument: 'options.redis' }));
    prefixed.disconnect();
  });

  it('keeps infinite and fractional sort keys in order, ties in publish order', async () => {
    const queue = new RedisSortedQueue<string, number>({ redis: admin, prefix: fresh('scores') });
    const keys: [number, string][] = [[Infinity, 'inf'], [0.5, 'half'], [-Infinity, 'minf'], [0.5, 'half2'], [-1e300, 'tiny'], [0.1 + 0.2, 'pt3']];
    for (const [sortKey, key] of keys) await queue.publish(sortKey, key, 1);
    expect((await queue.entries()).map((e) => [e.key, e.sortKey])).toEqual([
      ['minf', -Infinity], ['tiny', -1e300], ['pt3', 0.30000000000000004], ['half', 0.5], ['half2', 0.5], ['inf', Infinity],
    ]);
    expect((await queue.pull(2, { upTo: -1e300 })).map((b) => b.key)).toEqual(['minf', 'tiny']);
  });

  it('stores values through a pluggable codec', async () => {
    const bytes: Codec<Uint8Array> = {
      encode: (value) => Buffer.from(value).toString('base64'),
      decode: (text) => new Uint8Array(Buffer.from(text, 'base64')),
    };
    const queue = new RedisSortedQueue<string, Uint8Array>({ redis: admin, prefix: fresh('codec'), codec: bytes, clock: new ManualClock(0) });
    await queue.publish(1, 'a', new Uint8Array([0, 255, 7]));
    const [batch] = await queue.claim();
    expect(batch?.values).toEqual([new Uint8Array([0, 255, 7])]);
  });

  it('rejects every publish of a failed flush with ERR_STORE, and after close() with ERR_QUEUE_CLOSED', async () => {
    // Nothing listens on port 1: the connection fails, the command fails, the publish reports it.
    const queue = new RedisSortedQueue<string, number>({ redis: 'redis://127.0.0.1:1', prefix: fresh('down') });
    const results = await Promise.allSettled([queue.publish(1, 'a', 1), queue.publish(2, 'b', 2)]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_STORE', name: 'StoreError' });
      expect((result as PromiseRejectedResult).reason.cause).toBeInstanceOf(Error);
    }
    await queue.quit();
    await expect(queue.publish(3, 'c', 3)).rejects.toMatchObject({ code: 'ERR_QUEUE_CLOSED' });
  });
});
