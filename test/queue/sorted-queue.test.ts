/**
 * SortedQueue by example: places and pulls, options, counters. Claims are in
 * sorted-queue.claims.test.ts, bad input in bad-input.test.ts; the property test checks the same
 * rules on random command sequences against a reference model.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, QueueClosedError, QueueFullError, SortedQueue, UnknownBatchError } from '../../src/index.js';
import type { SortedQueueOptions } from '../../src/index.js';
import { expectThrows, shown } from './helpers.js';

function queueOf<S = number>(options: SortedQueueOptions<S, string> = {}): SortedQueue<S, string, string> {
  return new SortedQueue<S, string, string>({ clock: new ManualClock(0), ...options });
}

/** Publishes `[sortKey, key, value]` triples in order. */
function publishAll<S>(queue: SortedQueue<S, string, string>, entries: [S, string, string][]): void {
  for (const [sortKey, key, value] of entries) queue.publish(sortKey, key, value);
}

/** The queue's entries as `[key, sortKey]`, in place order. */
const places = <S>(queue: SortedQueue<S, string, string>): [string, S][] => [...queue].map((e) => [e.key, e.sortKey]);

describe('publish: a key has one place', () => {
  it('sits at the smallest sort key among its pending values, with all its values', () => {
    const queue = queueOf();
    publishAll(queue, [[5, 'a', 'a1'], [3, 'b', 'b1'], [7, 'a', 'a2']]);

    expect(places(queue)).toEqual([['b', 3], ['a', 5]]);
    expect(queue.keyCount).toBe(2);
    expect(shown(queue.pull())).toEqual(['b: b1', 'a: a1 a2']);
  });

  it('breaks ties between keys by publish order (FIFO)', () => {
    const queue = queueOf();
    publishAll(queue, [[1, 'z', 'z1'], [1, 'x', 'x1'], [1, 'y', 'y1'], [2, 'w', 'w1'], [1, 'w', 'w2']]);

    // w moved to 1 with its second value, published after the others: it ties last.
    expect(places(queue)).toEqual([['z', 1], ['x', 1], ['y', 1], ['w', 1]]);
  });

  it('is not moved by a sort key that is not smaller, even an equal one', () => {
    const queue = queueOf();
    publishAll(queue, [[2, 'a', 'a1'], [2, 'b', 'b1'], [2, 'a', 'a2'], [9, 'a', 'a3']]);

    expect(places(queue)).toEqual([['a', 2], ['b', 2]]);
  });

  it('moves earlier with a smaller sort key', () => {
    const queue = queueOf();
    publishAll(queue, [[5, 'a', 'a1'], [3, 'b', 'b1'], [1, 'a', 'a2']]);

    expect(places(queue)).toEqual([['a', 1], ['b', 3]]);
    expect(shown(queue.pull())).toEqual(['a: a1 a2', 'b: b1']);
  });

  it('starts afresh once the key was taken: the old place is forgotten', () => {
    const queue = queueOf();
    publishAll(queue, [[1, 'a', 'a1'], [5, 'b', 'b1']]);
    queue.pull(1);
    queue.publish(9, 'a', 'a2');

    expect(places(queue)).toEqual([['b', 5], ['a', 9]]);
  });
});

describe('pull(maxMessages)', () => {
  const abc: [number, string, string][] = [[1, 'a', 'a1'], [1, 'a', 'a2'], [2, 'b', 'b1'], [2, 'b', 'b2'], [2, 'b', 'b3'], [3, 'c', 'c1']];

  it('takes whole batches in place order, at most maxMessages values in all', () => {
    const queue = queueOf();
    publishAll(queue, abc);

    expect(shown(queue.pull(5))).toEqual(['a: a1 a2', 'b: b1 b2 b3']);
    expect(shown(queue.pull(5))).toEqual(['c: c1']);
    expect(queue.pull(5)).toEqual([]);
  });

  it('stops at the first batch that does not fit, without skipping ahead to a smaller one', () => {
    const queue = queueOf();
    publishAll(queue, abc);

    // b (3 values) does not fit in the 2 left; c (1 value) would, but is behind b.
    expect(shown(queue.pull(4))).toEqual(['a: a1 a2']);
    expect(places(queue)).toEqual([['b', 2], ['c', 3]]);
  });

  it('gives a head key with more than maxMessages values its first ones; the rest keep the place', () => {
    const queue = queueOf();
    publishAll(queue, [[1, 'a', 'a1'], [1, 'a', 'a2'], [1, 'a', 'a3'], [2, 'b', 'b1'], [0, 'a', 'a4']]);

    expect(shown(queue.pull(3))).toEqual(['a: a1 a2 a3']);
    expect(places(queue)).toEqual([['a', 0], ['b', 2]]);
    expect(shown(queue.pull(3))).toEqual(['a: a4', 'b: b1']);
  });

  it('takes everything, one batch per key, without a bound', () => {
    const queue = queueOf();
    publishAll(queue, abc);

    expect(shown(queue.pull())).toEqual(['a: a1 a2', 'b: b1 b2 b3', 'c: c1']);
    expect(queue.size).toBe(0);
    expect(queue.keyCount).toBe(0);
  });
});

