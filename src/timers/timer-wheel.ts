/**
 * TimerWheel: idle timeouts for very many keys ("mark a user offline after 30 s without a
 * packet"), where every packet re-arms its key's timeout.
 *
 * A hashed timing wheel: a ring of slots, each a `Set` of keys, and a `Map` key → due tick.
 * Ticks fall at `start + n * tickMs`; a key touched at `t` is due at the first tick at or after
 * `t + timeoutMs`, so it fires within `[timeoutMs, timeoutMs + tickMs)` of its last touch.
 *
 * `touch` is lazy: re-arming a key only records its new due tick; the key stays in the slot it
 * sits in. When that slot comes round, each key in it is either due (it expires) or was touched
 * since (it moves to the slot of its new due tick). A key touched on every packet thus moves
 * between Sets about once per timeout instead of once per packet. Timeouts longer than one turn
 * of the ring cost one more visit per turn ("rounds").
 */
import { InvalidArgumentError, QueueClosedError, QueueFullError } from '../errors.js';
import { MAX_TIMER_DELAY_MS, monotonicClock, type Clock } from '../time.js';

/** Options of {@link TimerWheel}. */
export interface TimerWheelOptions<K> {
  /** Milliseconds without a touch after which a key expires. Positive and finite. */
  timeoutMs: number;
  /**
   * Called once per tick that expired keys, with those keys (removed from the wheel before the
   * call, so the handler may `touch` them again). Errors it throws go to `onError`.
   */
  onExpire: (keys: K[]) => void;
  /**
   * Granularity of the wheel: a key fires within `[timeoutMs, timeoutMs + tickMs)` of its last
   * touch. An integer from 1 to 2^31-1.
   * @default timeoutMs / 20 rounded up, at most 1000 (5% slack, a wake-up a second at most)
   */
  tickMs?: number;
  /**
   * Number of slots in the ring. Timeouts longer than `slots * tickMs` still fire on time, at the
   * cost of one more visit per turn. An integer from 1 to 2^24.
   * @default enough for one turn to cover `timeoutMs` (`ceil(timeoutMs / tickMs) + 1`), at most 4096
   */
  slots?: number;
  /**
   * Bound on the keys held. Touching a new key beyond it throws {@link QueueFullError};
   * re-touching a held key always succeeds.
   * @default Infinity
   */
  maxKeys?: number;
  /**
   * Ticks processed per timer callback when the event loop fell behind (blocked, or the process
   * suspended). The rest follow on the next `setImmediate` turn, so I/O runs in between.
   * @default 16
   */
  maxCatchUpTicks?: number;
  /**
   * Receives what `onExpire` throws, with the keys of that call (they stay expired). The wheel
   * keeps ticking either way. An error thrown by `onError` itself is emitted as a process warning.
   * @default emits the error as a process warning (`process.emitWarning`)
   */
  onError?: (error: unknown, keys: K[]) => void;
  /** Clock that touches and ticks are measured on. @default monotonicClock */
  clock?: Clock;
}

/** Counters of a {@link TimerWheel} since it was created. They only ever grow. */
export interface TimerWheelStats {
  /** Calls to `touch` that (re)armed a key. */
  touches: number;
  /** Keys that expired (handed to `onExpire`). */
  expired: number;
  /** Calls to `cancel` that removed a key. */
  cancelled: number;
  /** Calls to `onExpire` that threw. */
  handlerErrors: number;
  /** Ticks processed. */
  ticks: number;
}

interface Settings<K> {
  timeoutMs: number;
  tickMs: number;
  slots: number;
  maxKeys: number;
  maxCatchUpTicks: number;
  onExpire: (keys: K[]) => void;
  onError: (error: unknown, keys: K[]) => void;
  clock: Clock;
}

const MAX_SLOTS = 2 ** 24;

