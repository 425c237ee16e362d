/**
 * Bad input, fuzzed: arbitrary commands with arbitrary arguments against SortedQueue (numeric,
 * and with a comparator) and TimeSortedQueue (ManualClock). Sort keys, keys and values of every
 * type (NaN, -0, ±Infinity, symbols, BigInts, null, undefined, huge strings, cyclic objects),
 * `maxMessages` and option objects of any shape, and ids that are real, stale, forged, made up,
 * or taken from ANOTHER queue's batches.
 *
 * The properties: every call returns or throws a `DuebatchError` with a known `code` (anything
 * else thrown fails the run); a batch of another queue, or an id never handed out, is never
 * accepted; after every command `checkInvariants()` holds and the counts add up: what the queue
 * holds (pending + claimed) is what was published minus what came out (pulled, drained, acked,
 * removed), whatever failed in between.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Dispatcher, DuebatchError, ErrorCode, ManualClock, SortedQueue, TimeSortedQueue } from '../../src/index.js';
import type { Batch, BatchQueue, ClaimedBatch } from '../../src/index.js';

const SEED = 20_240_601;
const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

// --- outcomes -----------------------------------------------------------------------------------

/** Something other than a typed duebatch error escaped a public call. */
class UntypedThrow extends Error {
  constructor(call: string, cause: unknown) {
    super(`${call} threw ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}, not a DuebatchError`, { cause });
  }
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: DuebatchError };

/** Calls `fn`: its result, or the `DuebatchError` (with a known code) it threw. Anything else fails the property. */
function attempt<T>(call: string, fn: () => T): Outcome<T> {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    if (error instanceof DuebatchError && KNOWN_CODES.has(error.code)) return { ok: false, error };
    throw new UntypedThrow(call, error);
  }
}

// --- arbitrary values ---------------------------------------------------------------------------

const HUGE = 'x'.repeat(1 << 20);

/** Values of every kind, nested a little. */
const anything = (withNullPrototype: boolean): fc.Arbitrary<unknown> =>
  fc.anything({
    maxDepth: 2,
    maxKeys: 4,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withObjectString: true,
    withNullPrototype,
    withTypedArray: true,
    withSparseArray: true,
    withUnicodeString: true,
  });

const special = fc.constantFrom<unknown>(
  Number.NaN, -0, 0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MAX_VALUE, Number.MIN_VALUE,
  Number.MAX_SAFE_INTEGER, 2 ** 53, -1, 1.5, null, undefined, '', HUGE, Symbol('fuzz'), Symbol.iterator, 1n, -(2n ** 64n), true, false,
);

const cyclic = anything(false).map((inner) => {
  const value: Record<string, unknown> = { inner };
  value['self'] = value;
  return value;
});

// Keys: a small pool, so keys collide, plus everything else.
const keyArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<unknown>('a', 'b', 'c', 1, 2, 0, -0) },
  { weight: 1, arbitrary: special },
  { weight: 1, arbitrary: anything(true) },
  { weight: 1, arbitrary: cyclic },
);
const sortKeyArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -5, max: 5 }) },
  { weight: 2, arbitrary: fc.double() },
  { weight: 1, arbitrary: special },
  { weight: 1, arbitrary: anything(true) },
);
const valueArb = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 1, arbitrary: special },
  { weight: 1, arbitrary: anything(true) },
  { weight: 1, arbitrary: cyclic },
);
const numberOption = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1, max: 5_000 }) }, { weight: 1, arbitrary: special }, { weight: 1, arbitrary: anything(true) });
const booleanOption = fc.oneof({ weight: 8, arbitrary: fc.boolean() }, { weight: 1, arbitrary: special }, { weight: 1, arbitrary: anything(true) });
const maxMessagesArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 10 }) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(undefined, 0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '3', null) },
  { weight: 1, arbitrary: anything(true) },
);
/** An options object of any shape: absent, the right keys with any values, or anything at all. */
const optionsOf = <T>(record: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: record }, { weight: 1, arbitrary: anything(true) });
const takeOptionsArb = optionsOf(
  fc.record({ leaseMs: numberOption, maxBatches: numberOption, includeDeferred: booleanOption, upTo: sortKeyArb, force: booleanOption }, { requiredKeys: [] }),
);
const settleOptionsArb = optionsOf(
  fc.record(
    {
      // Mostly absent: a wrong token makes every settle fail, and the settles that succeed are the interesting ones.
      token: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.string({ maxLength: 2 }) }, { weight: 1, arbitrary: anything(true) }),
      delayMs: numberOption,
      notBefore: numberOption,
      leaseMs: numberOption,
    },
    { requiredKeys: [] },
  ),
);

