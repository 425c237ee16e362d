/**
 * Bad option objects, fuzzed, for the other constructors of the public API: `new Dispatcher`
 * and `createPushClient`. Every field takes a good value, an odd one (NaN, -0, ±Infinity, null,
 * a symbol, a BigInt, a huge string …) or anything at all; the options object itself may be
 * anything. Each call constructs, or throws a `DuebatchError` with a known code; a client that
 * was built closes cleanly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPushClient, Dispatcher, DuebatchError, ErrorCode, TimeSortedQueue } from '../../src/index.js';

const SEED = 20_240_601;
const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const ENDPOINT = 'http://127.0.0.1:9/hook';

/** Runs `build`: true when it built, false when it threw a typed error; anything else thrown fails the property. */
function builds(build: () => unknown): boolean {
  try {
    build();
    return true;
  } catch (error) {
    if (error instanceof DuebatchError && KNOWN_CODES.has(error.code)) return false;
    throw new Error(`threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}, not a DuebatchError`, { cause: error });
  }
}

const anything = fc.anything({ maxDepth: 2, maxKeys: 4, withBigInt: true, withBoxedValues: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true });
const special = fc.constantFrom<unknown>(Number.NaN, -0, 0, -1, 1.5, Number.POSITIVE_INFINITY, 2 ** 53, null, '', 'x'.repeat(1 << 16), Symbol('fuzz'), 1n, true);

/** A field: mostly a good value, sometimes an odd one or anything. */
const field = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 8, arbitrary: good }, { weight: 1, arbitrary: special }, { weight: 1, arbitrary: anything });
const count = field(fc.integer({ min: 1, max: 100_000 }));
const fn = <F>(f: F): fc.Arbitrary<unknown> => field(fc.constant(f));

/** Every dispatcher option but `source` (filled in per run). */
const dispatcherFields = {
  endpoint: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom<unknown>(ENDPOINT, new URL(ENDPOINT), () => ENDPOINT) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>('ftp://127.0.0.1/x', 'not a url', '', 'http://') },
    { weight: 1, arbitrary: special },
    { weight: 1, arbitrary: anything },
  ),
  headers: field(fc.constantFrom<unknown>({ 'x-api-key': 'k' }, () => ({ 'x-api-key': 'k' }), { 'x-n': 1 })),
  concurrency: count, maxMessages: count, connections: count, pipelining: count,
  leaseMs: count, headersTimeoutMs: count, bodyTimeoutMs: count, keepAliveTimeoutMs: count,
  gzipMinBytes: count, maxBodyBytes: count, maxResponseBytes: count, maxDeadLetters: count,
  serialize: fn((values: unknown[]) => JSON.stringify(values)),
  contentType: field(fc.constant('application/json')),
  isAck: fn(() => true),
  retryPolicy: fn(() => undefined),
  onDeadLetter: fn(() => undefined),
  circuit: field(fc.record({ failureThreshold: count, pauseMs: count }, { requiredKeys: [] })),
  signingSecret: field(fc.constantFrom<unknown>(SECRET, [SECRET, SECRET], [], 'whsec_', 'secret')),
  userAgent: field(fc.constant('fuzz/1')),
  maxAttempts: count, minDelayMs: count, maxDelayMs: count,
  retryStatuses: field(fc.constantFrom<unknown>([500, 503], [], [99], ['500'])),
  retryErrorCodes: field(fc.constantFrom<unknown>(['ECONNRESET'], [], [1])),
  random: fn(() => 0.5),
  clock: field(fc.constant({ now: () => 0 })),
  signal: field(fc.constant(new AbortController().signal)),
  dispatcher: field(fc.constantFrom<unknown>({ dispatch: () => true })),
};

const sourceArb = fc.oneof({ weight: 8, arbitrary: fc.constant('queue' as const) }, { weight: 1, arbitrary: special }, { weight: 1, arbitrary: anything });

describe('Dispatcher and createPushClient under arbitrary options', () => {
  it('new Dispatcher(options) builds or throws a typed error', () => {
    fc.assert(
      fc.property(sourceArb, fc.record(dispatcherFields, { requiredKeys: [] }), (source, fields) => {
        builds(() => new Dispatcher({ ...fields, source: source === 'queue' ? new TimeSortedQueue({ lingerMs: 0 }) : source } as never));
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it('new Dispatcher(anything) builds or throws a typed error', () => {
    fc.assert(fc.property(anything, (options) => void builds(() => new Dispatcher(options as never))), { seed: SEED, numRuns: 500 });
  });

  it('createPushClient(options) builds a client that closes, or throws a typed error', async () => {
    const queueFields = { lingerMs: count, maxBatchSize: count, maxPending: count, perKeyOrder: field(fc.boolean()), sizeOf: fn(() => 1), maxBatchBytes: count };
    await fc.assert(
      fc.asyncProperty(fc.record({ ...dispatcherFields, ...queueFields }, { requiredKeys: ['endpoint'] }), async (options) => {
        let client: ReturnType<typeof createPushClient> | undefined;
        if (builds(() => (client = createPushClient(options as never)))) await client?.close({ timeoutMs: 0 });
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('the options the fuzz first caught', () => {
  const queue = (): TimeSortedQueue<string, number> => new TimeSortedQueue<string, number>({ lingerMs: 0 });
  const refusal = (options: Record<string, unknown>): unknown => {
    try {
      new Dispatcher<string, number>({ source: queue(), endpoint: ENDPOINT, ...options } as never);
    } catch (error) {
      return error;
    }
    return undefined;
  };

  // Each of these once escaped as a TypeError, or (the clock) was taken and then threw inside a timer.
  it.each([
    [{ signal: 5 }, 'options.signal'],
    [{ signal: {} }, 'options.signal'],
    [{ dispatcher: null }, 'options.dispatcher'],
    [{ clock: 5 }, 'options.clock'],
    [{ clock: {} }, 'options.clock'],
  ])('%j is refused with InvalidArgumentError naming %s', (options, argument) => {
    expect(refusal(options)).toMatchObject({ code: 'ERR_INVALID_ARGUMENT', argument });
  });
});
