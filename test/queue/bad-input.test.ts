/**
 * Bad input, as a table: every case names the error class and its stable code, and shows the
 * queue unchanged afterwards (counters, entries, invariants).
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, ManualClock, SortedQueue, TimeSortedQueue, UnknownBatchError } from '../../src/index.js';
import type { ClaimedBatch, DuebatchError } from '../../src/index.js';
import { expectThrows, snapshot } from './helpers.js';

type Queue = SortedQueue<number, string, string>;
type Claimed = ClaimedBatch<string, string>;

interface Case {
  name: string;
  /** Runs before the snapshot, e.g. to settle the claim once. */
  prepare?: (queue: Queue, claimed: Claimed) => void;
  act: (queue: Queue, claimed: Claimed) => unknown;
  error: abstract new (...args: never[]) => DuebatchError;
  props: Record<string, unknown>;
}

/** Three keys, the first of them claimed. */
function populated(options: { sizeOf?: (value: string) => number } = {}): { queue: Queue; claimed: Claimed } {
  const queue = new SortedQueue<number, string, string>({ clock: new ManualClock(0), leaseMs: 1000, ...options });
  queue.publish(1, 'a', 'a1');
  queue.publish(2, 'b', 'b1');
  queue.publish(2, 'b', 'b2');
  queue.publish(3, 'c', 'c1');
  const [claimed] = queue.claim(1);
  if (claimed === undefined) throw new Error('setup: nothing claimed');
  return { queue, claimed };
}

/** A batch claimed from a fresh queue with the same keys and values. */
function otherQueuesBatch(): Claimed {
  return populated().claimed;
}

const invalid = (argument: string): Pick<Case, 'error' | 'props'> => ({
  error: InvalidArgumentError,
  props: { code: 'ERR_INVALID_ARGUMENT', argument },
});
const unknownBatch: Pick<Case, 'error' | 'props'> = { error: UnknownBatchError, props: { code: 'ERR_UNKNOWN_BATCH' } };

const publishCases: Case[] = [
  { name: 'NaN sort key', act: (q) => q.publish(Number.NaN, 'a', 'x'), ...invalid('sortKey') },
  { name: 'undefined sort key', act: (q) => q.publish(undefined as unknown as number, 'a', 'x'), ...invalid('sortKey') },
  { name: 'null key', act: (q) => q.publish(1, null as unknown as string, 'x'), ...invalid('key') },
  { name: 'undefined key', act: (q) => q.publish(1, undefined as unknown as string, 'x'), ...invalid('key') },
  { name: 'undefined value', act: (q) => q.publish(1, 'a', undefined as unknown as string), ...invalid('value') },
  { name: 'a string sort key without compare', act: (q) => q.publish('1' as unknown as number, 'a', 'x'), ...invalid('sortKey') },
];

