/**
 * The conformance suite: random command sequences run on a store and on the reference model
 * (test/queue/model.ts); every answer and every counter must agree, the store's invariants must
 * hold after every step, and at the end nothing may be lost or duplicated. Every store runs it:
 * the in-memory SortedQueue (test/queue/sorted-queue.property.test.ts) and RedisSortedQueue
 * (test/redis/conformance.test.ts).
 *
 * Where the stores differ, outside what this suite drives:
 * - Redis queues take numeric sort keys only (no `compare`), string keys only, and have no
 *   `maxBatchBytes` / `sizeOf`.
 * - Redis time is the server's (`TIME`) unless a clock is injected, as here; batch ids differ
 *   in form (`<shard>-<epoch>-<n>`), which the suite does not look at.
 * - Everything the suite compares (batches, order, ids on redelivery, stale-claim refusal,
 *   counters, claimable keys in place order) is the same.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { ManualClock, type ClaimedBatch } from '../../src/index.js';
import { QueueModel } from '../queue/model.js';
import type { StoreFactory, StoreUnderTest } from './store.js';

export type Command =
  | { op: 'publish'; sortKey: number; key: string }
  | { op: 'pull'; max: number }
  | { op: 'claim'; max: number }
  | { op: 'ack'; pick: number }
  | { op: 'nack'; pick: number; delayMs: number }
  | { op: 'remove'; key: string }
  | { op: 'advance'; ms: number };

const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');

/** A random command, weighted towards publishes and claims. */
export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('publish' as const), sortKey: fc.integer({ min: 0, max: 20 }), key: keyArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('pull' as const), max: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('claim' as const), max: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('ack' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('nack' as const), pick: fc.nat(), delayMs: fc.constantFrom(0, 0, 50, 200) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(10, 100, 600) }) },
);

/** The store options the suite is run with. */
export interface Setup {
  maxBatchSize: number;
  perKeyOrder: boolean;
}

/** The setups every store is run with. */
export const setups: readonly Setup[] = [
  { maxBatchSize: Infinity, perKeyOrder: true },
  { maxBatchSize: 3, perKeyOrder: true },
  { maxBatchSize: Infinity, perKeyOrder: false },
];

interface Open {
  real: ClaimedBatch<string, number>;
  modelId: string;
}

interface Run {
  store: StoreUnderTest;
  model: QueueModel;
  clock: ManualClock;
  setup: Setup;
  idOf: Map<string, string>;
  open: Open[];
  published: number[];
  gone: number[];
  next: number;
}

/** Runs `commands` on a fresh store from `factory` and on the model; every answer and every counter must agree. */
export async function runAgainstModel(factory: StoreFactory, setup: Setup, commands: readonly Command[]): Promise<void> {
  const clock = new ManualClock(1000);
  const leaseMs = 500;
  const store = await factory({ ...setup, leaseMs, clock });
  const model = new QueueModel({ ...setup, leaseMs, now: () => clock.now() });
  const run: Run = { store, model, clock, setup, idOf: new Map(), open: [], published: [], gone: [], next: 0 };
  try {
    for (const command of commands) {
      await step(run, command);
      await store.checkInvariants();
      const counts = await store.counts();
      expect(counts).toEqual({ pending: model.size(), claimed: model.claimedCount(), keys: model.keyCount() });
      expect((await store.entries()).map((e) => e.key)).toEqual(model.ready().map(([key]) => key));
    }
    await finalAccounting(run);
  } finally {
    await store.dispose();
  }
}

async function step(run: Run, command: Command): Promise<void> {
  const { store, model, clock } = run;
  switch (command.op) {
    case 'publish': {
      const value = run.next++;
      run.published.push(value);
      await store.publish(command.sortKey, command.key, value);
      model.publish(command.sortKey, command.key, value);
      return;
    }
    case 'pull': {
      const got = await store.pull(command.max);
      expect(got).toEqual(model.pull(command.max));
      expect(got.reduce((sum, b) => sum + b.values.length, 0)).toBeLessThanOrEqual(command.max);
      for (const batch of got) run.gone.push(...batch.values);
      return;
    }
    case 'claim':
      return claimStep(run, command.max);
    case 'ack':
    case 'nack':
      return settleStep(run, command);
    case 'remove': {
      const removed = await store.remove(command.key);
      expect(removed).toEqual(model.remove(command.key));
      run.gone.push(...removed);
      return;
    }
    case 'advance':
      clock.advance(command.ms);
      return;
  }
}

