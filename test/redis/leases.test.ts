/**
 * Crash recovery and stale claims: a batch whose lease runs out comes back under the same id
 * (the dispatcher that held it died), and the stale holder's settle is refused. Most cases run
 * on an injected ManualClock (passed to every script); one runs on the server's clock.
 */
import { afterAll, expect, it } from 'vitest';
import { ManualClock, sleep } from '../../src/index.js';
import { RedisSortedQueue, RedisTimeSortedQueue } from '../../src/redis/index.js';
import { cleanup, describeRedis, testClient, uniquePrefix } from './redis-helper.js';

describeRedis('leases and tokens', () => {
  const client = testClient();
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) await cleanup(client, prefix);
    await client.quit();
  });

  function queue(clock = new ManualClock(1000)): { queue: RedisSortedQueue<string, string>; clock: ManualClock } {
    const prefix = uniquePrefix('lease');
    prefixes.push(prefix);
    return { queue: new RedisSortedQueue<string, string>({ redis: client, prefix, clock, leaseMs: 1000 }), clock };
  }

  it('redelivers an expired batch under the same id, with a new token and attempt 2', async () => {
    const { queue: q, clock } = queue();
    await Promise.all([q.publish(1, 'a', 'x'), q.publish(1, 'a', 'y')]);
    const [first] = await q.claim(10);
    expect(await q.claim(10)).toEqual([]); // per-key order: the key is held
    clock.advance(1000);
    const [again] = await q.claim(10);
    expect(again).toMatchObject({ id: first?.id, key: 'a', values: ['x', 'y'], attempt: 2, leaseExpiresAt: 3000 });
    expect(again?.token).not.toBe(first?.token);
    await q.checkInvariants();
  });

  it('refuses every settle of the stale claim with ERR_LEASE_EXPIRED and changes nothing', async () => {
    const { queue: q, clock } = queue();
    await q.publish(1, 'a', 'x');
    const [stale] = await q.claim(10);
    clock.advance(1500);
    // Before anyone claims it again, and after.
    await expect(q.ack(stale!)).rejects.toMatchObject({ code: 'ERR_LEASE_EXPIRED', batchId: stale?.id });
    const [current] = await q.claim(10);
    for (const settle of [
      () => q.ack(stale!),
      () => q.nack(stale!),
      () => q.extendLease(stale!),
      () => q.split(stale!, [1]),
    ]) {
      await expect(settle()).rejects.toMatchObject({ code: 'ERR_LEASE_EXPIRED' });
    }
    expect(await q.counts()).toEqual({ pending: 0, claimed: 1, keys: 0 });
    await q.ack(current!);
    expect(await q.counts()).toEqual({ pending: 0, claimed: 0, keys: 0 });
  });

  it('acks the current claim when no token is given; unknown and settled ids are ERR_UNKNOWN_BATCH', async () => {
    const { queue: q } = queue();
    await q.publish(1, 'a', 'x');
    const [batch] = await q.claim(10);
    await expect(q.ack({ id: batch!.id, token: 'zz' })).rejects.toMatchObject({ code: 'ERR_UNKNOWN_BATCH' });
    await q.ack(batch!.id);
    await expect(q.ack(batch!)).rejects.toMatchObject({ code: 'ERR_UNKNOWN_BATCH' });
    await expect(q.ack('0-nope-1')).rejects.toMatchObject({ code: 'ERR_UNKNOWN_BATCH' });
    await expect(q.ack('not-an-id')).rejects.toMatchObject({ code: 'ERR_UNKNOWN_BATCH' });
  });

  it('extendLease keeps a batch past its first lease; split parts are settled one by one', async () => {
    const { queue: q, clock } = queue();
    await Promise.all(['v1', 'v2', 'v3'].map((v) => q.publish(1, 'a', v)));
    const [batch] = await q.claim(10);
    clock.advance(900);
    const extended = await q.extendLease(batch!, { leaseMs: 1000 });
    expect(extended).toMatchObject({ id: batch?.id, token: batch?.token, leaseExpiresAt: 2900 });
    clock.advance(500);
    const parts = await q.split(extended, [2, 1]);
    expect(parts.map((p) => [p.id, p.values])).toEqual([[`${batch?.id}.1`, ['v1', 'v2']], [`${batch?.id}.2`, ['v3']]]);
    await q.ack(parts[0]!);
    await q.nack(parts[1]!);
    const [back] = await q.claim(10);
    expect(back).toMatchObject({ id: `${batch?.id}.2`, values: ['v3'] });
    await expect(q.split(back!, [2])).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT', argument: 'counts' });
    await q.checkInvariants();
  });

  it('on the server clock, an expired lease returns the batch by itself', async () => {
    const prefix = uniquePrefix('lease-server');
    prefixes.push(prefix);
    const q = new RedisTimeSortedQueue<string, string>({ redis: client, prefix, lingerMs: 0, leaseMs: 100 });
    await q.publish('a', 'x');
    const [first] = await q.claim(10);
    expect(await q.nextDueIn()).toBeGreaterThan(0);
    await sleep(150);
    const [again] = await q.claim(10);
    expect(again).toMatchObject({ id: first?.id, values: ['x'], attempt: 2 });
    expect(again!.leaseExpiresAt - first!.leaseExpiresAt).toBeGreaterThanOrEqual(100);
  });

  it('a returned batch cut by a smaller claim, then split, comes back in value order', async () => {
    const { queue: q, clock } = queue();
    for (const v of ['v0', 'v1', 'v2']) await q.publish(0, 'a', v);
    const [whole] = await q.claim(3);
    await q.nack(whole!);
    const [head] = await q.claim(2); // v0 v1 claimed under the batch's id, v2 stays back under a new one
    expect(head).toMatchObject({ id: whole?.id, values: ['v0', 'v1'] });
    await q.split(head!, [1, 1]);
    clock.advance(1000); // both parts' leases run out
    const order: string[] = [];
    for (let batches = await q.pull(); batches.length > 0; batches = await q.pull()) order.push(...batches.flatMap((b) => b.values));
    expect(order).toEqual(['v0', 'v1', 'v2']);
  });
});
