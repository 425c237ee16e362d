import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, InvalidArgumentError, QueueClosedError, QueueFullError } from '../../src/errors.js';
import type { Clock } from '../../src/time.js';
import { TimerWheel, type TimerWheelOptions } from '../../src/timers/timer-wheel.js';

/** The faked `Date.now()`: fake timers set it to each timer's due time as they fire it. */
const fakeClock: Clock = { now: () => Date.now() };

interface Expiry {
  at: number;
  keys: string[];
}

function wheelWith(options: Partial<TimerWheelOptions<string>> = {}) {
  const expiries: Expiry[] = [];
  const wheel = new TimerWheel<string>({
    timeoutMs: 1000,
    tickMs: 100,
    clock: fakeClock,
    onExpire: (keys) => expiries.push({ at: Date.now(), keys }),
    ...options,
  });
  const expiredAt = (key: string): number[] => expiries.filter((e) => e.keys.includes(key)).map((e) => e.at);
  return { wheel, expiries, expiredAt };
}

/** Moves time to `t` (ms since the test started), firing the timers due on the way. */
function advanceTo(t: number): void {
  vi.advanceTimersByTime(t - Date.now());
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'], now: 0 });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('TimerWheel precision', () => {
  it('fires a key touched on a tick exactly timeoutMs later', () => {
    const { wheel, expiries } = wheelWith();
    wheel.touch('a');
    advanceTo(999);
    expect(expiries).toEqual([]);
    advanceTo(1000);
    expect(expiries).toEqual([{ at: 1000, keys: ['a'] }]);
  });

  it('fires a key touched at any moment within [timeoutMs, timeoutMs + tickMs) of the touch', () => {
    const { wheel, expiredAt } = wheelWith();
    const offsets = [0, 1, 37, 50, 99];
    for (const offset of offsets) {
      advanceTo(offset + 200 * offsets.indexOf(offset));
      wheel.touch(`k${offset}`);
    }
    const touchedAt = offsets.map((offset, i) => offset + 200 * i);
    advanceTo(5000);
    offsets.forEach((offset, i) => {
      const [firedAt] = expiredAt(`k${offset}`);
      expect(firedAt! - touchedAt[i]!).toBeGreaterThanOrEqual(1000);
      expect(firedAt! - touchedAt[i]!).toBeLessThan(1100);
    });
  });

  it('fires a timeout many turns of the ring long on time', () => {
    const { wheel, expiredAt } = wheelWith({ timeoutMs: 10_000, tickMs: 100, slots: 3 });
    advanceTo(50);
    wheel.touch('a');
    advanceTo(20_000);
    expect(expiredAt('a')).toEqual([10_100]);
  });

  it('fires a timeout too small to register against the clock at the next tick, not a turn later', () => {
    const { wheel, expiredAt } = wheelWith();
    wheel.touch('keepalive', 100_000);
    advanceTo(100); // tick 1 is processed
    wheel.touch('a', 1e-15); // 100 + 1e-15 === 100
    wheel.checkInvariants();
    advanceTo(1000);
    expect(expiredAt('a')).toEqual([200]);
  });

  it('defaults tickMs to min(1000, timeoutMs / 20): a 30 s timeout fires within [30 s, 31 s)', () => {
    const { wheel, expiredAt } = wheelWith({ timeoutMs: 30_000, tickMs: undefined as unknown as number });
    advanceTo(1);
    wheel.touch('a');
    expect(wheel.deadlineOf('a')).toBe(31_000);
    advanceTo(40_000);
    expect(expiredAt('a')).toEqual([31_000]);
  });
});