// --- commands -----------------------------------------------------------------------------------

/** Which batch (or id) a settle names. */
const refArb = fc.record({
  source: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('batch' as const, 'id' as const) },
    { weight: 1, arbitrary: fc.constantFrom('staleToken' as const, 'foreignBatch' as const, 'foreignId' as const, 'fake' as const, 'anything' as const) },
  ),
  index: fc.nat(),
  fake: fc.string(),
  token: fc.string({ maxLength: 2 }),
  anything: anything(true),
});
type RefSpec = typeof refArb extends fc.Arbitrary<infer T> ? T : never;

/** How a batch is to be split: cut points into a partition that adds up, raw counts, or anything. */
const countsArb = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('exact' as const), cuts: fc.array(fc.nat(), { maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), counts: fc.array(fc.oneof(fc.integer({ min: -1, max: 5 }), special), { maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('anything' as const), value: anything(true) }) },
);
type CountsSpec = typeof countsArb extends fc.Arbitrary<infer T> ? T : never;

const commandArb = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('publish' as const), sortKey: sortKeyArb, key: keyArb, value: valueArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pull' as const), max: maxMessagesArb, options: takeOptionsArb }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('claim' as const), max: maxMessagesArb, options: takeOptionsArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ack' as const), ref: refArb, options: settleOptionsArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('nack' as const), ref: refArb, options: settleOptionsArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('extendLease' as const), ref: refArb, options: settleOptionsArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('split' as const), ref: refArb, counts: countsArb, options: settleOptionsArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resume' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drain' as const), max: maxMessagesArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.constantFrom(30_000, 1e9)) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('read' as const) }) },
  // close() ends publishing for the rest of the run: rarer than clear().
  { weight: 1, arbitrary: fc.constantFrom(...Array.from({ length: 7 }, () => ({ kind: 'clear' as const })), { kind: 'close' as const }) },
);
type Command = typeof commandArb extends fc.Arbitrary<infer T> ? T : never;

// --- the queues ---------------------------------------------------------------------------------

type AnyQueue = BatchQueue<unknown, unknown, unknown>;

/** The operations whose signatures differ between the two queue classes. */
interface Subject {
  readonly queue: AnyQueue;
  publish(sortKey: unknown, key: unknown, value: unknown): void;
  pull(max: unknown, options: unknown): Batch<unknown, unknown>[];
  claim(max: unknown, options: unknown): ClaimedBatch<unknown, unknown>[];
  drain(max: unknown): Batch<unknown, unknown>[];
}

type QueueKind = 'sorted' | 'comparator' | 'time';

