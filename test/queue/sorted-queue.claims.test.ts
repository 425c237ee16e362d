/**
 * SortedQueue claims by example: claim, ack, nack, leases, stale settles, split, extendLease.
 * Every example runs on a ManualClock; leases are 1000 ms unless a test says otherwise.
 */
import { describe, expect, it } from 'vitest';
import { LeaseExpiredError, ManualClock, SortedQueue, UnknownBatchError } from '../../src/index.js';
import type { ClaimedBatch, SortedQueueOptions } from '../../src/index.js';
import { expectThrows, shown } from './helpers.js';

type Claimed = ClaimedBatch<string, string>;

function setup(options: SortedQueueOptions<number, string> = {}): { clock: ManualClock; queue: SortedQueue<number, string, string> } {
  const clock = new ManualClock(0);
  return { clock, queue: new SortedQueue<number, string, string>({ clock, leaseMs: 1000, ...options }) };
}

/** Claims and requires exactly one batch. */
function claimOne(queue: SortedQueue<number, string, string>, maxMessages?: number): Claimed {
  const batches = queue.claim(maxMessages);
  expect(batches).toHaveLength(1);
  return batches[0] as Claimed;
}

describe('claim and ack', () => {
  it('holds the values until ack removes them for good', () => {
    const { queue } = setup();
    queue.publish(1, 'a', 'a1');
    queue.publish(1, 'a', 'a2');
    const batch = claimOne(queue);

    expect(batch).toMatchObject({ key: 'a', values: ['a1', 'a2'], attempt: 1, leaseExpiresAt: 1000, enqueuedAt: 0 });
    expect(queue.counts()).toEqual({ pending: 0, claimed: 2, keys: 0 });
    queue.ack(batch);
    expect(queue.counts()).toEqual({ pending: 0, claimed: 0, keys: 0 });
    expect(queue.claim()).toEqual([]);
  });

  it('gives every claimed batch its own id', () => {
    const { queue } = setup();
    for (const key of ['a', 'b', 'c']) queue.publish(1, key, `${key}1`);

    const ids = queue.claim().map((b) => b.id);
    expect(new Set(ids).size).toBe(3);
  });
});

describe('nack', () => {
  it('puts the values back in front of the newer ones, at the key place they had, under the same id', () => {
    const { queue } = setup();
    queue.publish(5, 'a', 'a1');
    queue.publish(7, 'b', 'b1');
    const first = claimOne(queue, 1);
    queue.publish(9, 'a', 'a2');
    queue.nack(first);

    expect([...queue]).toEqual([
      { key: 'a', sortKey: 5, values: ['a1', 'a2'] },
      { key: 'b', sortKey: 7, values: ['b1'] },
    ]);
    // The returned batch is redelivered whole and alone, then the newer value.
    const again = claimOne(queue, 1);
    expect(again).toMatchObject({ id: first.id, values: ['a1'], attempt: 2 });
    expect(again.token).not.toBe(first.token);
    queue.ack(again);
    expect(shown(queue.claim())).toEqual(['b: b1', 'a: a2']);
  });

  it('with delayMs keeps the key out until then while other keys go on', () => {
    const { clock, queue } = setup();
    queue.publish(1, 'a', 'a1');
    queue.publish(2, 'b', 'b1');
    queue.nack(claimOne(queue, 1), { delayMs: 500 });

    expect(shown(queue.claim())).toEqual(['b: b1']);
    clock.advance(499);
    expect(queue.claim()).toEqual([]);
    expect(queue.size).toBe(1);
    clock.advance(1);
    expect(shown(queue.claim())).toEqual(['a: a1']);
  });

  it('with notBefore keeps the key out until that time on the queue clock', () => {
    const { clock, queue } = setup();
    queue.publish(1, 'a', 'a1');
    queue.nack(claimOne(queue), { notBefore: 2000 });

    clock.set(1999);
    expect(queue.pull()).toEqual([]);
    expect(queue.nextDueAt()).toBe(2000);
    clock.set(2000);
    expect(shown(queue.pull())).toEqual(['a: a1']);
  });
});