/**
 * Idle timeouts for very many keys: `touch(key)` (re)arms the key's timeout in O(1) without
 * allocating, and `onExpire` receives the keys that went `timeoutMs` without a touch.
 *
 * The wheel runs one unref'd timer, only while it holds keys: it never keeps the process alive,
 * and an idle wheel costs nothing.
 */
export class TimerWheel<K> {
  readonly #settings: Settings<K>;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #tickMs: number;
  readonly #slotCount: number;
  /** Clock reading of tick 0; tick n falls at `#start + n * tickMs`, so drift never accumulates. */
  readonly #start: number;
  /** Key → the tick at which it is due. The only per-key state besides one slot entry. */
  readonly #dueTicks = new Map<K, number>();
  /** Slot `n % slots` holds keys visited at tick n. Created on first use. */
  readonly #ring: (Set<K> | undefined)[];
  /** Entries across the ring, including stale ones (cancelled keys, superseded slots). */
  #entries = 0;
  /** Last tick processed. Every held key is due after it. */
  #processed = 0;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  /** Inside the timer callback: touches and cancels leave scheduling to its end. */
  #running = false;
  #closed = false;
  #touches = 0;
  #expired = 0;
  #cancelled = 0;
  #handlerErrors = 0;
  #ticks = 0;

  constructor(options: TimerWheelOptions<K>) {
    this.#settings = resolveOptions(options);
    this.#clock = this.#settings.clock;
    this.#timeoutMs = this.#settings.timeoutMs;
    this.#tickMs = this.#settings.tickMs;
    this.#slotCount = this.#settings.slots;
    this.#ring = new Array<Set<K> | undefined>(this.#slotCount).fill(undefined);
    this.#start = this.#clock.now();
  }

  /** Keys held (armed and not yet expired or cancelled). */
  get size(): number {
    return this.#dueTicks.size;
  }

  /** A snapshot of the wheel's counters. */
  get stats(): TimerWheelStats {
    return {
      touches: this.#touches,
      expired: this.#expired,
      cancelled: this.#cancelled,
      handlerErrors: this.#handlerErrors,
      ticks: this.#ticks,
    };
  }

