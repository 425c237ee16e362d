/**
 * Idle consumers do not poll: they sleep until the due time they read and are woken early by an
 * announcement when any process makes an earlier time due. Commands are counted on the waiting
 * queue's own client: none while it sleeps.
 */
import { afterAll, expect, it } from 'vitest';
import { RedisTimeSortedQueue } from '../../src/redis/index.js';
import { cleanup, countCommands, describeRedis, testClient, uniquePrefix } from './redis-helper.js';

describeRedis('wake', () => {
  const admin = testClient();
  const prefixes: string[] = [];
  const open: RedisTimeSortedQueue<string, number>[] = [];
  afterAll(async () => {
    for (const queue of open) await queue.quit();
    for (const prefix of prefixes) await cleanup(admin, prefix);
    await admin.quit();
  });

  /** A waiting dispatcher and a producer in "another process" (own clients), on one queue. */
  function pair(lingerMs: number, maxBatchSize = Infinity): { waiter: RedisTimeSortedQueue<string, number>; producer: RedisTimeSortedQueue<string, number>; commands: string[] } {
    const prefix = uniquePrefix('wake');
    prefixes.push(prefix);
    const client = testClient();
    const commands = countCommands(client);
    const waiter = new RedisTimeSortedQueue<string, number>({ redis: client, prefix, lingerMs, maxBatchSize });
    const producer = new RedisTimeSortedQueue<string, number>({ redis: testClient(), prefix, lingerMs, maxBatchSize });
    open.push(waiter, producer);
    return { waiter, producer, commands };
  }

  const settled = async (promise: Promise<unknown>, ms: number): Promise<boolean> =>
    Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

  it('an idle waiter issues no command until a publish wakes it', async () => {
    const { waiter, producer, commands } = pair(0);
    const waiting = waiter.waitUntilDue();
    expect(await settled(waiting, 300)).toBe(false);
    const whileIdle = commands.length;
    expect(await settled(waiting, 300)).toBe(false);
    expect(commands.length).toBe(whileIdle); // nothing sent while asleep
    expect(commands.filter((c) => c === 'evalsha' || c === 'eval')).toHaveLength(1); // the one read of the due time
    const started = performance.now();
    await producer.publish('a', 1);
    await waiting;
    expect(performance.now() - started).toBeLessThan(2000); // nothing else would wake it: it would sleep for good
    expect((await waiter.claim(10)).map((b) => b.values)).toEqual([[1]]);
  });

  it('a waiter sleeping until a far due time is woken when a publish makes an earlier one due', async () => {
    const { waiter, producer, commands } = pair(600_000, 3);
    await producer.publish('a', 1);
    const waiting = waiter.waitUntilDue();
    expect(await settled(waiting, 200)).toBe(false);
    const before = commands.length;
    await Promise.all([producer.publish('b', 1), producer.publish('b', 2), producer.publish('b', 3)]); // b is full: due now
    expect(await settled(waiting, 2000)).toBe(true); // due in 10 min otherwise
    expect(commands.length).toBe(before);
    expect((await waiter.claim(10)).map((b) => b.key)).toEqual(['b']);
  });

  it('a waiter sleeps until the due time it read, then finds the batch due', async () => {
    const { waiter, producer, commands } = pair(200);
    await producer.publish('a', 1);
    const started = performance.now();
    await waiter.waitUntilDue();
    expect(performance.now() - started).toBeGreaterThanOrEqual(120);
    expect(commands.filter((c) => c === 'evalsha' || c === 'eval')).toHaveLength(1);
    expect(await waiter.claim(10)).toHaveLength(1);
  });

  it('a claim announces its lease, so idle consumers wake to take over if the claimer dies', async () => {
    const { waiter, producer } = pair(0);
    const heard: number[] = [];
    const stop = waiter.onWake((dueInMs) => heard.push(dueInMs));
    await waiter.wakeReady();
    await producer.publish('a', 1);
    await producer.claim(10, { leaseMs: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop();
    expect(heard.length).toBe(2);
    expect(heard[0]).toBe(0);
    expect(heard[1]).toBeGreaterThan(4000);
  });
});
