import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, InvalidArgumentError, QueueClosedError, QueueFullError } from '../../src/errors.js';
import type { Clock } from '../../src/time.js';
import { DelayQueue } from '../../src/timers/delay-queue.js';
import { MemoryDelayStore } from '../../src/timers/memory-delay-store.js';
import type { DelayedJob, DelayQueueOptions, DelayStore, JobContext } from '../../src/timers/delay-queue-options.js';

/** The faked `Date.now()`: fake timers set it to each timer's due time as they fire it. */
const fakeClock: Clock = { now: () => Date.now() };

const DAY_MS = 24 * 60 * 60 * 1000;

interface RunRecord {
  id: string;
  at: number;
  attempt: number;
}

/** A queue on the fake clock whose default handler records every run. */
function queueWith(options: Partial<DelayQueueOptions<string>> = {}) {
  const runs: RunRecord[] = [];
  const queue = new DelayQueue<string>({
    clock: fakeClock,
    handler: (job) => {
      runs.push({ id: job.id, at: Date.now(), attempt: job.attempt });
    },
    ...options,
  });
  return { queue, runs };
}

/** Moves time to `t` (ms since the test started), firing the timers due on the way and settling promises. */
async function advanceTo(t: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(t - Date.now());
}

/** Lets the runner take note of what just happened (it arms its timer on a later microtask). */
async function settle(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

/** A promise settled from outside, for handlers that take as long as the test says. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Every `setTimeout` armed from now on: the wake-ups the queue asks for. */
function spyOnTimers() {
  return vi.spyOn(globalThis, 'setTimeout');
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'], now: 0 });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('DelayQueue: when a job runs', () => {
  it('runs a job at its due time, not before', async () => {
    const { queue, runs } = queueWith();
    await queue.schedule('order-1', 'payload', { delayMs: 1000 });
    await advanceTo(999);
    expect(runs).toEqual([]);
    await advanceTo(1000);
    expect(runs).toEqual([{ id: 'order-1', at: 1000, attempt: 1 }]);
    expect(queue.size).toBe(0);
  });

  it('takes `at` as a time on the clock or a Date, and runs a past time at once', async () => {
    const { queue, runs } = queueWith();
    await advanceTo(100);
    await queue.schedule('clock-time', 'p', { at: 500 });
    await queue.schedule('date', 'p', { at: new Date(300) });
    await queue.schedule('past', 'p', { at: 50 });
    await advanceTo(1000);
    expect(runs).toEqual([
      { id: 'past', at: 100, attempt: 1 },
      { id: 'date', at: 300, attempt: 1 },
      { id: 'clock-time', at: 500, attempt: 1 },
    ]);
  });

  it('fires a delay of 40 days on time, not after 1 ms (timers are chained past 2^31-1 ms)', async () => {
    const { queue, runs } = queueWith();
    await queue.schedule('ride-rating', 'p', { delayMs: 40 * DAY_MS });
    await advanceTo(1);
    expect(runs).toEqual([]);
    await advanceTo(40 * DAY_MS - 1);
    expect(runs).toEqual([]);
    await advanceTo(40 * DAY_MS);
    expect(runs).toEqual([{ id: 'ride-rating', at: 40 * DAY_MS, attempt: 1 }]);
  });

  it('runs 100,000 jobs due at one instant in schedule order, in bounded batches, after one wake-up', async () => {
    const batchSize = 500;
    const claimSizes: number[] = [];
    const memory = new MemoryDelayStore<string>();
    const store: DelayStore<string> = {
      schedule: (job) => memory.schedule(job),
      cancel: (id) => memory.cancel(id),
      get: (id) => memory.get(id),
      size: () => memory.size(),
      claimDue: (now, limit) => {
        const claims = memory.claimDue(now, limit);
        if (claims.length > 0) claimSizes.push(claims.length);
        return claims;
      },
      ack: (claim) => memory.ack(claim),
      nack: (claim, retry) => memory.nack(claim, retry),
      nextDueAt: () => memory.nextDueAt(),
    };
    const ran: string[] = [];
    let ranBeforeOtherWork: number | undefined;
    const queue = new DelayQueue<number>({
      clock: fakeClock,
      store: store as DelayStore<unknown> as DelayStore<number>,
      concurrency: 1000,
      batchSize,
      handler: (job) => {
        ran.push(job.id);
        // Other work queued once the jobs start (an incoming request, say) must not wait for all of them.
        if (ran.length === 1) setImmediate(() => (ranBeforeOtherWork = ran.length));
      },
    });
    const ids = Array.from({ length: 100_000 }, (_, i) => `job-${i}`);
    const timers = spyOnTimers();
    for (const [i, id] of ids.entries()) await queue.schedule(id, i, { at: 5000 });

    await advanceTo(5000);
    await vi.runAllTimersAsync(); // the turns of the event loop between batches

    expect(ran).toEqual(ids);
    expect(timers).toHaveBeenCalledTimes(1);
    expect(Math.max(...claimSizes)).toBeLessThanOrEqual(batchSize);
    expect(ranBeforeOtherWork).toBeLessThanOrEqual(batchSize);
    expect(queue.size).toBe(0);
  });
});