/** A total order over any values that never throws: by type, then by a string form. */
function anyOrder(a: unknown, b: unknown): number {
  const x = rank(a);
  const y = rank(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function rank(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'symbol') return `symbol:${value.description ?? ''}`;
  if (typeof value === 'object' || typeof value === 'function') return `object:${Object.prototype.toString.call(value)}`;
  return `${typeof value}:${String(value)}`;
}

function subject(kind: QueueKind, options: object): Subject {
  const as = <T>(value: unknown): T => value as T;
  if (kind === 'time') {
    const queue = new TimeSortedQueue<unknown, unknown>(as(options));
    return {
      queue: as(queue),
      publish: (_sortKey, key, value) => queue.publish(key, value),
      pull: (max, o) => queue.pull(as(max), as(o)),
      claim: (max, o) => queue.claim(as(max), as(o)),
      drain: (max) => queue.drain(as(max)),
    };
  }
  const queue = new SortedQueue<unknown, unknown, unknown>(as(kind === 'comparator' ? { ...options, compare: anyOrder } : options));
  return {
    queue: as(queue),
    publish: (sortKey, key, value) => queue.publish(sortKey, key, value),
    pull: (max, o) => queue.pull(as(max), as(o)),
    claim: (max, o) => queue.claim(as(max), as(o)),
    drain: (max) => queue.pull(as(max)),
  };
}

/** Queue options: mostly valid values, sometimes anything. The clock is always a ManualClock, added by the runner. */
const queueOptionsArb = fc.record(
  {
    maxPending: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 1, max: 30 }) }, { weight: 2, arbitrary: fc.constant(Number.POSITIVE_INFINITY) }, { weight: 1, arbitrary: anything(true) }),
    maxBatchSize: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 1, max: 6 }) }, { weight: 1, arbitrary: special }),
    maxBatchBytes: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 4, arbitrary: fc.integer({ min: 1, max: 64 }) }, { weight: 1, arbitrary: special }),
    sizeOf: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom<unknown>(undefined, (value: unknown) => (typeof value === 'string' ? value.length : 8)) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(() => -1, () => Number.NaN, () => 'big', 'not a function') },
    ),
    leaseMs: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 1, max: 5_000 }) }, { weight: 1, arbitrary: special }),
    perKeyOrder: fc.oneof({ weight: 12, arbitrary: fc.boolean() }, { weight: 1, arbitrary: special }),
    lingerMs: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 0, max: 2_000 }) }, { weight: 1, arbitrary: special }),
  },
  { requiredKeys: [] },
);

// --- the runner ---------------------------------------------------------------------------------

/** Batches claimed from a second queue of the same kind: their ids must mean nothing to the first. */
function foreignBatches(kind: QueueKind): ClaimedBatch<unknown, unknown>[] {
  const other = subject(kind, { clock: new ManualClock(0), lingerMs: 0 });
  for (const [i, key] of ['a', 'b', 'c', 1].entries()) other.publish(i, key, i);
  const claimed = other.claim(undefined, undefined);
  other.queue.ack(claimed[0] as ClaimedBatch<unknown, unknown>);
  return claimed;
}

/** Runs commands against one queue, keeping the books the properties are checked against. */
class Driver {
  /** Values the queue must hold: published minus what came out. */
  #held = 0;
  /** Each batch id this queue handed out and that was not acked or split since, as last handed out. */
  readonly #live = new Map<string, ClaimedBatch<unknown, unknown>>();
  /** Every batch handed out, settled ones included: stale references. */
  readonly #claimed: ClaimedBatch<unknown, unknown>[] = [];

  constructor(
    readonly subject: Subject,
    readonly clock: ManualClock,
    readonly foreign: readonly ClaimedBatch<unknown, unknown>[],
  ) {}

  run(command: Command): void {
    const q = this.subject.queue;
    switch (command.kind) {
      case 'publish':
        if (attempt('publish', () => this.subject.publish(command.sortKey, command.key, command.value)).ok) this.#held++;
        return;
      case 'pull':
        this.#tookOut(attempt('pull', () => this.subject.pull(command.max, command.options)));
        return;
      case 'drain':
        this.#tookOut(attempt('drain', () => this.subject.drain(command.max)));
        return;
      case 'claim': {
        const outcome = attempt('claim', () => this.subject.claim(command.max, command.options));
        if (outcome.ok) for (const batch of outcome.value) this.#handedOut(batch);
        return;
      }
      case 'ack':
      case 'nack':
      case 'extendLease':
      case 'split':
        this.#settle(command);
        return;
      case 'remove': {
        const outcome = attempt('remove', () => q.remove(command.key));
        if (outcome.ok) this.#held -= outcome.value.length;
        return;
      }
      case 'resume':
        attempt('resume', () => q.resume(command.key));
        return;
      case 'advance':
        this.clock.advance(command.ms);
        return;
      case 'read':
        attempt('read', () => [q.peek(), [...q], q.nextDueIn(), q.nextDueAt(), q.keyCount, q.counts()]);
        return;
      case 'clear':
        q.clear();
        this.#held = 0;
        this.#live.clear();
        return;
      case 'close':
        q.close();
        return;
    }
  }