describe('TimerWheel slots', () => {
  const slots = 8;
  const tickMs = 10;
  const timeoutMs = 30;

  // A key touched at tick t is due at tick t + 3, so it sits in slot (t + 3) % 8.
  for (let index = 0; index < slots; index++) {
    it(`arms, cancels and fires a key that sits in slot ${index}`, () => {
      const { wheel, expiries } = wheelWith({ slots, tickMs, timeoutMs });
      wheel.touch('keepalive', 100_000); // keeps the wheel ticking, so the index is reached by ticking
      const touchTick = (index - 3 + slots) % slots + slots;
      advanceTo(touchTick * tickMs);
      wheel.touch('fires');
      wheel.touch('cancelled');
      expect(wheel.cancel('cancelled')).toBe(true);
      wheel.checkInvariants();
      advanceTo((touchTick + 3) * tickMs);
      expect(expiries.flatMap((e) => e.keys)).toEqual(['fires']);
      expect(wheel.has('keepalive')).toBe(true);
      expect(expiries[0]!.at).toBe((touchTick + 3) * tickMs);
      wheel.checkInvariants();
    });
  }

  it('regression: cancel removes a key that sits in slot 0 (the seed tested `slotIndex && set.delete(uid)`)', () => {
    const { wheel, expiries } = wheelWith({ slots, tickMs, timeoutMs });
    advanceTo(5 * tickMs); // due at tick 8: slot 0
    wheel.touch('a');
    expect(wheel.cancel('a')).toBe(true);
    advanceTo(1000);
    expect(expiries).toEqual([]);
    expect(wheel.size).toBe(0);
  });

  it('regression: a touch while the current slot index is 0 arms ahead of it (the seed computed slot -1)', () => {
    const { wheel, expiredAt } = wheelWith({ slots, tickMs, timeoutMs });
    wheel.touch('keepalive', 100_000);
    advanceTo(slots * tickMs);
    wheel.touch('a'); // at tick 8, slot index 0
    advanceTo(1000);
    expect(expiredAt('a')).toEqual([(slots + 3) * tickMs]);
  });

  it('expires many keys due in one slot in a single onExpire call', () => {
    const { wheel, expiries } = wheelWith();
    const keys = Array.from({ length: 10_000 }, (_, i) => `k${i}`);
    for (const key of keys) wheel.touch(key);
    advanceTo(1000);
    expect(expiries).toHaveLength(1);
    expect(expiries[0]!.keys).toEqual(keys);
    expect(wheel.size).toBe(0);
  });
});