describe('DelayQueue: schedule, reschedule, cancel, get', () => {
  it('replaces the job when an id is scheduled again: new payload, new due time, one run', async () => {
    const payloads: string[] = [];
    const { queue } = queueWith({ handler: (job) => void payloads.push(job.payload) });
    await queue.schedule('chat-7', 'first reply', { delayMs: 1000 });
    await advanceTo(600);
    await queue.schedule('chat-7', 'last reply', { delayMs: 1000 });
    expect(queue.size).toBe(1);
    await advanceTo(1599);
    expect(payloads).toEqual([]);
    await advanceTo(1600);
    expect(payloads).toEqual(['last reply']);
  });

  it('rescheduled later, a job runs only at its new time', async () => {
    const { queue, runs } = queueWith();
    await queue.schedule('a', 'p', { delayMs: 1000 });
    await queue.schedule('a', 'p', { delayMs: 5000 });
    await advanceTo(4999);
    expect(runs).toEqual([]);
    await advanceTo(5000);
    expect(runs).toEqual([{ id: 'a', at: 5000, attempt: 1 }]);
  });

  it('rescheduled earlier than the current head, a job re-arms the wake-up and runs on time', async () => {
    const { queue, runs } = queueWith();
    await queue.schedule('head', 'p', { delayMs: 5000 });
    await queue.schedule('a', 'p', { delayMs: 8000 });
    await settle();
    const timers = spyOnTimers();
    await queue.schedule('a', 'p', { delayMs: 1000 });
    await settle();
    expect(timers).toHaveBeenCalledTimes(1);
    expect(timers.mock.calls[0]?.[1]).toBe(1000);
    await advanceTo(6000);
    expect(runs).toEqual([
      { id: 'a', at: 1000, attempt: 1 },
      { id: 'head', at: 5000, attempt: 1 },
    ]);
  });

  it('cancel before the due time: the job never runs, and no timer is left', async () => {
    const { queue, runs } = queueWith();
    await queue.schedule('order-1', 'p', { delayMs: 1000 });
    await settle();
    expect(vi.getTimerCount()).toBe(1);
    expect(await queue.cancel('order-1')).toBe(true);
    expect(await queue.cancel('order-1')).toBe(false);
    expect(await queue.cancel('never-scheduled')).toBe(false);
    await settle();
    expect(vi.getTimerCount()).toBe(0);
    await advanceTo(2000);
    expect(runs).toEqual([]);
    expect(queue.stats()).toMatchObject({ scheduled: 1, cancelled: 1, completed: 0 });
  });

  it('get returns the stored job (frozen), size counts the jobs held', async () => {
    const { queue } = queueWith();
    await advanceTo(10);
    const job = await queue.schedule('a', 'payload-a', { delayMs: 1000 });
    await queue.schedule('b', 'payload-b', { at: 50 });
    expect(job).toEqual({ id: 'a', payload: 'payload-a', dueAt: 1010, attempt: 1 });
    expect(await queue.get('a')).toEqual(job);
    expect(Object.isFrozen(await queue.get('a'))).toBe(true);
    expect(await queue.get('unknown')).toBeUndefined();
    expect(queue.size).toBe(2);
    await advanceTo(60);
    expect(await queue.get('b')).toBeUndefined();
    expect(queue.size).toBe(1);
  });

  it('rejects a bad id or due time with InvalidArgumentError naming it, and changes nothing', async () => {
    const { queue } = queueWith();
    const bad: [unknown, unknown, string][] = [
      ['', { delayMs: 1 }, 'id'],
      [42, { delayMs: 1 }, 'id'],
      ['a', { delayMs: 1, at: 5 }, 'options'],
      ['a', {}, 'options'],
      ['a', undefined, 'options'],
      ['a', { delayMs: -1 }, 'options.delayMs'],
      ['a', { delayMs: Number.NaN }, 'options.delayMs'],
      ['a', { at: Number.POSITIVE_INFINITY }, 'options.at'],
      ['a', { at: new Date('not a date') }, 'options.at'],
      ['a', { at: '1000' }, 'options.at'],
    ];
    for (const [id, when, argument] of bad) {
      const attempt = queue.schedule(id as string, 'p', when as { delayMs: number });
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toMatchObject({ code: ErrorCode.INVALID_ARGUMENT, argument });
    }
    await expect(queue.cancel('')).rejects.toMatchObject({ argument: 'id' });
    expect(queue.size).toBe(0);
    expect(queue.stats().scheduled).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects a new id beyond maxJobs with QueueFullError, but still replaces a held id', async () => {
    const { queue } = queueWith({ maxJobs: 2 });
    await queue.schedule('a', 'p', { delayMs: 1000 });
    await queue.schedule('b', 'p', { delayMs: 1000 });
    await expect(queue.schedule('c', 'p', { delayMs: 1000 })).rejects.toBeInstanceOf(QueueFullError);
    await queue.schedule('a', 'p', { delayMs: 2000 });
    expect(queue.size).toBe(2);
    expect((await queue.get('a'))?.dueAt).toBe(2000);
  });

  it('validates its options, naming the one at fault', () => {
    const handler = (): void => {};
    const cases: [Partial<DelayQueueOptions<unknown>>, string][] = [
      [{ handler: undefined as unknown as () => void }, 'options.handler'],
      [{ handler, concurrency: 0 }, 'options.concurrency'],
      [{ handler, batchSize: 1.5 }, 'options.batchSize'],
      [{ handler, maxAttempts: 0 }, 'options.maxAttempts'],
      [{ handler, minDelayMs: -1 }, 'options.minDelayMs'],
      [{ handler, maxDelayMs: 2 ** 31 }, 'options.maxDelayMs'],
      [{ handler, minDelayMs: 100, maxDelayMs: 50 }, 'options.maxDelayMs'],
      [{ handler, maxDeadLetters: 0 }, 'options.maxDeadLetters'],
      [{ handler, ref: 1 as unknown as boolean }, 'options.ref'],
      [{ handler, clock: {} as Clock }, 'options.clock'],
      [{ handler, store: {} as DelayStore<unknown> }, 'options.store'],
      [{ handler, store: new MemoryDelayStore(), maxJobs: 10 }, 'options.maxJobs'],
    ];
    for (const [options, argument] of cases) {
      expect(() => new DelayQueue(options as DelayQueueOptions<unknown>)).toThrow(
        expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument }),
      );
    }
  });
});

