/**
 * TimeSortedQueue by example: a key is due lingerMs after its oldest pending value, or at once
 * when it holds maxBatchSize values or maxBatchBytes bytes. Time is a ManualClock except where
 * the default (monotonic) clock itself is under test.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, TimeSortedQueue, monotonicClock } from '../../src/index.js';
import type { TimeSortedQueueOptions } from '../../src/index.js';
import { shown } from './helpers.js';

function setup(options: TimeSortedQueueOptions<string> = {}, start = 0): { clock: ManualClock; queue: TimeSortedQueue<string, string> } {
  const clock = new ManualClock(start);
  return { clock, queue: new TimeSortedQueue<string, string>({ clock, lingerMs: 3000, ...options }) };
}

describe('lingerMs', () => {
  it('makes a key due when its oldest pending value is lingerMs old, not before', () => {
    const { clock, queue } = setup();
    queue.publish('a', 'a1');
    clock.set(2000);
    queue.publish('a', 'a2'); // a newer value does not push the due time back

    clock.set(2999);
    expect(queue.pull()).toEqual([]);
    expect(queue.claim()).toEqual([]);
    clock.set(3000);
    expect(shown(queue.pull())).toEqual(['a: a1 a2']);
  });

  it('starts a new window for values published after the key was taken', () => {
    const { clock, queue } = setup();
    queue.publish('a', 'a1');
    clock.set(3000);
    expect(shown(queue.pull())).toEqual(['a: a1']);

    clock.set(3500);
    queue.publish('a', 'a2');
    clock.set(6499);
    expect(queue.pull()).toEqual([]);
    clock.set(6500);
    expect(shown(queue.pull())).toEqual(['a: a2']);
  });

  it('pull and claim return only the keys that are due, oldest first', () => {
    const { clock, queue } = setup();
    queue.publish('a', 'a1');
    clock.set(1000);
    queue.publish('b', 'b1');
    clock.set(1500);
    queue.publish('c', 'c1');

    clock.set(4000);
    expect(shown(queue.claim())).toEqual(['a: a1', 'b: b1']);
    expect(shown(queue.pull())).toEqual([]);
    expect(queue.size).toBe(1);
  });
});

describe('count and byte triggers', () => {
  it('a key reaching maxBatchSize values is due at once, not at the end of its window', () => {
    const { clock, queue } = setup({ maxBatchSize: 3 });
    queue.publish('a', 'a1');
    queue.publish('a', 'a2');
    queue.publish('b', 'b1');
    clock.set(10);
    expect(queue.pull()).toEqual([]);

    queue.publish('a', 'a3');
    expect(queue.nextDueIn()).toBe(0);
    expect(shown(queue.pull())).toEqual(['a: a1 a2 a3']);
    expect(queue.keyCount).toBe(1); // b still waits for its window
  });

  it('never hands out a batch larger than maxBatchSize: a fuller key gives its values over several batches', () => {
    const { queue } = setup({ maxBatchSize: 3 });
    for (let i = 1; i <= 7; i++) queue.publish('a', `a${i}`);

    // As the maxBatchSize TSDoc says, a due key gives out all its pending values, over several
    // batches: the key keeps its place until it is empty, so a7 goes now too, not a window later.
    const batches: string[] = [];
    for (let taken = queue.pull(); taken.length > 0; taken = queue.pull()) batches.push(...shown(taken));
    expect(batches).toEqual(['a: a1 a2 a3', 'a: a4 a5 a6', 'a: a7']);
  });

  it('a key reaching maxBatchBytes (as sizeOf counts) is due at once; batches stay within the cap', () => {
    const { queue } = setup({ maxBatchBytes: 10, sizeOf: (value: string) => value.length });
    queue.publish('a', 'aaaa');
    expect(queue.pull()).toEqual([]);

    queue.publish('a', 'bbbbbbb'); // 11 bytes pending: due, but only 'aaaa' fits in one batch
    expect(queue.pull().map((b) => b.values)).toEqual([['aaaa']]);
    expect(queue.pull().map((b) => b.values)).toEqual([['bbbbbbb']]);
  });
});

describe('taking keys that are not due', () => {
  function threeKeys(): TimeSortedQueue<string, string> {
    const { clock, queue } = setup();
    queue.publish('a', 'a1');
    clock.set(1000);
    queue.publish('b', 'b1');
    queue.publish('c', 'c1');
    return queue;
  }

  it('pull and claim with force: true take everything, in due order', () => {
    expect(shown(threeKeys().pull(undefined, { force: true }))).toEqual(['a: a1', 'b: b1', 'c: c1']);
    expect(shown(threeKeys().claim(undefined, { force: true }))).toEqual(['a: a1', 'b: b1', 'c: c1']);
  });

  it('drain() takes everything, within maxMessages', () => {
    const queue = threeKeys();
    expect(shown(queue.drain(2))).toEqual(['a: a1', 'b: b1']);
    expect(shown(queue.drain())).toEqual(['c: c1']);
    expect(queue.size).toBe(0);
  });
});

describe('nextDueAt and nextDueIn', () => {
  it('nextDueAt is the absolute due time on the queue clock; nextDueIn the time remaining', () => {
    const { clock, queue } = setup({}, 10_000);
    expect(queue.nextDueAt()).toBeUndefined();
    expect(queue.nextDueIn()).toBeUndefined();

    queue.publish('a', 'a1');
    expect(queue.nextDueAt()).toBe(13_000);
    expect(queue.nextDueIn()).toBe(3000);
    clock.set(14_000);
    expect(queue.nextDueAt()).toBe(13_000); // in the past: due already
    expect(queue.nextDueIn()).toBe(0);
  });

  it('nextDueIn is the time remaining, not the time elapsed (seed bug)', () => {
    const { clock, queue } = setup();
    queue.publish('a', 'a1');
    clock.set(1000);

    expect(queue.nextDueIn()).toBe(2000);
  });

  it('counts an outstanding lease and a nack delay', () => {
    const { clock, queue } = setup({ leaseMs: 500 });
    queue.publish('a', 'a1');
    clock.set(3000);
    const [batch] = queue.claim();
    expect(queue.nextDueAt()).toBe(3500);

    queue.nack(batch ?? 'missing', { delayMs: 200 });
    expect(queue.nextDueAt()).toBe(3200);
    expect(queue.nextDueIn()).toBe(200);
  });
});

describe('the default clock is monotonic', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('monotonicClock ignores steps of the wall clock', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const before = monotonicClock.now();
    vi.setSystemTime(Date.now() + 3_600_000);
    const afterForward = monotonicClock.now();
    vi.setSystemTime(Date.now() - 2 * 3_600_000);
    const afterBack = monotonicClock.now();

    expect(afterForward - before).toBeGreaterThanOrEqual(0);
    expect(afterForward - before).toBeLessThan(60_000);
    expect(afterBack - afterForward).toBeGreaterThanOrEqual(0);
    expect(afterBack - afterForward).toBeLessThan(60_000);
  });

  it('a wall-clock step of an hour neither releases a waiting key nor holds a due one', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const waiting = new TimeSortedQueue<string, string>({ lingerMs: 600_000 });
    const due = new TimeSortedQueue<string, string>({ lingerMs: 0 });
    waiting.publish('a', 'a1');
    due.publish('b', 'b1');

    vi.setSystemTime(Date.now() + 3_600_000);
    expect(waiting.pull()).toEqual([]);
    expect(waiting.nextDueIn()).toBeGreaterThan(540_000);
    vi.setSystemTime(Date.now() - 2 * 3_600_000);
    expect(waiting.pull()).toEqual([]);
    expect(shown(due.pull())).toEqual(['b: b1']);
  });
});

describe('onWake', () => {
  it('tells a listener dueInMs when a key is new and when a full batch makes it due earlier', () => {
    const { clock, queue } = setup({ maxBatchSize: 3 });
    const wakes: number[] = [];
    const unsubscribe = queue.onWake((dueInMs) => wakes.push(dueInMs));

    queue.publish('a', 'a1');
    clock.set(1000);
    queue.publish('a', 'a2'); // no new place: no wake
    queue.publish('b', 'b1');
    expect(wakes).toEqual([3000, 3000]);

    queue.publish('a', 'a3');
    expect(wakes).toEqual([3000, 3000, 0]);

    unsubscribe();
    queue.publish('c', 'c1');
    expect(wakes).toHaveLength(3);
  });
});