describe('inspecting the queue', () => {
  it('counts pending values, keys and claimed values', () => {
    const queue = queueOf();
    publishAll(queue, [[1, 'a', 'a1'], [1, 'a', 'a2'], [2, 'b', 'b1']]);
    expect(queue.counts()).toEqual({ pending: 3, claimed: 0, keys: 2 });

    queue.claim(2);
    expect([queue.size, queue.claimedCount, queue.keyCount]).toEqual([1, 2, 1]);
    expect(queue.counts()).toEqual({ pending: 1, claimed: 2, keys: 1 });
  });

  it('peek() shows the first key and a copy of its values, taking nothing', () => {
    const queue = queueOf();
    expect(queue.peek()).toBeUndefined();
    publishAll(queue, [[4, 'b', 'b1'], [3, 'a', 'a1'], [5, 'a', 'a2']]);

    const head = queue.peek();
    expect(head).toEqual({ key: 'a', sortKey: 3, values: ['a1', 'a2'] });
    (head?.values as string[]).push('intruder');
    expect(queue.size).toBe(3);
    expect(shown(queue.pull(2))).toEqual(['a: a1 a2']);
  });

  it('iterates keys in place order with copies of their values', () => {
    const queue = queueOf();
    publishAll(queue, [[3, 'c', 'c1'], [1, 'a', 'a1'], [2, 'b', 'b1'], [1, 'a', 'a2']]);

    expect([...queue]).toEqual([
      { key: 'a', sortKey: 1, values: ['a1', 'a2'] },
      { key: 'b', sortKey: 2, values: ['b1'] },
      { key: 'c', sortKey: 3, values: ['c1'] },
    ]);
  });

  it('remove(key) returns its pending values oldest first and leaves the others', () => {
    const queue = queueOf();
    publishAll(queue, [[1, 'a', 'a1'], [2, 'b', 'b1'], [3, 'a', 'a2']]);

    expect(queue.remove('a')).toEqual(['a1', 'a2']);
    expect(queue.remove('a')).toEqual([]);
    expect(queue.remove('nobody')).toEqual([]);
    expect(places(queue)).toEqual([['b', 2]]);
    expect(queue.counts()).toEqual({ pending: 1, claimed: 0, keys: 1 });
  });

  it('remove(key) takes nacked values too, but leaves claimed ones claimed', () => {
    const queue = queueOf();
    publishAll(queue, [[1, 'a', 'a1'], [1, 'b', 'b1']]);
    const [a1, b1] = queue.claim();
    queue.publish(2, 'a', 'a2');
    queue.nack(b1 ?? 'missing');

    expect(queue.remove('a')).toEqual(['a2']);
    expect(queue.remove('b')).toEqual(['b1']);
    expect(queue.counts()).toEqual({ pending: 0, claimed: 1, keys: 0 });
    queue.ack(a1 ?? 'missing');
    expect(queue.claimedCount).toBe(0);
  });

  it('clear() drops pending values and claims; the claims become unknown', () => {
    const queue = queueOf();
    publishAll(queue, [[1, 'a', 'a1'], [2, 'b', 'b1']]);
    const [claimed] = queue.claim(1);
    queue.clear();

    expect(queue.counts()).toEqual({ pending: 0, claimed: 0, keys: 0 });
    expect([...queue]).toEqual([]);
    expect(() => queue.ack(claimed ?? 'missing')).toThrow(UnknownBatchError);
    queue.publish(1, 'a', 'again');
    expect(shown(queue.pull())).toEqual(['a: again']);
  });

  it('close() refuses publishes with QueueClosedError; claims and settles go on', () => {
    const queue = queueOf();
    queue.publish(1, 'a', 'a1');
    const [claimed] = queue.claim();
    queue.close();

    expect(queue.closed).toBe(true);
    expectThrows(() => queue.publish(2, 'b', 'b1'), QueueClosedError, { code: 'ERR_QUEUE_CLOSED' });
    expect(queue.keyCount).toBe(0);
    queue.ack(claimed ?? 'missing');
    expect(queue.claimedCount).toBe(0);
  });
});

