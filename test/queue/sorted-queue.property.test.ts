import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, SortedQueue } from '../../src/index.js';
import type { ClaimedBatch } from '../../src/index.js';
import { QueueModel } from './model.js';

type Command =
  | { op: 'publish'; sortKey: number; key: string }
  | { op: 'pull'; max: number }
  | { op: 'claim'; max: number }
  | { op: 'ack'; pick: number }
  | { op: 'nack'; pick: number; delayMs: number }
  | { op: 'remove'; key: string }
  | { op: 'advance'; ms: number };

const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('publish' as const), sortKey: fc.integer({ min: 0, max: 20 }), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('pull' as const), max: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('claim' as const), max: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('ack' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('nack' as const), pick: fc.nat(), delayMs: fc.constantFrom(0, 0, 50, 200) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(10, 100, 600) }) },
);

interface Setup {
  maxBatchSize: number;
  perKeyOrder: boolean;
}

/** Runs `commands` on a real queue and on the model; every answer and every counter must agree. */
function runAgainstModel(setup: Setup, commands: Command[]): void {
  const clock = new ManualClock(1000);
  const leaseMs = 500;
  const queue = new SortedQueue<number, string, number>({ clock, leaseMs, ...setup });
  const model = new QueueModel({ ...setup, leaseMs, now: () => clock.now() });
  const idOf = new Map<string, string>(); // model id -> queue id
  const open: { real: ClaimedBatch<string, number>; modelId: string }[] = [];
  const published: number[] = [];
  const gone: number[] = []; // values pulled, acked or removed: out for good
  let next = 0;

  for (const command of commands) {
    switch (command.op) {
      case 'publish': {
        const value = next++;
        published.push(value);
        queue.publish(command.sortKey, command.key, value);
        model.publish(command.sortKey, command.key, value);
        break;
      }
      case 'pull': {
        const got = queue.pull(command.max);
        expect(got).toEqual(model.pull(command.max));
        expect(got.reduce((sum, b) => sum + b.values.length, 0)).toBeLessThanOrEqual(command.max);
        for (const batch of got) gone.push(...batch.values);
        break;
      }
      case 'claim': {
        const got = queue.claim(command.max);
        const expected = model.claim(command.max);
        expect(got.map((b) => ({ key: b.key, values: b.values }))).toEqual(expected.map((b) => ({ key: b.key, values: b.values })));
        expect(got.reduce((sum, b) => sum + b.values.length, 0)).toBeLessThanOrEqual(command.max);
        got.forEach((batch, i) => {
          const modelId = (expected[i] as { id: string }).id;
          const known = idOf.get(modelId);
          // A batch that comes back is redelivered under the id it had.
          if (known !== undefined) expect(batch.id).toBe(known);
          idOf.set(modelId, batch.id);
          open.push({ real: batch, modelId });
        });
        if (setup.perKeyOrder) {
          // A customer never has two live batches out.
          const live = open.filter((o) => o.real.leaseExpiresAt > clock.now());
          expect(new Set(live.map((o) => o.real.key)).size).toBe(live.length);
        }
        break;
      }
      case 'ack':
      case 'nack': {
        if (open.length === 0) break;
        const [entry] = open.splice(command.pick % open.length, 1);
        if (entry === undefined) break;
        const stillClaimed = model.batches.get(entry.modelId)?.status === 'claimed' && sameClaim(model, entry, clock.now());
        if (!stillClaimed) {
          // The lease ran out: the stale claim is refused and nothing changes.
          const sizeBefore = queue.size;
          expect(() => queue.ack(entry.real)).toThrow(expect.objectContaining({ code: expect.stringMatching(/^ERR_(LEASE_EXPIRED|UNKNOWN_BATCH)$/) }));
          expect(queue.size).toBe(sizeBefore);
          break;
        }
        if (command.op === 'ack') {
          queue.ack(entry.real);
          model.ack(entry.modelId);
          gone.push(...entry.real.values);
        } else {
          queue.nack(entry.real, { delayMs: command.delayMs });
          model.nack(entry.modelId, command.delayMs > 0 ? clock.now() + command.delayMs : 0);
        }
        break;
      }
      case 'remove':
        {
          const removed = queue.remove(command.key);
          expect(removed).toEqual(model.remove(command.key));
          gone.push(...removed);
        }
        break;
      case 'advance':
        clock.advance(command.ms);
        break;
    }
    queue.checkInvariants();
    expect(queue.size).toBe(model.size());
    expect(queue.claimedCount).toBe(model.claimedCount());
    expect(queue.keyCount).toBe(model.keyCount());
    expect([...queue].map((e) => e.key)).toEqual(model.ready().map(([key]) => key));
  }

  // Nothing lost, nothing duplicated: every value is out for good, pending, or claimed, exactly once.
  const held = [...queue].flatMap((e) => e.values);
  clock.advance(10_000); // let every lease and deferral run out
  const rest: number[] = [];
  for (let batches = queue.pull(); batches.length > 0; batches = queue.pull()) rest.push(...batches.flatMap((b) => b.values));
  const all = [...gone, ...rest].sort((a, b) => a - b);
  expect(all).toEqual(published);
  expect(held.every((v) => rest.includes(v))).toBe(true);
}

function sameClaim(model: QueueModel, entry: { real: ClaimedBatch<string, number>; modelId: string }, now: number): boolean {
  const batch = model.batches.get(entry.modelId);
  return batch !== undefined && entry.real.leaseExpiresAt > now && batch.leaseExpiresAt === entry.real.leaseExpiresAt;
}

describe('SortedQueue against the reference model', () => {
  it.each([
    { maxBatchSize: Infinity, perKeyOrder: true },
    { maxBatchSize: 3, perKeyOrder: true },
    { maxBatchSize: Infinity, perKeyOrder: false },
  ])('gives the same batches in the same order (maxBatchSize $maxBatchSize, perKeyOrder $perKeyOrder)', (setup) => {
    fc.assert(
      fc.property(fc.array(commandArb, { maxLength: 120 }), (commands) => runAgainstModel(setup, commands)),
      { numRuns: 300, seed: 20261130 },
    );
  });
});
