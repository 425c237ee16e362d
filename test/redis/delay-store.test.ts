/**
 * DelayQueue over RedisDelayStore: due times on the server's clock, replace and cancel, jobs that
 * survive a restart, two workers sharing one prefix (each job once, never twice at once), a worker
 * that dies mid-handler, lease renewal for handlers that outlast their lease, and no polling: an
 * idle worker sends no command while it sleeps and is woken over pub/sub when another worker
 * schedules an earlier job. Real timers: every wait is a promise bounded by `within`, and no
 * assertion depends on how long a sleep took. The store-level cases (stale tokens, cross-process
 * cancel) run on an injected ManualClock.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, expect, it } from 'vitest';
import { ManualClock, monotonicClock } from '../../src/time.js';
import { DelayQueue } from '../../src/timers/delay-queue.js';
import type { DelayedJob, DelayQueueOptions, DelayStore, JobHandler } from '../../src/timers/delay-queue-options.js';
import { RedisDelayStore, type RedisDelayStoreOptions } from '../../src/redis/index.js';
import { cleanup, countCommands, describeRedis, redisUrl, testClient, uniquePrefix } from './redis-helper.js';

const LEASE_MS = 300;
const HOUR_MS = 60 * 60 * 1000;
/** Bound on any one wait; far above what each should take. */
const WAIT_MS = 8000;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** `promise`, or a rejection naming `what` after `ms`: a bound on a wait, not a timing assertion. */
async function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `condition()` holds, checking every 10 ms, bounded by `within`. */
function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  return within(
    (async () => {
      while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
    })(),
    what,
  );
}