async function claimStep(run: Run, max: number): Promise<void> {
  const got = await run.store.claim(max);
  const expected = run.model.claim(max);
  expect(got.map((b) => ({ key: b.key, values: b.values }))).toEqual(expected.map((b) => ({ key: b.key, values: b.values })));
  expect(got.reduce((sum, b) => sum + b.values.length, 0)).toBeLessThanOrEqual(max);
  got.forEach((batch, i) => {
    const modelId = (expected[i] as { id: string }).id;
    const known = run.idOf.get(modelId);
    // A batch that comes back is redelivered under the id it had.
    if (known !== undefined) expect(batch.id).toBe(known);
    run.idOf.set(modelId, batch.id);
    run.open.push({ real: batch, modelId });
  });
  if (run.setup.perKeyOrder) {
    // A customer never has two live batches out.
    const live = run.open.filter((o) => o.real.leaseExpiresAt > run.clock.now());
    expect(new Set(live.map((o) => o.real.key)).size).toBe(live.length);
  }
}

async function settleStep(run: Run, command: Extract<Command, { op: 'ack' | 'nack' }>): Promise<void> {
  const { store, model, clock, open } = run;
  if (open.length === 0) return;
  const [entry] = open.splice(command.pick % open.length, 1);
  if (entry === undefined) return;
  if (!sameClaim(model, entry, clock.now())) {
    // The lease ran out: the stale claim is refused and nothing changes.
    const before = await store.counts();
    await expect((async () => store.ack(entry.real))()).rejects.toMatchObject({
      code: expect.stringMatching(/^ERR_(LEASE_EXPIRED|UNKNOWN_BATCH)$/),
    });
    expect((await store.counts()).pending).toBe(before.pending);
    return;
  }
  if (command.op === 'ack') {
    await store.ack(entry.real);
    model.ack(entry.modelId);
    run.gone.push(...entry.real.values);
  } else {
    await store.nack(entry.real, { delayMs: command.delayMs });
    model.nack(entry.modelId, command.delayMs > 0 ? clock.now() + command.delayMs : 0);
  }
}

/** Nothing lost, nothing duplicated: every value is out for good, pending, or claimed, exactly once. */
async function finalAccounting(run: Run): Promise<void> {
  const { store, clock } = run;
  const held = (await store.entries()).flatMap((e) => e.values);
  clock.advance(10_000); // let every lease and deferral run out
  const rest: number[] = [];
  for (let batches = await store.pull(); batches.length > 0; batches = await store.pull()) {
    rest.push(...batches.flatMap((b) => b.values));
  }
  const all = [...run.gone, ...rest].sort((a, b) => a - b);
  expect(all).toEqual(run.published);
  expect(held.every((v) => rest.includes(v))).toBe(true);
}

function sameClaim(model: QueueModel, entry: Open, now: number): boolean {
  const batch = model.batches.get(entry.modelId);
  return (
    batch !== undefined &&
    batch.status === 'claimed' &&
    entry.real.leaseExpiresAt > now &&
    batch.leaseExpiresAt === entry.real.leaseExpiresAt
  );
}

/** Options of {@link checkConformance}. */
export interface ConformanceOptions {
  numRuns: number;
  maxCommands?: number;
  seed?: number;
}

/** Asserts that `factory`'s stores agree with the model on random command sequences under `setup`. */
export async function checkConformance(factory: StoreFactory, setup: Setup, options: ConformanceOptions): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(commandArb, { maxLength: options.maxCommands ?? 120, size: 'max' }), (commands) =>
      runAgainstModel(factory, setup, commands),
    ),
    { numRuns: options.numRuns, seed: options.seed ?? 20261130 },
  );
}