const badMaxMessages: unknown[] = [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3'];
const maxMessagesCases: Case[] = badMaxMessages.flatMap((max): Case[] => [
  { name: `pull(${String(max)})`, act: (q) => q.pull(max as number), ...invalid('maxMessages') },
  { name: `claim(${String(max)})`, act: (q) => q.claim(max as number), ...invalid('maxMessages') },
]);

const settleCases: Case[] = [
  { name: 'ack of an unknown id', act: (q) => q.ack('no-such-batch'), error: UnknownBatchError, props: { code: 'ERR_UNKNOWN_BATCH', batchId: 'no-such-batch' } },
  { name: 'nack of an unknown id', act: (q) => q.nack('no-such-batch'), ...unknownBatch },
  { name: 'ack of an already acked id', prepare: (q, c) => q.ack(c), act: (q, c) => q.ack(c.id), ...unknownBatch },
  { name: 'ack of an already acked batch', prepare: (q, c) => q.ack(c), act: (q, c) => q.ack(c), ...unknownBatch },
  { name: 'nack of an already nacked id', prepare: (q, c) => q.nack(c), act: (q, c) => q.nack(c.id), ...unknownBatch },
  { name: 'nack of an already nacked batch', prepare: (q, c) => q.nack(c), act: (q, c) => q.nack(c), ...unknownBatch },
  { name: 'ack of another queue’s batch', act: (q) => q.ack(otherQueuesBatch()), ...unknownBatch },
  { name: 'nack of another queue’s batch', act: (q) => q.nack(otherQueuesBatch()), ...unknownBatch },
  { name: 'extendLease of another queue’s batch', act: (q) => q.extendLease(otherQueuesBatch()), ...unknownBatch },
  { name: 'split of another queue’s batch', act: (q) => q.split(otherQueuesBatch(), [1]), ...unknownBatch },
  { name: 'ack with a wrong token', act: (q, c) => q.ack(c.id, { token: 'forged' }), ...unknownBatch },
  { name: 'ack of a number', act: (q) => q.ack(42 as unknown as string), ...invalid('claim') },
  { name: 'nack with a negative delayMs', act: (q, c) => q.nack(c, { delayMs: -1 }), ...invalid('options.delayMs') },
  { name: 'split into counts that do not add up', act: (q, c) => q.split(c, [1, 1]), ...invalid('counts') },
];

describe('bad input', () => {
  it.each([...publishCases, ...maxMessagesCases, ...settleCases])('$name: throws, naming the error, and changes nothing', (c) => {
    const { queue, claimed } = populated();
    c.prepare?.(queue, claimed);
    const before = snapshot(queue);

    expectThrows(() => c.act(queue, claimed), c.error, c.props);
    expect(snapshot(queue)).toEqual(before);
  });

  it('a sizeOf that returns a negative size: InvalidArgumentError, nothing stored', () => {
    const { queue } = populated({ sizeOf: (value) => (value === 'bad' ? -1 : value.length) });
    const before = snapshot(queue);

    expectThrows(() => queue.publish(0, 'z', 'bad'), InvalidArgumentError, { code: 'ERR_INVALID_ARGUMENT', argument: 'options.sizeOf(value)' });
    expect(snapshot(queue)).toEqual(before);
  });

  it('a sort key the comparator does not find equal to itself is refused', () => {
    const queue = new SortedQueue<[number, number], string, string>({ compare: (a, b) => a[0] - b[0] || a[1] - b[1] });
    queue.publish([1, 1], 'a', 'a1');
    const before = snapshot(queue);

    expectThrows(() => queue.publish([1, Number.NaN], 'b', 'b1'), InvalidArgumentError, { code: 'ERR_INVALID_ARGUMENT', argument: 'sortKey' });
    expect(snapshot(queue)).toEqual(before);
  });
});

describe('bad options to the constructors', () => {
  it.each([
    { name: 'negative leaseMs', make: () => new SortedQueue({ leaseMs: -1 }), argument: 'options.leaseMs' },
    { name: 'maxPending 0', make: () => new SortedQueue({ maxPending: 0 }), argument: 'options.maxPending' },
    { name: 'maxBatchSize 1.5', make: () => new SortedQueue({ maxBatchSize: 1.5 }), argument: 'options.maxBatchSize' },
    { name: 'maxBatchBytes without sizeOf', make: () => new SortedQueue({ maxBatchBytes: 1024 }), argument: 'options.sizeOf' },
    { name: 'compare not a function', make: () => new SortedQueue({ compare: 'asc' as unknown as () => number }), argument: 'options.compare' },
    { name: 'options not an object', make: () => new SortedQueue(7 as unknown as object), argument: 'options' },
    { name: 'lingerMs -1', make: () => new TimeSortedQueue({ lingerMs: -1 }), argument: 'options.lingerMs' },
    { name: 'lingerMs NaN', make: () => new TimeSortedQueue({ lingerMs: Number.NaN }), argument: 'options.lingerMs' },
    { name: 'a clock without now()', make: () => new TimeSortedQueue({ clock: {} as ManualClock }), argument: 'options.clock' },
  ])('$name: InvalidArgumentError naming $argument', ({ make, argument }) => {
    const error = expectThrows(make, InvalidArgumentError, { code: 'ERR_INVALID_ARGUMENT', argument });
    expect(error.message).toContain(argument);
  });
});
