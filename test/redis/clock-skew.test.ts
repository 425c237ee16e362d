/**
 * Clock skew: two dispatchers whose local clocks are minutes apart release nothing early or late,
 * because due times and leases are read from the Redis server's clock and only durations cross
 * to the local side (the sleep until the next due time). The last case shows why the `clock`
 * option is for single-process use: queues that read their own skewed clocks disagree.
 */
import { afterAll, expect, it } from 'vitest';
import type { Clock } from '../../src/index.js';
import { RedisTimeSortedQueue } from '../../src/redis/index.js';
import { cleanup, describeRedis, testClient, uniquePrefix } from './redis-helper.js';

const skewed = (offsetMs: number): Clock => ({ now: () => Date.now() + offsetMs });
const MINUTES = 60_000;

describeRedis('clock skew', () => {
  const admin = testClient();
  const prefixes: string[] = [];
  const open: RedisTimeSortedQueue<string, string>[] = [];
  afterAll(async () => {
    for (const queue of open) await queue.quit();
    for (const prefix of prefixes) await cleanup(admin, prefix);
    await admin.quit();
  });

  function shared(options: { clockA?: Clock; clockB?: Clock } = {}): [RedisTimeSortedQueue<string, string>, RedisTimeSortedQueue<string, string>] {
    const prefix = uniquePrefix('skew');
    prefixes.push(prefix);
    const make = (clock: Clock | undefined): RedisTimeSortedQueue<string, string> =>
      new RedisTimeSortedQueue<string, string>({ redis: testClient(), prefix, lingerMs: 300, ...(clock ? { clock } : {}) });
    const pair: [RedisTimeSortedQueue<string, string>, RedisTimeSortedQueue<string, string>] = [make(options.clockA), make(options.clockB)];
    open.push(...pair);
    return pair;
  }

  it('two dispatchers minutes apart release a batch neither early nor late: the server time decides', async () => {
    const [ahead, behind] = shared();
    const aheadClock = skewed(+5 * MINUTES);
    const behindClock = skewed(-5 * MINUTES);
    await behind.publish('customer', 'r1');
    // The dispatcher 5 minutes ahead does not release early.
    expect(await ahead.claim(10)).toEqual([]);
    const dueIn = await ahead.nextDueIn();
    expect(dueIn).toBeGreaterThan(200);
    expect(dueIn).toBeLessThanOrEqual(300);
    // Both sleep on their own (skewed) clocks for the duration they read; both wake on time.
    const started = performance.now();
    await Promise.all([ahead.waitUntilDue({ clock: aheadClock }), behind.waitUntilDue({ clock: behindClock })]);
    const slept = performance.now() - started;
    expect(slept).toBeGreaterThan(150);
    expect(slept).toBeLessThan(3000); // not 5 minutes late, nor asleep for good
    const [batch] = await behind.claim(10);
    expect(batch?.values).toEqual(['r1']);
    const serverNow = await behind.now();
    expect(serverNow - batch!.enqueuedAt).toBeGreaterThanOrEqual(300);
    expect(serverNow - batch!.enqueuedAt).toBeLessThan(3300);
    expect(batch!.leaseExpiresAt - serverNow).toBeLessThanOrEqual(30_000);
  });

  it('leases are on the server clock: a skewed dispatcher neither steals a live claim nor misses an expired one', async () => {
    const [ahead, behind] = shared();
    await behind.publish('customer', 'r1');
    await behind.waitUntilDue({ clock: skewed(-5 * MINUTES) });
    const [batch] = await behind.claim(10, { leaseMs: 250 });
    expect(await ahead.claim(10)).toEqual([]); // the lease is live, whatever ahead's clock says
    await ahead.waitUntilDue({ clock: skewed(+5 * MINUTES) }); // sleeps until the lease runs out
    const [again] = await ahead.claim(10);
    expect(again).toMatchObject({ id: batch?.id, attempt: 2 });
  });

  it('with local clocks injected instead (the clock option), skewed queues would release early', async () => {
    const [ahead, behind] = shared({ clockA: skewed(+5 * MINUTES), clockB: skewed(-5 * MINUTES) });
    await behind.publish('customer', 'r1');
    expect(await ahead.claim(10)).toHaveLength(1); // due 300 ms after behind's clock: long past on ahead's
  });
});