describe('DelayQueue: the runner', () => {
  it('runs at most `concurrency` handlers at once', async () => {
    let running = 0;
    let maxRunning = 0;
    const { queue } = queueWith({
      concurrency: 3,
      handler: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 100));
        running--;
      },
    });
    for (let i = 0; i < 25; i++) await queue.schedule(`job-${i}`, 'p', { delayMs: 10 });
    await advanceTo(10);
    expect(queue.stats().running).toBe(3);
    await advanceTo(2000);
    expect(maxRunning).toBe(3);
    expect(queue.stats()).toMatchObject({ completed: 25, running: 0 });
  });

  it('removes a job only once its handler resolves', async () => {
    const done = deferred();
    const { queue } = queueWith({ handler: () => done.promise });
    await queue.schedule('a', 'p', { delayMs: 10 });
    await advanceTo(10);
    expect(queue.stats().running).toBe(1);
    expect(queue.size).toBe(1);
    expect(await queue.get('a')).toMatchObject({ id: 'a', attempt: 1 });
    done.resolve();
    await advanceTo(11);
    expect(queue.size).toBe(0);
    expect(await queue.get('a')).toBeUndefined();
    expect(queue.stats()).toMatchObject({ running: 0, completed: 1 });
  });

  it('retries a handler that throws with growing backoff, then hands the job to onDeadLetter', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const attempts: RunRecord[] = [];
    const deadLetters: [DelayedJob<string>, unknown][] = [];
    const failure = new Error('payment service down');
    const { queue } = queueWith({
      maxAttempts: 4,
      minDelayMs: 100,
      maxDelayMs: 10_000,
      handler: (job) => {
        attempts.push({ id: job.id, at: Date.now(), attempt: job.attempt });
        throw failure;
      },
      onDeadLetter: (job, error) => void deadLetters.push([job, error]),
    });
    await queue.schedule('order-1', 'p', { delayMs: 1000 });
    await advanceTo(10_000);
    // Waits are uniform in [minDelayMs, min(maxDelayMs, minDelayMs * 2^attempt)]; random 0.5 takes the middle.
    expect(attempts).toEqual([
      { id: 'order-1', at: 1000, attempt: 1 },
      { id: 'order-1', at: 1150, attempt: 2 },
      { id: 'order-1', at: 1400, attempt: 3 },
      { id: 'order-1', at: 1850, attempt: 4 },
    ]);
    expect(deadLetters).toEqual([[{ id: 'order-1', payload: 'p', dueAt: 1850, attempt: 4 }, failure]]);
    expect(queue.stats()).toMatchObject({ retried: 3, deadLettered: 1, completed: 0 });
    expect(queue.size).toBe(0);
    expect(queue.takeDeadLetters()).toEqual([]);
  });

  it('keeps dead jobs in a bounded list without onDeadLetter; when it is full the job stays scheduled', async () => {
    const failure = new Error('boom');
    const { queue } = queueWith({
      maxAttempts: 1,
      maxDeadLetters: 1,
      maxDelayMs: 60_000,
      handler: () => {
        throw failure;
      },
    });
    await queue.schedule('a', 'p', { delayMs: 10 });
    await queue.schedule('b', 'p', { delayMs: 20 });
    await advanceTo(100);
    // 'a' took the only place in the list; 'b' is kept, and tried again after maxDelayMs.
    expect(queue.size).toBe(1);
    expect(await queue.get('b')).toMatchObject({ attempt: 2, dueAt: 60_020 });
    expect(queue.takeDeadLetters()).toEqual([{ job: { id: 'a', payload: 'p', dueAt: 10, attempt: 1 }, error: failure, at: 10 }]);
    await advanceTo(60_020);
    expect(queue.takeDeadLetters()).toEqual([{ job: { id: 'b', payload: 'p', dueAt: 60_020, attempt: 2 }, error: failure, at: 60_020 }]);
    expect(queue.size).toBe(0);
    expect(queue.stats().deadLettered).toBe(2);
  });

  it('keeps the job in the list when onDeadLetter throws, and reports that error to onError', async () => {
    const errors: unknown[] = [];
    const hookFailure = new Error('dead-letter table unavailable');
    const { queue } = queueWith({
      maxAttempts: 1,
      handler: () => Promise.reject(new Error('boom')),
      onDeadLetter: () => Promise.reject(hookFailure),
      onError: (error) => errors.push(error),
    });
    await queue.schedule('a', 'p', { delayMs: 10 });
    await advanceTo(10);
    expect(errors).toEqual([hookFailure]);
    expect(queue.takeDeadLetters().map((letter) => letter.job.id)).toEqual(['a']);
  });

  it('follows a retryPolicy of its own: undefined dead-letters at once', async () => {
    const { queue, runs } = queueWith({
      retryPolicy: (error, attempt) => ((error as Error).message === 'transient' && attempt < 3 ? 50 : undefined),
      handler: (job) => {
        runs.push({ id: job.id, at: Date.now(), attempt: job.attempt });
        throw new Error(job.payload);
      },
    });
    await queue.schedule('t', 'transient', { delayMs: 0 });
    await queue.schedule('p', 'permanent', { delayMs: 0 });
    await advanceTo(1000);
    expect(runs).toEqual([
      { id: 't', at: 0, attempt: 1 },
      { id: 'p', at: 0, attempt: 1 },
      { id: 't', at: 50, attempt: 2 },
      { id: 't', at: 100, attempt: 3 },
    ]);
    expect(queue.takeDeadLetters().map((letter) => [letter.job.id, letter.job.attempt])).toEqual([
      ['p', 1],
      ['t', 3],
    ]);
  });

  it('reports a retryPolicy that answers nonsense to onError, and dead-letters the job', async () => {
    const errors: unknown[] = [];
    const { queue } = queueWith({
      retryPolicy: () => -1,
      onError: (error) => errors.push(error),
      handler: () => {
        throw new Error('boom');
      },
    });
    await queue.schedule('a', 'p', { delayMs: 0 });
    await advanceTo(10);
    expect(errors).toEqual([expect.objectContaining({ argument: 'options.retryPolicy(error, attempt)' })]);
    expect(queue.takeDeadLetters().map((letter) => letter.job.id)).toEqual(['a']);
  });

  it('cancel while a job runs aborts its signal; its failure is then neither retried nor dead-lettered', async () => {
    const started = deferred<JobContext>();
    const { queue } = queueWith({
      handler: async (_job, context) => {
        started.resolve(context);
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
        throw context.signal.reason;
      },
    });
    await queue.schedule('order-1', 'p', { delayMs: 10 });
    await advanceTo(10);
    const { signal } = await started.promise;
    expect(await queue.cancel('order-1')).toBe(true);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ code: ErrorCode.ABORTED });
    await advanceTo(200_000);
    expect(queue.stats()).toMatchObject({ retried: 0, deadLettered: 0, running: 0, cancelled: 1 });
    expect(queue.size).toBe(0);
  });

  it('scheduling an id while it runs: the new job waits for the run, and a failed run is not retried', async () => {
    const firstRun = deferred();
    const runs: RunRecord[] = [];
    const { queue } = queueWith({
      minDelayMs: 10,
      maxDelayMs: 10,
      handler: async (job) => {
        runs.push({ id: job.id, at: Date.now(), attempt: job.attempt });
        if (job.payload === 'old') await firstRun.promise;
      },
    });
    await queue.schedule('chat-7', 'old', { delayMs: 100 });
    await advanceTo(100);
    await queue.schedule('chat-7', 'new', { delayMs: 50 });
    expect(await queue.get('chat-7')).toMatchObject({ payload: 'new', dueAt: 150 });
    expect(queue.size).toBe(2);
    await advanceTo(400);
    expect(runs).toHaveLength(1); // the new job is due, but one job id never runs twice at once
    firstRun.reject(new Error('failed, and superseded'));
    await advanceTo(401);
    expect(runs).toEqual([
      { id: 'chat-7', at: 100, attempt: 1 },
      { id: 'chat-7', at: 400, attempt: 1 },
    ]);
    await advanceTo(1000);
    expect(runs).toHaveLength(2);
    expect(queue.stats()).toMatchObject({ retried: 0, completed: 1 });
  });

  it('reports a failing store to onError and tries it again after maxDelayMs', async () => {
    const errors: unknown[] = [];
    const memory = new MemoryDelayStore<string>();
    const outage = new Error('connection lost');
    let failures = 1;
    const store: DelayStore<string> = Object.assign(Object.create(memory) as MemoryDelayStore<string>, {
      claimDue: (now: number, limit: number) => {
        if (failures-- > 0) throw outage;
        return memory.claimDue(now, limit);
      },
      schedule: (job: DelayedJob<string>) => memory.schedule(job),
      nextDueAt: () => memory.nextDueAt(),
      ack: memory.ack.bind(memory),
    });
    await memory.schedule({ id: 'a', payload: 'p', dueAt: 0, attempt: 1 });
    const { runs } = queueWith({ store, maxDelayMs: 5000, onError: (error) => errors.push(error) });
    await advanceTo(4999);
    expect(errors).toEqual([outage]);
    expect(runs).toEqual([]);
    await advanceTo(5000);
    expect(runs).toEqual([{ id: 'a', at: 5000, attempt: 1 }]);
  });

  it('runs the jobs a store already holds when it starts (a persistent store after a restart)', async () => {
    const store = new MemoryDelayStore<string>();
    store.schedule({ id: 'overdue', payload: 'p', dueAt: 0, attempt: 2 });
    store.schedule({ id: 'later', payload: 'p', dueAt: 300, attempt: 1 });
    await advanceTo(100);
    const { runs } = queueWith({ store });
    await advanceTo(300);
    expect(runs).toEqual([
      { id: 'overdue', at: 100, attempt: 2 },
      { id: 'later', at: 300, attempt: 1 },
    ]);
  });
});