describe('TimerWheel touch and cancel', () => {
  it('never fires a key cancelled before its expiry; cancel answers whether it was held', () => {
    const { wheel, expiries } = wheelWith();
    wheel.touch('a');
    advanceTo(500);
    expect(wheel.cancel('a')).toBe(true);
    expect(wheel.cancel('a')).toBe(false);
    expect(wheel.has('a')).toBe(false);
    advanceTo(3000);
    expect(expiries).toEqual([]);
  });

  it('re-arms a key touched after it expired', () => {
    const { wheel, expiredAt } = wheelWith();
    wheel.touch('a');
    advanceTo(1500);
    wheel.touch('a');
    advanceTo(5000);
    expect(expiredAt('a')).toEqual([1000, 2500]);
  });

  it('re-arms a key touched inside the expiry handler, and arms new keys touched there', () => {
    const expiries: Expiry[] = [];
    const wheel: TimerWheel<string> = new TimerWheel<string>({
      timeoutMs: 1000,
      tickMs: 100,
      clock: fakeClock,
      onExpire: (keys) => {
        expiries.push({ at: Date.now(), keys });
        if (keys.includes('a') && Date.now() < 2000) wheel.touch('a');
        if (keys.includes('a')) wheel.touch('b');
        wheel.checkInvariants();
      },
    });
    wheel.touch('a');
    advanceTo(10_000);
    expect(expiries).toEqual([
      { at: 1000, keys: ['a'] },
      { at: 2000, keys: ['a', 'b'] },
      { at: 3000, keys: ['b'] },
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fires a key cancelled then touched once, timeoutMs after the second touch', () => {
    const { wheel, expiredAt } = wheelWith();
    wheel.touch('a');
    advanceTo(300);
    wheel.cancel('a');
    wheel.touch('a');
    wheel.checkInvariants();
    advanceTo(5000);
    expect(expiredAt('a')).toEqual([1300]);
  });

  it('reschedules to later: a touch before the expiry pushes it back', () => {
    const { wheel, expiredAt } = wheelWith();
    wheel.touch('a');
    advanceTo(900);
    wheel.touch('a');
    advanceTo(1000);
    expect(expiredAt('a')).toEqual([]);
    advanceTo(5000);
    expect(expiredAt('a')).toEqual([1900]);
  });

  it('reschedules to earlier with a shorter timeout for one touch', () => {
    const { wheel, expiredAt } = wheelWith();
    wheel.touch('a', 5000);
    advanceTo(100);
    wheel.touch('a', 200);
    wheel.checkInvariants();
    expect(wheel.deadlineOf('a')).toBe(300);
    advanceTo(10_000);
    expect(expiredAt('a')).toEqual([300]);
  });

  it('bounds the keys held: a new key beyond maxKeys is refused, a held key may be re-touched', () => {
    const { wheel } = wheelWith({ maxKeys: 2 });
    wheel.touch('a');
    wheel.touch('b');
    expect(() => wheel.touch('c')).toThrow(QueueFullError);
    expect(() => wheel.touch('a')).not.toThrow();
    expect(wheel.size).toBe(2);
  });

  it('never lets its counters go negative', () => {
    const { wheel } = wheelWith();
    expect(wheel.cancel('never-touched')).toBe(false);
    wheel.touch('a');
    wheel.cancel('a');
    wheel.cancel('a');
    wheel.touch('b');
    advanceTo(2000);
    wheel.cancel('b');
    wheel.close();
    wheel.close();
    expect(wheel.size).toBe(0);
    expect(wheel.stats).toEqual({ touches: 2, expired: 1, cancelled: 1, handlerErrors: 0, ticks: 10 });
  });
});

describe('TimerWheel handler errors', () => {
  it('routes a throwing handler to onError and keeps expiring the other keys', () => {
    const errors: [unknown, string[]][] = [];
    const expired: string[] = [];
    const failure = new Error('handler bug');
    const { wheel } = wheelWith({
      onExpire: (keys) => {
        expired.push(...keys);
        if (keys.includes('a')) throw failure;
      },
      onError: (error, keys) => errors.push([error, keys]),
    });
    wheel.touch('a');
    advanceTo(100);
    wheel.touch('b');
    advanceTo(5000);
    expect(errors).toEqual([[failure, ['a']]]);
    expect(expired).toEqual(['a', 'b']);
    expect(wheel.stats).toMatchObject({ expired: 2, handlerErrors: 1 });
    expect(wheel.has('a')).toBe(false);
  });

  it('emits the error as a process warning by default, and when onError itself throws', () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const failure = new Error('handler bug');
    const throwing = () => {
      throw failure;
    };
    const byDefault = wheelWith({ onExpire: throwing }).wheel;
    const failingOnError = wheelWith({ onExpire: throwing, onError: throwing }).wheel;
    byDefault.touch('a');
    failingOnError.touch('a');
    advanceTo(1000);
    expect(warnings.mock.calls).toEqual([[failure], [failure]]);
    byDefault.touch('b');
    advanceTo(2000);
    expect(byDefault.stats.expired).toBe(2);
  });
});

describe('TimerWheel timer', () => {
  it('holds no timer while empty, one while it holds keys', () => {
    const { wheel } = wheelWith();
    expect(vi.getTimerCount()).toBe(0);
    wheel.touch('a');
    expect(vi.getTimerCount()).toBe(1);
    wheel.cancel('a');
    expect(vi.getTimerCount()).toBe(0);
    wheel.touch('b');
    advanceTo(1000);
    expect(vi.getTimerCount()).toBe(0);
    wheel.checkInvariants();
  });

  it('does not replay the ticks it slept through while empty', () => {
    const { wheel, expiredAt } = wheelWith();
    wheel.touch('a');
    advanceTo(1000);
    advanceTo(3_600_000);
    wheel.touch('b');
    vi.advanceTimersToNextTimer();
    expect(wheel.stats.ticks).toBe(11);
    advanceTo(3_601_000);
    expect(expiredAt('b')).toEqual([3_601_000]);
  });

  it('unrefs its timer: it never keeps the process alive', () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const { wheel } = wheelWith();
    wheel.touch('a');
    const timer = setTimeoutSpy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
  });

  it('keeps ticks on the start + n * tickMs grid after a late callback', () => {
    const { wheel, expiries } = wheelWith();
    for (let t = 0; t < 1000; t += 100) {
      advanceTo(t);
      wheel.touch(`k${t}`);
    }
    advanceTo(950);
    vi.setSystemTime(Date.now() + 37); // the loop was busy: the pending tick fires 37 ms late
    advanceTo(3000);
    expect(expiries.map((e) => e.at)).toEqual([1037, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900]);
  });

  it('catches up after the event loop was blocked for 2 s: bounded per callback, none lost, none early', () => {
    const { wheel, expiries } = wheelWith({ maxCatchUpTicks: 4 });
    const touchedAt = new Map<string, number>();
    for (let t = 0; t < 1000; t += 50) {
      advanceTo(t);
      wheel.touch(`k${t}`);
      touchedAt.set(`k${t}`, t);
    }
    vi.setSystemTime(Date.now() + 2000); // blocked from 950 to 2950
    const ticksPerCallback: number[] = [];
    while (wheel.size > 0) {
      const before = wheel.stats.ticks;
      vi.advanceTimersToNextTimer();
      ticksPerCallback.push(wheel.stats.ticks - before);
    }
    expect(ticksPerCallback).toEqual([4, 4, 3]); // ticks 10 to 20, the last due, all after the block
    expect(expiries.flatMap((e) => e.keys).sort()).toEqual([...touchedAt.keys()].sort());
    for (const { at, keys } of expiries) {
      for (const key of keys) expect(at - touchedAt.get(key)!).toBeGreaterThanOrEqual(1000);
    }
  });
});

