/**
 * Differential conformance: the whole queue API (beyond what the reference model covers:
 * split, extendLease, resume, claim's maxBatches / includeDeferred / upTo, pull's upTo, the time
 * queue's due rules, nextDueIn, stale and unknown settles) run on the in-memory queue and on
 * another store; every answer, error code, counter and listing must agree. The in-memory queue
 * is the reference: it is itself checked against the model by run-against-model.ts.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { ClaimedBatch, QueueCounts, QueueEntry } from '../../src/index.js';
import type { Awaitable } from './store.js';

/** The operations compared, each possibly asynchronous. `sortKey` is ignored by a time queue. */
export interface FullStore {
  publish(sortKey: number, key: string, value: number): Awaitable<void>;
  claim(max: number, options: { maxBatches?: number; includeDeferred?: boolean; upTo?: number; force?: boolean }): Awaitable<ClaimedBatch<string, number>[]>;
  pull(max: number, options: { upTo?: number; force?: boolean }): Awaitable<{ key: string; values: number[] }[]>;
  ack(batch: ClaimedBatch<string, number>): Awaitable<void>;
  nack(batch: ClaimedBatch<string, number>, options: { delayMs: number }): Awaitable<void>;
  extendLease(batch: ClaimedBatch<string, number>, options: { leaseMs: number }): Awaitable<ClaimedBatch<string, number>>;
  split(batch: ClaimedBatch<string, number>, counts: number[]): Awaitable<ClaimedBatch<string, number>[]>;
  resume(key: string): Awaitable<boolean>;
  remove(key: string): Awaitable<number[]>;
  counts(): Awaitable<QueueCounts>;
  nextDueIn(): Awaitable<number | undefined>;
  entries(): Awaitable<readonly QueueEntry<number, string, number>[]>;
  advance(ms: number): void;
}

type Op =
  | { op: 'publish'; sortKey: number; key: string }
  | { op: 'claim'; max: number; maxBatches?: number; includeDeferred: boolean; upTo?: number; force: boolean }
  | { op: 'pull'; max: number; upTo?: number; force: boolean }
  | { op: 'ack' | 'resettle'; pick: number }
  | { op: 'nack'; pick: number; delayMs: number }
  | { op: 'extend'; pick: number; leaseMs: number }
  | { op: 'split'; pick: number; first: number }
  | { op: 'resume' | 'remove'; key: string }
  | { op: 'advance'; ms: number };

const key = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: fc.constant('publish' as const), sortKey: fc.integer({ min: 0, max: 9 }), key }) },
  {
    weight: 4,
    arbitrary: fc.record(
      { op: fc.constant('claim' as const), max: fc.integer({ min: 1, max: 9 }), maxBatches: fc.integer({ min: 1, max: 3 }),
        includeDeferred: fc.boolean(), upTo: fc.integer({ min: 0, max: 9 }), force: fc.boolean() },
      { requiredKeys: ['op', 'max', 'includeDeferred', 'force'] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('pull' as const), max: fc.integer({ min: 1, max: 9 }), upTo: fc.integer({ min: 0, max: 9 }), force: fc.boolean() }, { requiredKeys: ['op', 'max', 'force'] }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('ack' as const, 'resettle' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('nack' as const), pick: fc.nat(), delayMs: fc.constantFrom(0, 100, 400) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('extend' as const), pick: fc.nat(), leaseMs: fc.constantFrom(100, 1000) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('split' as const), pick: fc.nat(), first: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('resume' as const, 'remove' as const), key }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(50, 300, 700) }) },
);

/** A settle's outcome: 'ok' or the error code. */
async function outcome<T>(run: () => Awaitable<T>): Promise<{ value?: T; code: string }> {
  try {
    return { value: await run(), code: 'ok' };
  } catch (error) {
    return { code: (error as { code?: string }).code ?? String(error) };
  }
}

/** A batch with its id replaced by the reference's, and its token dropped (tokens differ by design). */
function comparable(batch: ClaimedBatch<string, number>, id: string): object {
  const { token: _token, ...rest } = batch;
  return { ...rest, id };
}

