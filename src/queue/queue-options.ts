/** Options of the in-memory queues, their defaults and their validation, in one place. */
import { InvalidArgumentError } from '../errors.js';
import { monotonicClock, type Clock } from '../time.js';
import * as check from '../validate.js';

/** Orders sort keys: negative when `a` comes first, positive when `b` does, 0 when equal. */
export type Comparator<S> = (a: S, b: S) => number;

/** Options shared by {@link SortedQueue} and {@link TimeSortedQueue}. */
export interface BatchQueueOptions<V> {
  /**
   * Bound on the values the queue holds (pending plus claimed). A publish beyond it throws
   * `QueueFullError` and stores nothing.
   * @default Infinity
   */
  maxPending?: number;
  /**
   * Most values in one batch. A key with more pending values gives them out over several batches.
   * In a `TimeSortedQueue` a key with this many pending values is also due at once.
   * @default Infinity
   */
  maxBatchSize?: number;
  /**
   * Most bytes (as `sizeOf` counts them) in one batch; a single larger value is a batch of its own.
   * In a `TimeSortedQueue` a key with this many pending bytes is also due at once. Needs `sizeOf`.
   * @default Infinity
   */
  maxBatchBytes?: number;
  /** Size of a value in bytes, for `maxBatchBytes`. Called once per publish. */
  sizeOf?: (value: V) => number;
  /**
   * How long a claimed batch may stay unsettled before it returns to the queue by itself.
   * `claim(…, { leaseMs })` overrides it per claim.
   * @default 30_000
   */
  leaseMs?: number;
  /**
   * While a key has a claimed batch outstanding, none of its newer values are claimed, so a
   * consumer that processes claims concurrently still handles each key's batches in order.
   * @default true
   */
  perKeyOrder?: boolean;
  /** Time source for leases, `notBefore` and (in a `TimeSortedQueue`) due times. @default monotonicClock */
  clock?: Clock;
}

/** Options of {@link SortedQueue}. */
export interface SortedQueueOptions<S, V> extends BatchQueueOptions<V> {
  /**
   * Orders sort keys that are not numbers (priorities, strings, tuples). Ties between keys are
   * broken by publish order. Without it sort keys must be numbers (not NaN).
   * @default numeric order
   */
  compare?: Comparator<S>;
}

/** Options of {@link BatchQueueOptions} with every default applied. */
export interface ResolvedQueueOptions<V> {
  maxPending: number;
  maxBatchSize: number;
  maxBatchBytes: number;
  sizeOf: ((value: V) => number) | undefined;
  leaseMs: number;
  perKeyOrder: boolean;
  clock: Clock;
}

/** Applies defaults and validates; throws `InvalidArgumentError` naming the first bad option. */
export function resolveQueueOptions<V>(options: BatchQueueOptions<V> | undefined): ResolvedQueueOptions<V> {
  const o = check.optionsObject('options', options);
  const resolved: ResolvedQueueOptions<V> = {
    maxPending: check.positiveLimit('options.maxPending', o.maxPending ?? Infinity),
    maxBatchSize: check.positiveLimit('options.maxBatchSize', o.maxBatchSize ?? Infinity),
    maxBatchBytes: check.positiveLimit('options.maxBatchBytes', o.maxBatchBytes ?? Infinity),
    sizeOf: o.sizeOf === undefined ? undefined : check.func<(value: V) => number>('options.sizeOf', o.sizeOf),
    leaseMs: check.positiveNumber('options.leaseMs', o.leaseMs ?? 30_000),
    perKeyOrder: check.boolean('options.perKeyOrder', o.perKeyOrder ?? true),
    clock: o.clock ?? monotonicClock,
  };
  if (typeof resolved.clock !== 'object' || resolved.clock === null || typeof resolved.clock.now !== 'function') {
    throw new InvalidArgumentError('options.clock', 'an object with a now() method', resolved.clock);
  }
  if (resolved.maxBatchBytes !== Infinity && resolved.sizeOf === undefined) {
    throw new InvalidArgumentError('options.sizeOf', 'a function when maxBatchBytes is set', undefined);
  }
  return resolved;
}

/** Numeric order. Sort keys are checked to be non-NaN numbers on publish, so comparisons are total. */
export function compareNumbers(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