/**
 * A store shared with "another process": `elsewhere(job)` stores a job behind the queue's back,
 * `wake()` calls the listeners the queue gave `onWake`, and `reads` counts `nextDueAt()` calls.
 * While `slowReads.gate` is set, `nextDueAt()` answers what it read only once the gate opens (a
 * network round trip that another process overtakes).
 */
function sharedStore() {
  const memory = new MemoryDelayStore<string>();
  const listeners = new Set<() => void>();
  const counts = { reads: 0, subscribed: 0 };
  const slowReads: { gate?: Promise<void> } = {};
  const store: DelayStore<string> = {
    schedule: (job) => memory.schedule(job),
    cancel: (id) => memory.cancel(id),
    get: (id) => memory.get(id),
    size: () => memory.size(),
    claimDue: (now, limit) => memory.claimDue(now, limit),
    ack: (claim) => memory.ack(claim),
    nack: (claim, retry) => memory.nack(claim, retry),
    nextDueAt: () => {
      counts.reads++;
      const at = memory.nextDueAt();
      return slowReads.gate === undefined ? at : slowReads.gate.then(() => at);
    },
    onWake: (listener) => {
      counts.subscribed++;
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    store,
    counts,
    listeners,
    slowReads,
    elsewhere: (id: string, dueAt: number) => memory.schedule({ id, payload: 'elsewhere', dueAt, attempt: 1 }),
    wake: () => {
      for (const listener of listeners) listener();
    },
  };
}

describe('DelayQueue: a store shared with other processes (onWake)', () => {
  it('a wake makes the queue read nextDueAt again and re-arm earlier', async () => {
    const shared = sharedStore();
    const { queue, runs } = queueWith({ store: shared.store });
    expect(shared.listeners.size).toBe(1);
    await queue.schedule('late', 'p', { at: 10_000 });
    await settle();
    const timers = spyOnTimers();
    const readsAsleep = shared.counts.reads;

    shared.elsewhere('early', 100); // another process: this queue's timer still says 10,000
    await advanceTo(50);
    expect(shared.counts.reads).toBe(readsAsleep); // asleep means no reads
    shared.wake();
    await settle();
    expect(shared.counts.reads).toBe(readsAsleep + 1);
    expect(timers).toHaveBeenCalledTimes(1);
    expect(timers.mock.calls[0]?.[1]).toBe(50); // re-armed at 100, 50 ms from now
    await advanceTo(100);
    expect(runs).toEqual([{ id: 'early', at: 100, attempt: 1 }]);
    await advanceTo(10_000);
    expect(runs.map((run) => run.id)).toEqual(['early', 'late']);
  });

  it('a wake that finds nothing earlier keeps the timer; a burst of wakes shares its reads', async () => {
    const shared = sharedStore();
    const { queue, runs } = queueWith({ store: shared.store });
    await queue.schedule('head', 'p', { at: 1000 });
    await settle();
    const timers = spyOnTimers();
    shared.elsewhere('later', 5000);
    const before = shared.counts.reads;
    for (let i = 0; i < 10; i++) shared.wake();
    await settle();
    expect(shared.counts.reads - before).toBeLessThanOrEqual(2); // one read in flight, at most one after it
    expect(timers).not.toHaveBeenCalled(); // 5000 is not earlier than 1000
    await advanceTo(1000);
    expect(runs).toEqual([{ id: 'head', at: 1000, attempt: 1 }]);
    await advanceTo(5000);
    expect(runs.map((run) => run.id)).toEqual(['head', 'later']);
  });

  it('a wake arms the timer of a queue that held no job; close() unsubscribes', async () => {
    const shared = sharedStore();
    const { queue, runs } = queueWith({ store: shared.store });
    await settle();
    expect(vi.getTimerCount()).toBe(0);
    shared.elsewhere('from-elsewhere', 300);
    shared.wake();
    await settle();
    expect(vi.getTimerCount()).toBe(1);
    await advanceTo(300);
    expect(runs).toEqual([{ id: 'from-elsewhere', at: 300, attempt: 1 }]);
    await queue.close();
    expect(shared.listeners.size).toBe(0);
    expect(shared.counts.subscribed).toBe(1);
  });

  it('a wake that overtakes the runner\'s own read is not lost: the runner reads again after it', async () => {
    const shared = sharedStore();
    const { queue, runs } = queueWith({ store: shared.store });
    await settle();
    const gate = deferred();
    shared.slowReads.gate = gate.promise;
    await queue.schedule('late', 'p', { at: 10_000 });
    await settle(); // the runner's read of nextDueAt (10,000) is in flight
    shared.elsewhere('early', 200);
    shared.wake(); // while the runner is busy: it must look again once its read is in
    const reads = shared.counts.reads;
    delete shared.slowReads.gate;
    gate.resolve();
    await settle();
    expect(shared.counts.reads).toBe(reads + 1);
    await advanceTo(200);
    expect(runs).toEqual([{ id: 'early', at: 200, attempt: 1 }]);
  });

  it('a wake whose read fails is reported, and the queue looks again after maxDelayMs', async () => {
    const shared = sharedStore();
    const errors: unknown[] = [];
    const { runs } = queueWith({ store: shared.store, maxDelayMs: 5000, onError: (error) => errors.push(error) });
    await settle();
    const outage = new Error('connection lost');
    const read = shared.store.nextDueAt;
    shared.store.nextDueAt = () => {
      shared.store.nextDueAt = read;
      throw outage;
    };
    shared.elsewhere('x', 100);
    shared.wake();
    await settle();
    expect(errors).toEqual([outage]);
    await advanceTo(4999);
    expect(runs).toEqual([]);
    await advanceTo(5000);
    expect(runs).toEqual([{ id: 'x', at: 5000, attempt: 1 }]);
  });

  it('rejects a store whose onWake is not a function', () => {
    const store = Object.assign(new MemoryDelayStore<unknown>(), { onWake: 1 }) as unknown as DelayStore<unknown>;
    expect(() => new DelayQueue({ handler: () => undefined, store })).toThrow(
      expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument: 'options.store' }),
    );
  });
});