  /**
   * (Re)arms `key` to expire `timeoutMs` after now, replacing any earlier deadline (later or
   * earlier). O(1); re-arming a held key allocates nothing.
   * @param timeoutMs - this key's timeout, this time only. @default the wheel's `timeoutMs`
   * @throws {@link QueueClosedError} after `close()`; {@link QueueFullError} for a new key at
   * `maxKeys`; {@link InvalidArgumentError} for an `undefined` or `null` key or a bad `timeoutMs`.
   */
  touch(key: K, timeoutMs?: number): void {
    if (this.#closed) throw new QueueClosedError();
    if (key === undefined || key === null) throw new InvalidArgumentError('key', 'a value other than undefined or null', key);
    const timeout = timeoutMs === undefined ? this.#timeoutMs : validTimeout('timeoutMs', timeoutMs);
    const now = this.#clock.now();
    const elapsed = now - this.#start;
    // The first tick at or after now + timeout, and at least the tick after now's: ticks up to
    // now's may be processed already (a sub-tick timeout on a tick boundary, float rounding).
    const due = Math.max(Math.ceil((elapsed + timeout) / this.#tickMs), Math.floor(elapsed / this.#tickMs) + 1);
    const previous = this.#dueTicks.get(key);
    if (previous === undefined) {
      this.#insert(key, due, now);
    } else if (due !== previous) {
      this.#dueTicks.set(key, due);
      // Later (the usual case): the key stays where it is and moves when its slot comes round.
      // Earlier (a shorter timeout this time): its slot may come round too late, so the key gets
      // an entry in the slot it is due in now; the old entry is dropped when visited.
      if (due < previous) this.#addEntry(key, due);
    }
    this.#touches++;
  }

  /**
   * Disarms `key`: it will not expire. Returns whether it was held. O(1). The key's slot entry is
   * dropped when its slot comes round, or with the whole ring as soon as the wheel is empty.
   */
  cancel(key: K): boolean {
    if (!this.#dueTicks.delete(key)) return false;
    this.#cancelled++;
    if (this.#dueTicks.size === 0 && !this.#running) this.#goIdle();
    return true;
  }

  /** Whether `key` is armed. */
  has(key: K): boolean {
    return this.#dueTicks.has(key);
  }

  /**
   * The clock reading at which `key` expires: the tick at or after its last touch plus timeout.
   * `undefined` if the key is not held.
   */
  deadlineOf(key: K): number | undefined {
    const due = this.#dueTicks.get(key);
    return due === undefined ? undefined : this.#start + due * this.#tickMs;
  }

  /**
   * Drops every key without expiring it and stops the timer. Idempotent. Afterwards `touch`
   * throws {@link QueueClosedError}; `cancel` and `has` answer `false`.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#dueTicks.clear();
    this.#goIdle();
  }

  /**
   * Throws if the wheel's internal state is inconsistent: a held key that no slot will visit by
   * its due tick, a miscounted ring, a timer without keys or keys without a timer. For tests;
   * O(keys + slots).
   */
  checkInvariants(): void {
    const firstVisit = new Map<K, number>();
    let entries = 0;
    this.#ring.forEach((slot, index) => {
      if (slot === undefined) return;
      entries += slot.size;
      const visit = this.#processed + 1 + modulo(index - this.#processed - 1, this.#slotCount);
      for (const key of slot) firstVisit.set(key, Math.min(firstVisit.get(key) ?? Infinity, visit));
    });
    check(entries === this.#entries, `ring holds ${entries} entries, counted ${this.#entries}`);
    for (const [key, due] of this.#dueTicks) {
      check(due > this.#processed, `key ${String(key)} is due at tick ${due}, already processed ${this.#processed}`);
      const visit = firstVisit.get(key);
      check(visit !== undefined && visit <= due, `key ${String(key)} is due at tick ${due}, first visited at ${visit}`);
    }
    const armed = this.#timer !== undefined || this.#immediate !== undefined;
    if (!this.#running) check(armed === this.#dueTicks.size > 0, `timer armed: ${armed}, keys: ${this.#dueTicks.size}`);
    if (this.#dueTicks.size === 0 && !this.#running) check(this.#entries === 0, 'an idle wheel holds slot entries');
  }

  #insert(key: K, due: number, now: number): void {
    if (this.#dueTicks.size >= this.#settings.maxKeys) throw new QueueFullError(this.#settings.maxKeys);
    const wasIdle = this.#dueTicks.size === 0 && !this.#running;
    // An idle wheel skipped the ticks that passed while it was empty: resume from the current one.
    if (wasIdle) this.#processed = this.#tickAt(now);
    this.#dueTicks.set(key, due);
    this.#addEntry(key, due);
    if (wasIdle) this.#schedule();
  }

  /** Puts `key` into the slot visited at tick `due`. */
  #addEntry(key: K, due: number): void {
    const index = due % this.#slotCount;
    let slot = this.#ring[index];
    if (slot === undefined) {
      slot = new Set();
      this.#ring[index] = slot;
    }
    const before = slot.size;
    slot.add(key);
    this.#entries += slot.size - before;
  }

  #tickAt(now: number): number {
    return Math.floor((now - this.#start) / this.#tickMs);
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.#immediate = undefined;
    this.#running = true;
    try {
      const current = this.#tickAt(this.#clock.now());
      let budget = this.#settings.maxCatchUpTicks;
      while (this.#processed < current && budget > 0 && !this.#closed && this.#dueTicks.size > 0) {
        this.#processed++;
        budget--;
        this.#runTick(this.#processed);
      }
    } finally {
      this.#running = false;
    }
    this.#schedule();
  };

  /** Visits the slot of `tick`: expires the keys due, moves the ones touched since they were slotted. */
  #runTick(tick: number): void {
    this.#ticks++;
    const index = tick % this.#slotCount;
    const slot = this.#ring[index];
    if (slot === undefined) return;
    // Rebuilding beats deleting from the Set: most entries leave it, and a slot of a million
    // expired keys is dropped whole.
    this.#ring[index] = undefined;
    this.#entries -= slot.size;
    let expired: K[] | undefined;
    for (const key of slot) {
      const due = this.#dueTicks.get(key);
      if (due === undefined) continue; // cancelled, or expired through another entry
      if (due > tick) {
        this.#addEntry(key, due); // touched since; a due tick turns away lands back in this slot
        continue;
      }
      this.#dueTicks.delete(key);
      (expired ??= []).push(key);
    }
    if (expired !== undefined) this.#emit(expired);
  }

  #emit(keys: K[]): void {
    this.#expired += keys.length;
    try {
      this.#settings.onExpire(keys);
    } catch (error) {
      this.#handlerErrors++;
      try {
        this.#settings.onError(error, keys);
      } catch (secondary) {
        emitWarning(secondary);
      }
    }
  }

  /** Arms the timer for the next tick, or an immediate to catch up, or nothing when idle. */
  #schedule(): void {
    if (this.#closed) return;
    if (this.#dueTicks.size === 0) {
      this.#goIdle();
      return;
    }
    const now = this.#clock.now();
    if (this.#processed < this.#tickAt(now)) {
      this.#immediate = setImmediate(this.#onTimer);
      this.#immediate.unref();
      return;
    }
    const delay = this.#start + (this.#processed + 1) * this.#tickMs - now;
    // Node rounds timer delays to whole milliseconds and may fire a little early by the clock;
    // the callback then finds no tick due and simply schedules again.
    this.#timer = setTimeout(this.#onTimer, Math.max(1, Math.ceil(delay)));
    this.#timer.unref();
  }

  /** Stops the timer and drops the ring's stale entries, which also releases the keys they hold. */
  #goIdle(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
    if (this.#entries > 0) this.#ring.fill(undefined);
    this.#entries = 0;
  }
}

function resolveOptions<K>(options: TimerWheelOptions<K>): Settings<K> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options);
  const timeoutMs = validTimeout('timeoutMs', options.timeoutMs);
  const tickMs = options.tickMs ?? Math.min(1000, Math.ceil(timeoutMs / 20));
  checkInteger('tickMs', tickMs, 1, MAX_TIMER_DELAY_MS);
  const slots = options.slots ?? Math.min(4096, Math.ceil(timeoutMs / tickMs) + 1);
  checkInteger('slots', slots, 1, MAX_SLOTS);
  const maxKeys = options.maxKeys ?? Infinity;
  if (maxKeys !== Infinity) checkInteger('maxKeys', maxKeys, 1, Number.MAX_SAFE_INTEGER);
  const maxCatchUpTicks = options.maxCatchUpTicks ?? 16;
  checkInteger('maxCatchUpTicks', maxCatchUpTicks, 1, Number.MAX_SAFE_INTEGER);
  const onExpire = checkFunction('onExpire', options.onExpire);
  const onError = options.onError === undefined ? emitWarning : checkFunction('onError', options.onError);
  const clock = options.clock ?? monotonicClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw new InvalidArgumentError('clock', 'an object with a now() method', clock);
  }
  return { timeoutMs, tickMs, slots, maxKeys, maxCatchUpTicks, onExpire, onError, clock };
}

function validTimeout(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(name, 'a positive finite number of milliseconds', value);
  }
  return value;
}

function checkInteger(name: string, value: number, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(name, `an integer from ${min} to ${max}`, value);
  }
}

function checkFunction<F>(name: string, value: F): F {
  if (typeof value !== 'function') throw new InvalidArgumentError(name, 'a function', value);
  return value;
}

function emitWarning(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(`TimerWheel onExpire threw ${String(error)}`));
}

function modulo(a: number, n: number): number {
  return ((a % n) + n) % n;
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`TimerWheel invariant broken: ${message}`);
}