describeRedis('RedisDelayStore', () => {
  const client = testClient();
  const prefixes: string[] = [];
  const open: { queue?: { close(options: { timeoutMs: number }): Promise<void> }; store: { close(): Promise<void> } }[] = [];

  afterEach(async () => {
    for (const { queue, store } of open.splice(0)) {
      await queue?.close({ timeoutMs: 0 });
      await store.close();
    }
  });
  afterAll(async () => {
    for (const prefix of prefixes) await cleanup(client, prefix);
    await client.quit();
  });

  function newPrefix(): string {
    const prefix = uniquePrefix('delay');
    prefixes.push(prefix);
    return prefix;
  }

  async function serverNow(): Promise<number> {
    const [seconds, micros] = await client.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  function store<P>(prefix: string, options: Partial<RedisDelayStoreOptions<P>> = {}): RedisDelayStore<P> {
    const s = new RedisDelayStore<P>({ prefix, redis: redisUrl, leaseMs: LEASE_MS, ...options });
    open.push({ store: s });
    return s;
  }

  /** A DelayQueue over its own RedisDelayStore (its own connection), as one worker process would run. */
  function worker<P>(
    prefix: string,
    handler: JobHandler<P>,
    options: {
      queue?: Partial<DelayQueueOptions<P>>;
      wrap?: (store: DelayStore<P>) => DelayStore<P>;
      store?: Partial<RedisDelayStoreOptions<P>>;
    } = {},
  ) {
    const errors: unknown[] = [];
    const s = new RedisDelayStore<P>({ prefix, redis: redisUrl, leaseMs: LEASE_MS, onError: (e) => errors.push(e), ...options.store });
    const queue = new DelayQueue<P>({
      store: options.wrap?.(s) ?? s,
      handler,
      onError: (e) => errors.push(e),
      ...options.queue,
    });
    open.push({ queue, store: s });
    return { queue, store: s, errors };
  }

  it('runs a job once the server clock reaches its due time, then removes it', async () => {
    const prefix = newPrefix();
    const ran = deferred<{ job: DelayedJob<{ total: number }>; at: number }>();
    const w = worker<{ total: number }>(prefix, async (job) => ran.resolve({ job, at: await serverNow() }));
    const job = await w.queue.schedule('order-1', { total: 5 }, { delayMs: 200 });
    expect(await w.queue.get('order-1')).toEqual(job);
    const run = await within(ran.promise, 'the job to run');
    expect(run.job).toEqual({ id: 'order-1', payload: { total: 5 }, dueAt: job.dueAt, attempt: 1 });
    expect(run.at).toBeGreaterThanOrEqual(job.dueAt);
    await until(async () => w.queue.stats().completed === 1 && (await w.queue.count()) === 0, 'the ack');
    expect(await w.queue.get('order-1')).toBeUndefined();
    expect(w.errors).toEqual([]);
  });

  it('replaces a job on a second schedule, cancels, and runs equal due times in schedule order', async () => {
    const prefix = newPrefix();
    const runs: [string, string | undefined][] = [];
    const last = deferred();
    const w = worker<string | undefined>(
      prefix,
      (job) => {
        runs.push([job.id, job.payload]);
        if (job.id === 'marker') last.resolve();
      },
      { queue: { concurrency: 1 } },
    );
    await w.queue.schedule('a', 'first', { delayMs: 60_000 });
    await w.queue.schedule('a', 'second', { delayMs: 100 });
    await w.queue.schedule('b', 'doomed', { delayMs: 100 });
    expect(await w.queue.get('a')).toMatchObject({ payload: 'second', attempt: 1 });
    expect(await w.queue.count()).toBe(2);
    expect(await w.queue.cancel('b')).toBe(true);
    expect(await w.queue.cancel('b')).toBe(false);
    expect(await w.queue.get('b')).toBeUndefined();
    const at = monotonicClock.now() + 150;
    for (const id of ['t3', 't1', 't2']) await w.queue.schedule(id, undefined, { at });
    await w.queue.schedule('marker', 'last', { at: at + 50 });
    await within(last.promise, 'the marker job');
    expect(runs).toEqual([['a', 'second'], ['t3', undefined], ['t1', undefined], ['t2', undefined], ['marker', 'last']]);
    await until(async () => (await w.queue.count()) === 0, 'the acks');
    expect(w.errors).toEqual([]);
  });

  it('keeps pending jobs across a restart: a new DelayQueue on the same prefix runs them', async () => {
    const prefix = newPrefix();
    const runs: string[] = [];
    const first = worker<number>(prefix, (job) => void runs.push(`first:${job.id}`));
    await first.queue.schedule('r1', 1, { delayMs: 300 });
    await first.queue.schedule('r2', 2, { delayMs: 350 });
    await first.queue.close();
    await first.store.close();
    await until(() => first.store.client.status === 'end', 'the connection the store opened to close');

    const both = deferred();
    const second = worker<number>(prefix, (job) => {
      runs.push(`second:${job.id}:${job.payload}`);
      if (runs.length === 2) both.resolve();
    });
    await within(both.promise, 'both jobs to run after the restart');
    expect(runs).toEqual(['second:r1:1', 'second:r2:2']);
    await until(async () => (await second.queue.count()) === 0, 'the acks');
    expect(second.errors).toEqual([]);
  });

  it('two workers on one prefix run 200 jobs due at once: each exactly once, never concurrently', async () => {
    const prefix = newPrefix();
    const total = 200;
    const runsById = new Map<string, number>();
    const running = new Set<string>();
    const perWorker = { a: 0, b: 0 };
    let overlaps = 0;
    const handler = (name: 'a' | 'b'): JobHandler<number> => async (job) => {
      if (running.has(job.id)) overlaps++;
      running.add(job.id);
      runsById.set(job.id, (runsById.get(job.id) ?? 0) + 1);
      perWorker[name]++;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
      running.delete(job.id);
    };
    const a = worker<number>(prefix, handler('a'), { queue: { concurrency: 20 } });
    const b = worker<number>(prefix, handler('b'), { queue: { concurrency: 20 } });
    expect(a.store.client).not.toBe(b.store.client);
    const at = monotonicClock.now() + 300;
    await Promise.all(Array.from({ length: total }, (_, i) => (i % 2 === 0 ? a : b).queue.schedule(`job-${i}`, i, { at })));
    await until(
      async () => (await a.queue.count()) === 0 && a.queue.stats().running === 0 && b.queue.stats().running === 0,
      'every job to run and be acked',
    );
    expect(runsById.size).toBe(total);
    expect([...runsById.values()].every((n) => n === 1)).toBe(true);
    expect(overlaps).toBe(0);
    expect(perWorker.a).toBeGreaterThan(0);
    expect(perWorker.b).toBeGreaterThan(0);
    expect(a.queue.stats().completed + b.queue.stats().completed).toBe(total);
    expect([...a.errors, ...b.errors]).toEqual([]);
  });

  it('runs a job on another worker once the lease of a worker that died mid-handler runs out', async () => {
    const prefix = newPrefix();
    const started = deferred();
    const dying = worker<string>(prefix, () => {
      started.resolve();
      return new Promise(() => undefined); // hangs: the process dies before it settles
    });
    const scheduledAt = await serverNow();
    await dying.queue.schedule('x', 'p', { delayMs: 0 });
    await within(started.promise, 'the first worker to start the job');
    await dying.store.close(); // no ack, no more renewals, connection gone

    const ran = deferred<{ job: DelayedJob<string>; at: number }>();
    const survivor = worker<string>(prefix, async (job) => ran.resolve({ job, at: await serverNow() }));
    const run = await within(ran.promise, 'the survivor to run the job');
    expect(run.job).toMatchObject({ id: 'x', payload: 'p', attempt: 2 });
    expect(run.at).toBeGreaterThanOrEqual(scheduledAt + LEASE_MS);
    await until(async () => (await survivor.queue.count()) === 0, 'the ack');
    expect(survivor.errors).toEqual([]);
  });

  it('renews the lease of a handler that runs longer than leaseMs, so no other worker runs the job', async () => {
    const prefix = newPrefix();
    const release = deferred();
    const started = deferred<number>();
    const runs: string[] = [];
    const slow = worker<string>(prefix, async (job) => {
      runs.push(`slow:${job.id}`);
      started.resolve(monotonicClock.now());
      await release.promise;
    });
    await slow.queue.schedule('long', 'p', { delayMs: 0 });
    const startedAt = await within(started.promise, 'the slow handler to start');

    // The other worker looks at the store each time the lease it last read runs out (the renewals
    // keep moving it); wait until it has looked a few times after three leases would have run out.
    const looks: number[] = [];
    const other = worker<string>(prefix, (job) => void runs.push(`other:${job.id}`), {
      wrap: (s) => ({
        schedule: (job) => s.schedule(job),
        cancel: (id) => s.cancel(id),
        get: (id) => s.get(id),
        size: () => s.size(),
        claimDue: (now, limit) => {
          looks.push(monotonicClock.now());
          return s.claimDue(now, limit);
        },
        ack: (claim) => s.ack(claim),
        nack: (claim, retry) => s.nack(claim, retry),
        nextDueAt: () => s.nextDueAt(),
        onWake: (listener) => s.onWake?.(listener) ?? (() => undefined),
      }),
    });
    await until(() => looks.filter((t) => t > startedAt + 3 * LEASE_MS).length >= 3, 'the other worker to look past three leases');
    expect(runs).toEqual(['slow:long']);
    expect(slow.store.heldCount).toBe(1);
    release.resolve();
    await until(async () => slow.queue.stats().completed === 1 && (await slow.queue.count()) === 0, 'the ack');
    expect(slow.store.heldCount).toBe(0);
    expect(runs).toEqual(['slow:long']);
    expect([...slow.errors, ...other.errors]).toEqual([]);
  });

  /**
   * A worker whose main connection is counted (`commands`; its wake subscriber is a connection of
   * its own, a duplicate named `name` like it) and whose wake-ups are counted (`wakes()`);
   * `asleep()` resolves once it has heard that its subscription is active and has finished every
   * store call since.
   */
  function sleeper<P>(prefix: string, handler: JobHandler<P>, options: Partial<RedisDelayStoreOptions<P>> = {}) {
    const name = `duebatch-test-${prefix.replace(/[^\w-]/g, '-')}`;
    const client = new Redis(redisUrl, { connectionName: name, maxRetriesPerRequest: 1, retryStrategy: (n) => Math.min(n * 50, 500) });
    client.on('error', () => undefined);
    open.push({ store: { close: async () => void (await client.quit()) } });
    const commands = countCommands(client);
    let wakes = 0;
    let inFlight = 0;
    let readSinceWake = false;
    const track = <T>(call: () => Promise<T> | T, isRead = false): Promise<T> => {
      inFlight++;
      if (isRead && wakes > 0) readSinceWake = true;
      return Promise.resolve(call()).finally(() => inFlight--);
    };
    const w = worker<P>(prefix, handler, {
      store: { redis: client, ...options },
      wrap: (s) => ({
        schedule: (job) => track(() => s.schedule(job)),
        cancel: (id) => track(() => s.cancel(id)),
        get: (id) => s.get(id),
        size: () => s.size(),
        claimDue: (now, limit) => track(() => s.claimDue(now, limit)),
        ack: (claim) => track(() => s.ack(claim)),
        nack: (claim, retry) => track(() => s.nack(claim, retry)),
        nextDueAt: () => track(() => s.nextDueAt(), true),
        onWake: (listener) =>
          s.onWake?.(() => {
            wakes++;
            listener();
          }) ?? (() => undefined),
      }),
    });
    const asleep = () => until(() => wakes > 0 && readSinceWake && inFlight === 0, 'the worker to subscribe and fall asleep');
    return { ...w, name, commands, wakes: () => wakes, asleep };
  }

  it('an idle worker is woken at once when another worker schedules a job due now, and runs it', async () => {
    const prefix = newPrefix();
    const long = { leaseMs: HOUR_MS }; // no lease runs out during the test: nothing else would wake the idle worker
    // The other worker is busy (one slot, taken), so the job it schedules is not its to run.
    const release = deferred();
    const busyStarted = deferred();
    const ranOnBusy: string[] = [];
    const busy = worker<string>(
      prefix,
      async (job) => {
        if (job.id !== 'blocker') return void ranOnBusy.push(job.id);
        busyStarted.resolve();
        await release.promise;
      },
      { queue: { concurrency: 1 }, store: long },
    );
    await busy.queue.schedule('blocker', 'b', { delayMs: 0 });
    await within(busyStarted.promise, 'the other worker to be busy');

    const ran = deferred<DelayedJob<string>>();
    const idle = sleeper<string>(prefix, (job) => ran.resolve(job), long);
    await idle.queue.schedule('in-an-hour', 'later', { delayMs: HOUR_MS });
    await idle.asleep();
    // Nothing for the idle worker before the busy worker's lease (an hour) or its own job (an hour).
    expect(await idle.store.nextDueAt()).toBeGreaterThan(monotonicClock.now() + HOUR_MS - 60_000);
    const wakesBefore = idle.wakes();

    await busy.queue.schedule('now', 'p', { delayMs: 0 });
    const job = await within(ran.promise, 'the idle worker to be woken and run the job', 2000);
    expect(job).toMatchObject({ id: 'now', payload: 'p', attempt: 1 });
    expect(idle.wakes()).toBeGreaterThan(wakesBefore);
    await until(async () => idle.queue.stats().completed === 1, 'the ack');
    expect(await idle.queue.get('in-an-hour')).toMatchObject({ payload: 'later' });
    expect(ranOnBusy).toEqual([]);
    release.resolve();
    expect([...idle.errors, ...busy.errors]).toEqual([]);
  });

  it('an idle worker sends no command while it sleeps; a job scheduled elsewhere for later does not wake it', async () => {
    const prefix = newPrefix();
    const idle = sleeper<string>(prefix, () => undefined);
    await idle.queue.schedule('in-an-hour', 'p', { delayMs: HOUR_MS });
    await idle.asleep();
    expect(await idle.store.nextDueAt()).toBeGreaterThan(monotonicClock.now() + HOUR_MS - 60_000); // no poll bound
    const other = worker<string>(prefix, () => undefined);
    await other.queue.schedule('in-two-hours', 'p', { delayMs: 2 * HOUR_MS }); // not earlier: not announced

    const before = idle.commands.length;
    const wakesBefore = idle.wakes();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(idle.commands.slice(before)).toEqual([]); // its main connection is silent while it sleeps
    expect(idle.wakes()).toBe(wakesBefore);
    // Both workers listen on the wake channel, each on a subscriber connection of its own.
    const [, subscribers] = (await client.pubsub('NUMSUB', `{${prefix}}:dq:wake`)) as [string, number];
    expect(Number(subscribers)).toBe(2);
    expect([...idle.errors, ...other.errors]).toEqual([]);
  });

  it('a worker whose wake subscriber lost its connection reads the due time again once it is back', async () => {
    const prefix = newPrefix();
    const ran = deferred<DelayedJob<string>>();
    const idle = sleeper<string>(prefix, (job) => ran.resolve(job), { leaseMs: HOUR_MS });
    await idle.asleep();
    const wakesBefore = idle.wakes();
    // Its two connections share the name; the subscriber is the one with a subscription.
    const subscriberIds = (await connections(idle.name)).filter((c) => c.get('sub') !== '0').map((c) => c.get('id'));
    expect(subscriberIds).toHaveLength(1);

    // Kill the subscriber, then schedule before it can be back: the announcement is lost.
    await client.client('KILL', 'ID', subscriberIds[0]!);
    const elsewhere = store<string>(prefix);
    await elsewhere.schedule({ id: 'while-away', payload: 'p', dueAt: monotonicClock.now(), attempt: 1 });
    const job = await within(ran.promise, 'the worker to run the job scheduled while its subscriber was away');
    expect(job).toMatchObject({ id: 'while-away', attempt: 1 });
    expect(idle.wakes()).toBeGreaterThan(wakesBefore);
    expect(idle.errors).toEqual([]);
  });

  /** The server's view (CLIENT LIST fields) of the connections named `name`. */
  async function connections(name: string): Promise<Map<string, string>[]> {
    const list = (await client.client('LIST')) as string;
    return list
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => new Map(line.trim().split(' ').map((field) => field.split('=', 2) as [string, string])))
      .filter((fields) => fields.get('name') === name);
  }

  it('refuses a stale claim with ERR_LEASE_EXPIRED and hands the job out again as its next attempt', async () => {
    const clock = new ManualClock(10_000);
    const lost = deferred<unknown>();
    const s = store<string>(newPrefix(), { redis: client, clock, leaseMs: 1000, onError: (e) => lost.resolve(e) });
    await s.schedule({ id: 'j', payload: 'p', dueAt: 10_000, attempt: 1 });
    expect(await s.claimDue(9_999, 10)).toEqual([]);
    const [stale] = await s.claimDue(10_000, 10);
    expect(stale?.job).toEqual({ id: 'j', payload: 'p', dueAt: 10_000, attempt: 1 });
    clock.advance(5000);
    // The renewal finds the lease gone and says so.
    expect(await within(lost.promise, 'the lost lease report')).toMatchObject({ code: 'ERR_LEASE_EXPIRED', batchId: 'j' });
    const [current] = await s.claimDue(clock.now(), 10);
    expect(current?.job).toEqual({ id: 'j', payload: 'p', dueAt: 10_000, attempt: 2 });
    expect(current?.token).not.toBe(stale?.token);
    await expect(s.ack(stale!)).rejects.toMatchObject({ code: 'ERR_LEASE_EXPIRED' });
    await expect(s.nack(stale!, { ...stale!.job, attempt: 2 })).rejects.toMatchObject({ code: 'ERR_LEASE_EXPIRED' });
    await expect(s.ack({ job: stale!.job, token: 'nope' })).rejects.toMatchObject({ code: 'ERR_UNKNOWN_BATCH' });
    expect(await s.size()).toBe(1);
    await s.ack(current!);
    expect(await s.size()).toBe(0);
    await expect(s.ack(current!)).rejects.toMatchObject({ code: 'ERR_UNKNOWN_BATCH' });
  });

  it('holds a schedule of a claimed id until the claim settles; a cancel from another process drops the retry', async () => {
    const clock = new ManualClock(0);
    const prefix = newPrefix();
    const here = store<string>(prefix, { redis: client, clock });
    const elsewhere = store<string>(prefix, { redis: client, clock });
    await here.schedule({ id: 'j', payload: 'v1', dueAt: 0, attempt: 1 });
    const [claim] = await here.claimDue(0, 10);
    await elsewhere.schedule({ id: 'j', payload: 'v2', dueAt: 0, attempt: 1 });
    expect(await here.claimDue(0, 10)).toEqual([]); // held behind the claim
    expect(await elsewhere.size()).toBe(2);
    expect(await elsewhere.nextDueAt()).toBe(clock.now() + LEASE_MS); // only the lease's end
    expect(await here.nack(claim!, { ...claim!.job, dueAt: 5, attempt: 2 })).toBe(false); // the new schedule stands
    const [next] = await here.claimDue(0, 10);
    expect(next?.job).toMatchObject({ payload: 'v2', attempt: 1 });

    expect(await elsewhere.cancel('j')).toBe(true); // marks the running job cancelled
    expect(await elsewhere.cancel('j')).toBe(false);
    expect(await elsewhere.get('j')).toMatchObject({ payload: 'v2' }); // still claimed
    expect(await here.nack(next!, { ...next!.job, dueAt: 5, attempt: 2 })).toBe(false);
    expect(await here.size()).toBe(0);
    expect(await here.nextDueAt()).toBeUndefined(); // nothing held: nothing to wake up for
  });

  it('validates its options and arguments', async () => {
    expect(() => new RedisDelayStore({ prefix: 'bad prefix' })).toThrow(expect.objectContaining({ argument: 'options.prefix' }));
    expect(() => new RedisDelayStore({ prefix: 'p', redis: client, leaseMs: -1 })).toThrow(expect.objectContaining({ argument: 'options.leaseMs' }));
    const s = store(newPrefix(), { redis: client });
    await expect(s.claimDue(0, 0)).rejects.toMatchObject({ argument: 'limit' });
  });
});
