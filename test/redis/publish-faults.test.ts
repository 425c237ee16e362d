/**
 * Publishes keep each key's order and are never stored twice when the connection or the
 * server's script cache goes away mid-flight. On a server of the test's own, since these
 * faults (SCRIPT FLUSH, CLIENT KILL) must not reach the shared one.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisTimeSortedQueue } from '../../src/redis/index.js';
import { OwnRedis } from '../../bench/chaos/own-redis.js';
import { describeRedis } from './redis-helper.js';

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Values of one key, as stored, and how many are out of publish order or stored twice. */
function audit(values: number[]): { disorder: number; duplicates: number } {
  const seen = new Set<number>();
  let disorder = 0;
  let duplicates = 0;
  values.forEach((value, i) => {
    if (seen.has(value)) duplicates++;
    seen.add(value);
    if (i > 0 && value < (values[i - 1] as number)) disorder++;
  });
  return { disorder, duplicates };
}

describeRedis('publish under connection and script-cache faults', () => {
  let server: OwnRedis;
  let admin: Redis;

  beforeAll(async () => {
    server = await OwnRedis.start();
    admin = new Redis(server.url);
  });

  afterAll(async () => {
    admin.disconnect();
    await server.stop();
  });

  it('keeps publish order when the script cache is emptied with publishes in flight (as after a restart)', async () => {
    const queue = new RedisTimeSortedQueue<string, number>({ redis: server.url, prefix: 'flush', lingerMs: 60_000 });
    let seq = 0;
    for (let round = 0; round < 20; round++) {
      const pending: Promise<void>[] = [];
      for (let tick = 0; tick < 10; tick++) {
        for (let key = 0; key < 5; key++) pending.push(queue.publish(`k${key}`, seq++));
        if (tick === 3) void admin.script('FLUSH');
        await nextTick();
      }
      await Promise.all(pending);
    }
    const batches = await queue.drain();
    expect(batches.reduce((sum, b) => sum + b.values.length, 0)).toBe(seq);
    for (const batch of batches) expect(audit(batch.values)).toEqual({ disorder: 0, duplicates: 0 });
    await queue.quit();
  });

  it('never stores a publish twice when its connection is killed mid-flight; a refused one fails with ERR_STORE', async () => {
    const queue = new RedisTimeSortedQueue<string, number>({ redis: `${server.url}?connectionName=victim`, prefix: 'kill', lingerMs: 600_000 });
    let seq = 0;
    const refused: unknown[] = [];
    for (let round = 0; round < 30; round++) {
      const pending: Promise<unknown>[] = [];
      for (let tick = 0; tick < 6; tick++) {
        for (let i = 0; i < 20; i++) pending.push(queue.publish('k', seq++).catch((error: unknown) => refused.push(error)));
        if (tick === 2) await admin.call('CLIENT', 'KILL', 'USER', 'default', 'SKIPME', 'YES');
        await nextTick();
      }
      await Promise.all(pending);
    }
    expect(refused.length).toBeGreaterThan(0);
    for (const error of refused) expect(error).toMatchObject({ code: 'ERR_STORE' });
    const values = (await queue.drain()).flatMap((b) => b.values);
    // A refused publish may have been stored (its reply was lost); none may be stored twice.
    expect(values.length).toBeGreaterThanOrEqual(seq - refused.length);
    expect(audit(values)).toEqual({ disorder: 0, duplicates: 0 });
    await queue.quit();
  });
});