  /** The invariants, and the books against the queue's counts. */
  check(): void {
    const q = this.subject.queue;
    q.checkInvariants();
    const counts = q.counts();
    expect(counts.pending).toBe(q.size);
    expect(counts.claimed).toBe(q.claimedCount);
    expect(counts.pending).toBeGreaterThanOrEqual(0);
    expect(counts.claimed).toBeGreaterThanOrEqual(0);
    expect(counts.keys).toBeLessThanOrEqual(counts.pending);
    expect(counts.pending + counts.claimed).toBe(this.#held);
  }

  #settle(command: Extract<Command, { ref: RefSpec }>): void {
    const q = this.subject.queue;
    const { ref, own } = this.#resolveRef(command.ref);
    const options = command.options as never;
    let outcome: Outcome<unknown>;
    switch (command.kind) {
      case 'ack':
        outcome = attempt('ack', () => q.ack(ref as never, options));
        break;
      case 'nack':
        outcome = attempt('nack', () => q.nack(ref as never, options));
        break;
      case 'extendLease':
        outcome = attempt('extendLease', () => q.extendLease(ref as never, options));
        break;
      case 'split': {
        const counts = this.#counts(command.counts, own);
        outcome = attempt('split', () => q.split(ref as never, counts as never, options));
        break;
      }
    }
    if (!outcome.ok) return;
    if (own === undefined) throw new Error(`${command.kind} accepted ${describeRef(command.ref)}, which this queue never handed out`);
    if (command.kind === 'ack') {
      this.#held -= this.#live.get(own)?.values.length ?? Number.NaN;
      this.#live.delete(own);
    } else if (command.kind === 'extendLease') {
      this.#handedOut(outcome.value as ClaimedBatch<unknown, unknown>);
    } else if (command.kind === 'split') {
      const parts = outcome.value as ClaimedBatch<unknown, unknown>[];
      if (parts.length > 1) this.#live.delete(own);
      for (const part of parts) this.#handedOut(part);
    }
  }

  /** The reference to pass, and the id of ours it names (undefined for foreign, made-up or malformed ones). */
  #resolveRef(spec: RefSpec): { ref: unknown; own: string | undefined } {
    const pick = <T>(list: readonly T[]): T | undefined => list[spec.index % Math.max(1, list.length)];
    // Real references name a batch not acked or split since (its lease may have run out, or a nack
    // put it back); a stale token may name any batch ever handed out.
    const mine = spec.source === 'staleToken' ? pick(this.#claimed) : pick([...this.#live.values()]);
    const theirs = pick(this.foreign);
    switch (spec.source) {
      case 'batch':
        return mine === undefined ? { ref: spec.fake, own: undefined } : { ref: mine, own: mine.id };
      case 'id':
        return mine === undefined ? { ref: spec.fake, own: undefined } : { ref: mine.id, own: mine.id };
      case 'staleToken':
        return mine === undefined ? { ref: spec.fake, own: undefined } : { ref: { id: mine.id, token: spec.token }, own: mine.id };
      case 'foreignBatch':
        return { ref: theirs, own: undefined };
      case 'foreignId':
        return { ref: theirs?.id, own: undefined };
      case 'fake':
        return { ref: spec.fake, own: undefined };
      case 'anything':
        return { ref: spec.anything, own: undefined };
    }
  }