describe('per-key order', () => {
  it('claims none of a key’s newer values while a claim of it is outstanding', () => {
    const { queue } = setup();
    queue.publish(1, 'a', 'a1');
    const first = claimOne(queue);
    queue.publish(2, 'a', 'a2');
    queue.publish(3, 'b', 'b1');

    expect(shown(queue.claim())).toEqual(['b: b1']);
    expect(queue.size).toBe(1);
    queue.ack(first);
    expect(shown(queue.claim())).toEqual(['a: a2']);
  });

  it('is off with perKeyOrder: false: a key’s newer values are claimable at once', () => {
    const { queue } = setup({ perKeyOrder: false });
    queue.publish(1, 'a', 'a1');
    claimOne(queue);
    queue.publish(2, 'a', 'a2');

    expect(shown(queue.claim())).toEqual(['a: a2']);
    expect(queue.claimedCount).toBe(2);
  });
});

describe('leases', () => {
  it('an expired lease returns the batch by itself: same id, new token, next attempt, not merged with newer values', () => {
    const { clock, queue } = setup();
    queue.publish(1, 'a', 'a1');
    const first = claimOne(queue);
    queue.publish(2, 'a', 'a2');

    clock.advance(999);
    expect(queue.claimedCount).toBe(1);
    clock.advance(1);
    expect(queue.counts()).toEqual({ pending: 2, claimed: 0, keys: 1 });
    const again = claimOne(queue);
    expect(again).toMatchObject({ id: first.id, values: ['a1'], attempt: 2, leaseExpiresAt: 2000 });
    expect(again.token).not.toBe(first.token);
  });

  it('extendLease moves the lease to leaseMs from now', () => {
    const { clock, queue } = setup();
    queue.publish(1, 'a', 'a1');
    const batch = claimOne(queue);
    clock.advance(800);

    expect(queue.extendLease(batch, { leaseMs: 1000 })).toMatchObject({ id: batch.id, leaseExpiresAt: 1800 });
    clock.advance(900);
    expect(queue.claimedCount).toBe(1);
    queue.ack(batch);
    expect(queue.counts()).toEqual({ pending: 0, claimed: 0, keys: 0 });
  });

  it('a claim option leaseMs overrides the queue lease', () => {
    const { clock, queue } = setup();
    queue.publish(1, 'a', 'a1');
    expect(queue.claim(undefined, { leaseMs: 50 })[0]?.leaseExpiresAt).toBe(50);
    clock.advance(50);
    expect(queue.size).toBe(1);
  });
});

describe('a stale settle after the lease expired and the batch was claimed again', () => {
  function expiredAndReclaimed(): { queue: SortedQueue<number, string, string>; old: Claimed; current: Claimed } {
    const { clock, queue } = setup();
    queue.publish(1, 'a', 'a1');
    queue.publish(2, 'b', 'b1');
    const old = claimOne(queue, 1);
    clock.advance(1000);
    const current = claimOne(queue, 1);
    expect(current.id).toBe(old.id);
    return { queue, old, current };
  }

  it.each([
    ['ack with the old batch', (q: SortedQueue<number, string, string>, old: Claimed) => q.ack(old)],
    ['nack with the old batch', (q: SortedQueue<number, string, string>, old: Claimed) => q.nack(old)],
    ['ack with id and old token', (q: SortedQueue<number, string, string>, old: Claimed) => q.ack(old.id, { token: old.token })],
    ['nack with id and old token', (q: SortedQueue<number, string, string>, old: Claimed) => q.nack(old.id, { token: old.token })],
  ])('%s throws LeaseExpiredError and changes nothing', (_, settle) => {
    const { queue, old, current } = expiredAndReclaimed();

    expectThrows(() => settle(queue, old), LeaseExpiredError, { code: 'ERR_LEASE_EXPIRED', batchId: old.id });
    expect([queue.size, queue.claimedCount, queue.keyCount]).toEqual([1, 1, 1]);
    queue.checkInvariants();
    queue.ack(current);
    expect(queue.counts()).toEqual({ pending: 1, claimed: 0, keys: 1 });
  });

  it('is refused even before the batch is claimed again', () => {
    const { clock, queue } = setup();
    queue.publish(1, 'a', 'a1');
    const old = claimOne(queue);
    clock.advance(1000);

    expectThrows(() => queue.ack(old), LeaseExpiredError, { code: 'ERR_LEASE_EXPIRED' });
    expect(queue.counts()).toEqual({ pending: 1, claimed: 0, keys: 1 });
  });

  it('is refused as expired even after the new claim nacked the batch', () => {
    const { queue, old, current } = expiredAndReclaimed();
    queue.nack(current);

    expectThrows(() => queue.ack(old), LeaseExpiredError, { code: 'ERR_LEASE_EXPIRED' });
    expectThrows(() => queue.nack(old), LeaseExpiredError, { code: 'ERR_LEASE_EXPIRED' });
    expect(queue.counts()).toEqual({ pending: 2, claimed: 0, keys: 2 });
    expect(claimOne(queue, 1)).toMatchObject({ id: old.id, values: ['a1'], attempt: 3 });
  });
});