describe('TimerWheel close', () => {
  it('drops every key without expiring it, stops the timer, refuses touches', () => {
    const { wheel, expiries } = wheelWith();
    wheel.touch('a');
    wheel.close();
    expect(vi.getTimerCount()).toBe(0);
    expect(wheel.size).toBe(0);
    expect(wheel.has('a')).toBe(false);
    expect(wheel.cancel('a')).toBe(false);
    expect(() => wheel.touch('a')).toThrow(QueueClosedError);
    advanceTo(5000);
    expect(expiries).toEqual([]);
  });

  it('stops expiring when the handler closes the wheel', () => {
    const calls: string[][] = [];
    const wheel: TimerWheel<string> = new TimerWheel<string>({
      timeoutMs: 1000,
      tickMs: 100,
      clock: fakeClock,
      onExpire: (keys) => {
        calls.push(keys);
        wheel.close();
      },
    });
    wheel.touch('a');
    advanceTo(100);
    wheel.touch('b');
    vi.setSystemTime(5000); // both due in one catch-up callback
    vi.advanceTimersToNextTimer();
    expect(calls).toEqual([['a']]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('TimerWheel validation', () => {
  const onExpire = (): void => undefined;
  const cases: [string, Partial<TimerWheelOptions<string>>][] = [
    ['timeoutMs', { timeoutMs: 0 }],
    ['timeoutMs', { timeoutMs: Number.POSITIVE_INFINITY }],
    ['timeoutMs', { timeoutMs: '30000' as unknown as number }],
    ['tickMs', { tickMs: 0 }],
    ['tickMs', { tickMs: 1.5 }],
    ['tickMs', { tickMs: 2 ** 31 }],
    ['slots', { slots: 0 }],
    ['slots', { slots: 2 ** 24 + 1 }],
    ['maxKeys', { maxKeys: 0 }],
    ['maxCatchUpTicks', { maxCatchUpTicks: 0 }],
    ['onExpire', { onExpire: undefined as unknown as () => void }],
    ['onError', { onError: 'log' as unknown as () => void }],
    ['clock', { clock: {} as Clock }],
  ];
  for (const [argument, options] of cases) {
    it(`rejects ${argument} = ${String(Object.values(options)[0])} naming the option`, () => {
      const attempt = () => new TimerWheel<string>({ timeoutMs: 1000, onExpire, ...options });
      expect(attempt).toThrow(InvalidArgumentError);
      expect(attempt).toThrow(expect.objectContaining({ argument, code: ErrorCode.INVALID_ARGUMENT }));
    });
  }

  it('rejects an undefined or null key and a non-positive per-touch timeout, changing nothing', () => {
    const { wheel } = wheelWith();
    expect(() => wheel.touch(undefined as unknown as string)).toThrow(expect.objectContaining({ argument: 'key' }));
    expect(() => wheel.touch(null as unknown as string)).toThrow(expect.objectContaining({ argument: 'key' }));
    expect(() => wheel.touch('a', 0)).toThrow(expect.objectContaining({ argument: 'timeoutMs' }));
    expect(wheel.size).toBe(0);
    expect(wheel.stats.touches).toBe(0);
  });
});
