/**
 * Redis killed (-9) and restarted mid-run, on a server of the test's own with
 * `appendonly yes` + `appendfsync always`: publishes during the outage fail with ERR_STORE
 * (quickly, no hang), the clients reconnect by themselves, the batch claimed before the crash
 * comes back after its lease under the same id, and a record that fell due during the outage
 * is released without a new publish.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep, type ClaimedBatch } from '../../src/index.js';
import { RedisTimeSortedQueue } from '../../src/redis/index.js';
import { OwnRedis } from '../../bench/chaos/own-redis.js';
import { describeRedis, testClient, uniquePrefix } from './redis-helper.js';

type Queue = RedisTimeSortedQueue<string, string>;

/** A minimal dispatcher: claim, ack, sleep until due; on a store error, back off and go on. */
function dispatchLoop(queue: Queue, signal: AbortSignal): { delivered: ClaimedBatch<string, string>[]; errors: unknown[]; done: Promise<void> } {
  const delivered: ClaimedBatch<string, string>[] = [];
  const errors: unknown[] = [];
  const done = (async () => {
    while (!signal.aborted) {
      try {
        const batches = await queue.claim(10);
        for (const batch of batches) {
          delivered.push(batch);
          await queue.ack(batch);
        }
        if (batches.length === 0) await queue.waitUntilDue({ signal });
      } catch (error) {
        if (signal.aborted) return;
        errors.push(error);
        await sleep(100, signal).catch(() => undefined);
      }
    }
  })();
  return { delivered, errors, done };
}

describeRedis('Redis restart', () => {
  let server: OwnRedis;
  beforeAll(async () => {
    server = await OwnRedis.start();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('keeps claimed and due records across kill -9 and restart; publishes during the outage reject with ERR_STORE', async () => {
    const prefix = uniquePrefix('restart');
    const crashed: Queue = new RedisTimeSortedQueue({ redis: server.url, prefix, lingerMs: 0, leaseMs: 1500 });
    const survivor: Queue = new RedisTimeSortedQueue({ redis: server.url, prefix, lingerMs: 0, leaseMs: 1500 });
    const producer: Queue = new RedisTimeSortedQueue({ redis: server.url, prefix, lingerMs: 700 });
    const stop = new AbortController();
    try {
      await crashed.publish('a', 'a1');
      const [held] = await crashed.claim(10); // never acked: its dispatcher "dies" with the server
      await producer.publish('b', 'b1'); // due in 700 ms: during the outage
      const loop = dispatchLoop(survivor, stop.signal);
      await sleep(50);

      await server.kill();
      const started = performance.now();
      const failed = await Promise.allSettled([producer.publish('c', 'c1'), producer.publish('d', 'd1')]);
      expect(performance.now() - started).toBeLessThan(3000);
      for (const result of failed) {
        expect(result.status).toBe('rejected');
        expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'ERR_STORE' });
      }
      await sleep(900); // b falls due while Redis is down
      await server.restart();

      // The survivor reconnects, releases b without a new publish, then takes over a after its lease.
      for (let waited = 0; loop.delivered.length < 2 && waited < 8000; waited += 50) await sleep(50);
      stop.abort();
      await loop.done;
      // a comes back at the place it had (due at once), so it may go first if its lease ran out during the outage.
      expect(loop.delivered.map((b) => b.values[0]).sort()).toEqual(['a1', 'b1']);
      expect(loop.delivered.find((b) => b.key === 'a')).toMatchObject({ id: held?.id, attempt: 2, values: ['a1'] });
      // A claim issued during the outage waits through a reconnect attempt, then fails or (Redis back) succeeds.
      for (const error of loop.errors) expect(error).toMatchObject({ code: 'ERR_STORE' });
      // The crashed holder's late ack is refused (the redelivery was acked, so the id is settled).
      await expect(crashed.ack(held!)).rejects.toMatchObject({ code: 'ERR_UNKNOWN_BATCH' });
      expect(await producer.counts()).toEqual({ pending: 0, claimed: 0, keys: 0 });
      await producer.checkInvariants();
    } finally {
      stop.abort();
      await Promise.all([crashed.quit(), survivor.quit(), producer.quit()]);
    }
  }, 30_000);

  it('a subscriber that loses its connection wakes on reconnect: an announcement lost meanwhile leaves no one asleep', async () => {
    const prefix = uniquePrefix('resubscribe');
    const waiter: Queue = new RedisTimeSortedQueue({ redis: server.url, prefix, lingerMs: 0 });
    const producer: Queue = new RedisTimeSortedQueue({ redis: server.url, prefix, lingerMs: 50 });
    const admin = testClient(server.url);
    try {
      const heard: number[] = [];
      waiter.onWake((dueInMs) => heard.push(dueInMs));
      await waiter.wakeReady();
      const waiting = waiter.waitUntilDue();
      await sleep(50);
      await admin.client('KILL', 'TYPE', 'pubsub'); // drop the subscriber connection…
      await producer.publish('a', 'a1'); // …so this announcement reaches no one
      await waiting; // woken by the reconnect instead
      expect(heard).toEqual([0]); // the announcement (50 ms) was never heard
      await sleep(60);
      expect((await waiter.claim(10)).map((b) => b.values)).toEqual([['a1']]);
    } finally {
      await Promise.all([waiter.quit(), producer.quit(), admin.quit()]);
    }
  });
});