interface Pair {
  reference: ClaimedBatch<string, number>;
  subject: ClaimedBatch<string, number>;
}

/** Runs `ops` on both stores and requires the same answers. */
export async function runDifferential(reference: FullStore, subject: FullStore, ops: readonly Op[]): Promise<void> {
  const claims: Pair[] = [];
  let next = 0;
  const idOf = new Map<string, string>(); // subject id -> reference id
  const sameBatches = (ref: ClaimedBatch<string, number>[], sub: ClaimedBatch<string, number>[]): void => {
    expect(sub.length).toBe(ref.length);
    sub.forEach((batch, i) => {
      const expected = ref[i] as ClaimedBatch<string, number>;
      const known = idOf.get(batch.id);
      if (known !== undefined) expect(known).toBe(expected.id);
      idOf.set(batch.id, expected.id);
      expect(comparable(batch, expected.id)).toEqual(comparable(expected, expected.id));
      claims.push({ reference: expected, subject: batch });
    });
  };
  for (const op of ops) {
    const pick = (n: number): Pair | undefined => claims[n % Math.max(1, claims.length)];
    switch (op.op) {
      case 'publish': {
        const value = next++;
        await Promise.all([reference.publish(op.sortKey, op.key, value), subject.publish(op.sortKey, op.key, value)]);
        break;
      }
      case 'claim': {
        const { op: _op, max, ...options } = op;
        sameBatches(await reference.claim(max, options), await subject.claim(max, options));
        break;
      }
      case 'pull': {
        const { op: _op, max, ...options } = op;
        expect(await subject.pull(max, options)).toEqual(await reference.pull(max, options));
        break;
      }
      case 'ack':
      case 'resettle':
      case 'nack':
      case 'extend':
      case 'split': {
        const pair = pick(op.pick);
        if (pair === undefined) break;
        const act = (store: FullStore, batch: ClaimedBatch<string, number>): Awaitable<unknown> => {
          if (op.op === 'nack') return store.nack(batch, { delayMs: op.delayMs });
          if (op.op === 'extend') return store.extendLease(batch, { leaseMs: op.leaseMs });
          if (op.op === 'split') {
            const first = Math.min(op.first, batch.values.length);
            return store.split(batch, first === batch.values.length ? [first] : [first, batch.values.length - first]);
          }
          return store.ack(batch);
        };
        const [ref, sub] = [await outcome(() => act(reference, pair.reference)), await outcome(() => act(subject, pair.subject))];
        expect(sub.code).toBe(ref.code);
        if (op.op === 'split' && ref.code === 'ok') {
          sameBatches(ref.value as ClaimedBatch<string, number>[], sub.value as ClaimedBatch<string, number>[]);
        } else if (op.op === 'extend' && ref.code === 'ok') {
          const [r, s] = [ref.value as ClaimedBatch<string, number>, sub.value as ClaimedBatch<string, number>];
          expect(comparable(s, r.id)).toEqual(comparable(r, r.id));
        }
        break;
      }
      case 'resume':
        expect(await subject.resume(op.key)).toBe(await reference.resume(op.key));
        break;
      case 'remove':
        expect(await subject.remove(op.key)).toEqual(await reference.remove(op.key));
        break;
      case 'advance':
        reference.advance(op.ms);
        subject.advance(op.ms);
        break;
    }
    expect(await subject.counts()).toEqual(await reference.counts());
    expect(await subject.nextDueIn()).toBe(await reference.nextDueIn());
    expect(await subject.entries()).toEqual(await reference.entries());
  }
}

/** Asserts that fresh store pairs from `make` agree on random operation sequences. */
export async function checkDifferential(
  make: () => Promise<{ reference: FullStore; subject: FullStore; dispose: () => Promise<void> }>,
  options: { numRuns: number; seed?: number },
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { maxLength: 80, size: 'max' }), async (ops) => {
      const { reference, subject, dispose } = await make();
      try {
        await runDifferential(reference, subject, ops);
      } finally {
        await dispose();
      }
    }),
    { numRuns: options.numRuns, seed: options.seed ?? 20261201 },
  );
}