describe('split', () => {
  function claimedFive(): { queue: SortedQueue<number, string, string>; batch: Claimed } {
    const { queue } = setup();
    for (const value of ['a1', 'a2', 'a3', 'a4', 'a5']) queue.publish(1, 'a', value);
    return { queue, batch: claimOne(queue) };
  }

  it('replaces a claim by parts with ids id.1, id.2, … holding the values in order', () => {
    const { queue, batch } = claimedFive();
    const parts = queue.split(batch, [2, 3]);

    expect(parts.map((p) => [p.id, p.values, p.attempt])).toEqual([
      [`${batch.id}.1`, ['a1', 'a2'], 1],
      [`${batch.id}.2`, ['a3', 'a4', 'a5'], 1],
    ]);
    expectThrows(() => queue.ack(batch), UnknownBatchError, { code: 'ERR_UNKNOWN_BATCH' });
  });

  it('parts are acked on their own; a nacked part comes back alone under its id', () => {
    const { queue, batch } = claimedFive();
    const [first, second] = queue.split(batch, [2, 3]) as [Claimed, Claimed];
    queue.ack(first);
    expect(queue.claimedCount).toBe(3);
    queue.publish(1, 'a', 'a6');
    expect(queue.claim()).toEqual([]); // the second part is still out

    queue.nack(second);
    const again = claimOne(queue);
    expect(again).toMatchObject({ id: second.id, values: ['a3', 'a4', 'a5'], attempt: 2 });
    queue.ack(again);
    expect(shown(queue.claim())).toEqual(['a: a6']);
  });

  it('nacked parts come back in value order, whatever order they were nacked in', () => {
    const { queue, batch } = claimedFive();
    const [first, second, third] = queue.split(batch, [1, 1, 3]) as [Claimed, Claimed, Claimed];
    queue.nack(third);
    queue.nack(first);
    queue.nack(second);

    expect([...queue].map((e) => e.values)).toEqual([['a1', 'a2', 'a3', 'a4', 'a5']]);
    const ids: string[] = [];
    for (let claimed = queue.claim(); claimed.length > 0; claimed = queue.claim()) {
      for (const part of claimed) {
        ids.push(part.id);
        queue.ack(part);
      }
    }
    expect(ids).toEqual([first.id, second.id, third.id]);
  });

  it('a returned batch cut by a smaller claim, then split, still comes back in value order', () => {
    const { clock, queue } = setup({ leaseMs: 500 });
    for (const value of ['e0', 'e1', 'e2']) queue.publish(0, 'e', value);
    queue.nack(claimOne(queue, 3));
    const head = claimOne(queue, 2); // cuts the returned batch: [e0, e1] now, [e2] behind
    queue.split(head, [1, 1]);
    clock.advance(600); // both parts' lease runs out

    const order: string[] = [];
    for (let batches = queue.pull(); batches.length > 0; batches = queue.pull()) order.push(...batches.flatMap((b) => b.values));
    expect(order).toEqual(['e0', 'e1', 'e2']);
  });
});