  /** Split counts: a partition of the named batch's values at the cut points, or raw values. */
  #counts(spec: CountsSpec, own: string | undefined): unknown {
    if (spec.kind === 'anything') return spec.value;
    if (spec.kind === 'raw') return spec.counts;
    const length = (own === undefined ? undefined : this.#live.get(own)?.values.length) ?? 1;
    const cuts = [...new Set(spec.cuts.map((cut) => 1 + (cut % Math.max(1, length - 1))).filter((cut) => cut < length))].sort((a, b) => a - b);
    return [...cuts, length].map((cut, i) => cut - (i === 0 ? 0 : (cuts[i - 1] ?? 0)));
  }

  #handedOut(batch: ClaimedBatch<unknown, unknown>): void {
    this.#live.set(batch.id, batch);
    this.#claimed.push(batch);
  }

  #tookOut(outcome: Outcome<Batch<unknown, unknown>[]>): void {
    if (outcome.ok) for (const batch of outcome.value) this.#held -= batch.values.length;
  }
}

function describeRef(spec: RefSpec): string {
  return spec.source === 'foreignBatch' || spec.source === 'foreignId' ? "another queue's batch" : `a ${spec.source} reference`;
}

/** Builds the queue (or checks that its options were refused with a typed error), then runs the commands. */
function runCommands(kind: QueueKind, options: object, commands: readonly Command[]): void {
  const clock = new ManualClock(1_000);
  const built = attempt('constructor', () => subject(kind, { ...options, clock }));
  if (!built.ok) return;
  const driver = new Driver(built.value, clock, foreignBatches(kind));
  driver.check();
  for (const command of commands) {
    driver.run(command);
    driver.check();
  }
}

// --- the properties -----------------------------------------------------------------------------

const commandsArb = fc.array(commandArb, { minLength: 10, maxLength: 80, size: 'max' });

describe('public API under arbitrary input', () => {
  it.each<QueueKind>(['sorted', 'comparator', 'time'])('%s queue: every call succeeds or throws a typed error, invariants and counts hold after each', (kind) => {
    fc.assert(
      fc.property(queueOptionsArb, commandsArb, (options, commands) => runCommands(kind, options, commands)),
      { seed: SEED, numRuns: 1_000 },
    );
  });

  it.each<'sorted' | 'time'>(['sorted', 'time'])('%s queue: constructor options of any shape are taken or refused with a typed error', (kind) => {
    fc.assert(
      fc.property(fc.oneof(anything(true), queueOptionsArb), fc.array(commandArb, { maxLength: 8 }), (options, commands) => {
        const built = attempt('constructor', () => (kind === 'time' ? new TimeSortedQueue(options as never) : new SortedQueue(options as never)));
        // Options it took must make a working queue (run on a ManualClock, so nothing depends on real time).
        if (built.ok && typeof options === 'object' && options !== null) runCommands(kind, options, commands);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('the keys the fuzz first caught', () => {
  // Both once threw a TypeError from String(key), which cannot stringify an object without a prototype.
  it('checkInvariants() holds with a key that cannot be turned into a string', () => {
    const queue = new SortedQueue<number, object, string>();
    queue.publish(1, Object.create(null) as object, 'v');
    expect(() => queue.checkInvariants()).not.toThrow();
  });

  it("the dispatcher dead-letters an endpoint failure as 'invalid-endpoint' whatever the key", async () => {
    const queue = new TimeSortedQueue<object, number>({ lingerMs: 0 });
    const dispatcher = new Dispatcher<object, number>({ source: queue, endpoint: () => { throw new Error('no URL for this key'); } });
    const reasons: string[] = [];
    dispatcher.on('deadLetter', (letter) => reasons.push(letter.reason.code));
    queue.publish(Object.create(null) as object, 1);
    await dispatcher.flush();
    await dispatcher.close();
    expect(reasons).toEqual(['invalid-endpoint']);
  });
});
