/**
 * Clocks and timers. Every piece of duebatch that depends on time takes a {@link Clock},
 * so tests inject one and need no fake timers, and production gets a monotonic clock.
 */
import { AbortedError } from './errors.js';

/** A source of time in milliseconds. Only differences between readings matter. */
export interface Clock {
  /** Milliseconds. Must never go backwards. */
  now(): number;
}

/**
 * The default clock: epoch milliseconds at process start plus `performance.now()` since then.
 * Readings look like `Date.now()` (so they are readable in logs and `nextDueAt()`), but a
 * wall-clock step (NTP, a user changing the date, a VM resume) neither releases nor holds batches.
 */
export const monotonicClock: Clock = (() => {
  const origin = Date.now() - performance.now();
  return { now: () => origin + performance.now() };
})();

/** Node's `setTimeout` fires delays above this after 1 ms (with a warning); longer waits are chained. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** A pending wake-up from {@link setLongTimeout}. */
export interface LongTimeout {
  /** Cancels the wake-up. Idempotent. */
  cancel(): void;
}

/** Options of {@link setLongTimeout}. */
export interface LongTimeoutOptions {
  /** Clock the due time is measured on. @default monotonicClock */
  clock?: Clock;
  /** Whether the timer keeps the process alive. @default false */
  ref?: boolean;
}

/**
 * Calls `callback` once `clock.now() >= dueAt`. Waits longer than {@link MAX_TIMER_DELAY_MS}
 * are chained, re-reading the clock at each link, so a 40-day wait fires on time instead of
 * after 1 ms. The timer is unref'd unless `ref: true`.
 */
export function setLongTimeout(callback: () => void, dueAt: number, options: LongTimeoutOptions = {}): LongTimeout {
  const clock = options.clock ?? monotonicClock;
  let handle: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const delay = Math.max(0, Math.ceil(dueAt - clock.now()));
    if (delay > MAX_TIMER_DELAY_MS) {
      handle = setTimeout(arm, MAX_TIMER_DELAY_MS);
    } else {
      handle = setTimeout(() => {
        handle = undefined;
        // A clock that runs slow against the timer (coarse timers, a test clock) must not fire early.
        if (clock.now() < dueAt) arm();
        else callback();
      }, delay);
    }
    if (options.ref !== true) handle.unref();
  };
  arm();
  return {
    cancel() {
      if (handle !== undefined) clearTimeout(handle);
      handle = undefined;
    },
  };
}

/**
 * Resolves after `ms` milliseconds, or rejects with {@link AbortedError} as soon as `signal` aborts.
 * The timer is unref'd: a sleep never holds the process open on its own.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(new AbortedError('sleep aborted', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(handle);
      reject(new AbortedError('sleep aborted', { cause: signal?.reason }));
    };
    const handle = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    handle.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A clock moved by hand, for tests and simulations. */
export class ManualClock implements Clock {
  #now: number;

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Moves the clock forward by `ms` (never backwards). */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`ManualClock.advance: ms must be >= 0, received ${ms}`);
    this.#now += ms;
  }

  /** Sets the clock to `t`, which must not be earlier than now. */
  set(t: number): void {
    if (!(t >= this.#now)) throw new RangeError(`ManualClock.set: time must not go backwards (${t} < ${this.#now})`);
    this.#now = t;
  }
}