describe('comparator option', () => {
  it('orders string sort keys', () => {
    const queue = queueOf<string>({ compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0) });
    publishAll(queue, [['2026-03-01', 'march', 'm'], ['2026-01-15', 'january', 'j'], ['2026-02-01', 'february', 'f']]);

    expect(shown(queue.pull())).toEqual(['january: j', 'february: f', 'march: m']);
  });

  it('orders [priority, weight] tuples, priority first', () => {
    type Tuple = [priority: number, weight: number];
    const queue = queueOf<Tuple>({ compare: (a, b) => a[0] - b[0] || a[1] - b[1] });
    publishAll<Tuple>(queue, [[[2, 1], 'c', 'c1'], [[1, 9], 'b', 'b1'], [[1, 3], 'a', 'a1'], [[1, 3], 'd', 'd1']]);

    expect(places(queue)).toEqual([['a', [1, 3]], ['d', [1, 3]], ['b', [1, 9]], ['c', [2, 1]]]);
  });

  it('makes a priority queue: highest priority first, FIFO within a priority', () => {
    const queue = queueOf({ compare: (a, b) => b - a });
    publishAll(queue, [[1, 'low', 'l'], [10, 'urgent', 'u'], [5, 'mid1', 'm1'], [5, 'mid2', 'm2']]);
    queue.publish(20, 'low', 'l2'); // an urgent value lifts its whole key

    expect(shown(queue.pull())).toEqual(['low: l l2', 'urgent: u', 'mid1: m1', 'mid2: m2']);
  });
});

describe('upTo option', () => {
  it('takes only keys whose place is at most upTo, for pull and claim', () => {
    const queue = queueOf();
    publishAll(queue, [[1, 'a', 'a1'], [5, 'b', 'b1'], [10, 'c', 'c1'], [6, 'd', 'd1']]);

    expect(shown(queue.pull(undefined, { upTo: 5 }))).toEqual(['a: a1', 'b: b1']);
    expect(shown(queue.claim(undefined, { upTo: 5 }))).toEqual([]);
    expect(shown(queue.claim(undefined, { upTo: 6 }))).toEqual(['d: d1']);
    expect(places(queue)).toEqual([['c', 10]]);
  });
});

describe('batch caps', () => {
  it('maxBatchSize splits a key into batches of at most that many values, in order', () => {
    const queue = queueOf({ maxBatchSize: 2 });
    publishAll(queue, [[1, 'a', 'a1'], [1, 'a', 'a2'], [1, 'a', 'a3'], [1, 'a', 'a4'], [1, 'a', 'a5'], [2, 'b', 'b1']]);

    expect(shown(queue.pull())).toEqual(['a: a1 a2', 'b: b1']);
    expect(shown(queue.claim())).toEqual(['a: a3 a4']);
    expect(queue.size).toBe(1);
  });

  it('maxBatchBytes with sizeOf fills a batch up to the byte cap; a larger value goes alone', () => {
    const queue = queueOf({ maxBatchBytes: 10, sizeOf: (value: string) => value.length });
    publishAll(queue, [[1, 'a', 'aaaa'], [1, 'a', 'bbbbbb'], [1, 'a', 'cc'], [1, 'a', 'x'.repeat(15)], [1, 'a', 'dd']]);

    const batches: string[][] = [];
    for (let taken = queue.pull(); taken.length > 0; taken = queue.pull()) batches.push(...taken.map((b) => b.values));
    expect(batches).toEqual([['aaaa', 'bbbbbb'], ['cc'], ['x'.repeat(15)], ['dd']]);
  });
});

describe('maxPending', () => {
  it('throws QueueFullError past the bound and stores nothing', () => {
    const queue = queueOf({ maxPending: 2 });
    publishAll(queue, [[1, 'a', 'a1'], [2, 'b', 'b1']]);

    expectThrows(() => queue.publish(0, 'c', 'c1'), QueueFullError, { code: 'ERR_QUEUE_FULL', limit: 2 });
    expect(places(queue)).toEqual([['a', 1], ['b', 2]]);
    expect(queue.counts()).toEqual({ pending: 2, claimed: 0, keys: 2 });
  });

  it('counts claimed values until they are acked', () => {
    const queue = queueOf({ maxPending: 1 });
    queue.publish(1, 'a', 'a1');
    const [claimed] = queue.claim();

    expect(() => queue.publish(1, 'b', 'b1')).toThrow(QueueFullError);
    queue.ack(claimed ?? 'missing');
    queue.publish(1, 'b', 'b1');
    expect(queue.size).toBe(1);
  });
});