describe('DelayQueue: timers and the process', () => {
  it('holds no timer while it holds no job', async () => {
    const { queue, runs } = queueWith({ ref: true });
    expect(vi.getTimerCount()).toBe(0);
    await queue.schedule('a', 'p', { delayMs: 100 });
    await settle();
    expect(vi.getTimerCount()).toBe(1);
    await advanceTo(100);
    expect(runs).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('unrefs its timer by default; with ref: true the process waits for scheduled jobs', async () => {
    const timers = spyOnTimers();
    const { queue: unrefd } = queueWith();
    await unrefd.schedule('a', 'p', { delayMs: 100 });
    const { queue: refd } = queueWith({ ref: true });
    await refd.schedule('a', 'p', { delayMs: 100 });
    await settle();
    const handles = timers.mock.results.map((result) => (result.value as NodeJS.Timeout).hasRef());
    expect(handles).toEqual([false, true]);
  });
});

describe('DelayQueue: close()', () => {
  it('waits for running handlers, starts nothing more, and refuses new schedules', async () => {
    const done = deferred();
    const { queue, runs } = queueWith({
      concurrency: 1,
      handler: async (job) => {
        runs.push({ id: job.id, at: Date.now(), attempt: job.attempt });
        await done.promise;
      },
    });
    await queue.schedule('running', 'p', { delayMs: 10 });
    await queue.schedule('due-next', 'p', { delayMs: 10 });
    await queue.schedule('later', 'p', { delayMs: 500 });
    await advanceTo(10);
    let closed = false;
    const closing = queue.close().then(() => (closed = true));
    await advanceTo(100);
    expect(closed).toBe(false);
    await expect(queue.schedule('new', 'p', { delayMs: 1 })).rejects.toBeInstanceOf(QueueClosedError);
    done.resolve();
    await closing;
    await advanceTo(1000);
    expect(runs.map((run) => run.id)).toEqual(['running']);
    expect(queue.closed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    expect(queue.size).toBe(2);
  });

  it('gives up after timeoutMs: the handlers still running see their signal abort', async () => {
    let signal: AbortSignal | undefined;
    const { queue } = queueWith({
      handler: (_job, context) => {
        signal = context.signal;
        return new Promise(() => {});
      },
    });
    await queue.schedule('stuck', 'p', { delayMs: 0 });
    await advanceTo(1);
    let closed = false;
    void queue.close({ timeoutMs: 1000 }).then(() => (closed = true));
    await advanceTo(1000);
    expect(closed).toBe(false);
    expect(signal?.aborted).toBe(false);
    await advanceTo(1001);
    expect(closed).toBe(true);
    expect(signal?.reason).toMatchObject({ code: ErrorCode.ABORTED });
  });
});
