import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/time.js';
import { TimerWheel } from '../../src/timers/timer-wheel.js';

/** The faked `Date.now()`: fake timers set it to each timer's due time as they fire it. */
const fakeClock: Clock = { now: () => Date.now() };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'Date'], now: 0 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('TimerWheel against a model', () => {
  type Op =
    | { kind: 'touch'; key: number; timeoutMs: number | undefined }
    | { kind: 'cancel'; key: number }
    | { kind: 'advance'; ms: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constant('touch' as const),
      key: fc.nat(5),
      timeoutMs: fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }),
    }),
    fc.record({ kind: fc.constant('cancel' as const), key: fc.nat(5) }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 700 }) }),
  );
  const timeoutMs = 500;

  function run(slots: number, tickMs: number, ops: Op[]): void {
    vi.setSystemTime(0);
    const due = new Map<number, number>(); // the model: key → the tick time it must fire at
    const fired: [key: number, at: number][] = [];
    const wheel = new TimerWheel<number>({
      timeoutMs,
      tickMs,
      slots,
      clock: fakeClock,
      onExpire: (keys) => keys.forEach((key) => fired.push([key, Date.now()])),
    });
    try {
      for (const step of ops) {
        if (step.kind === 'touch') {
          wheel.touch(step.key, step.timeoutMs);
          due.set(step.key, Math.ceil((Date.now() + (step.timeoutMs ?? timeoutMs)) / tickMs) * tickMs);
        } else if (step.kind === 'cancel') {
          expect(wheel.cancel(step.key)).toBe(due.delete(step.key));
        } else {
          vi.advanceTimersByTime(step.ms);
        }
        for (const [key, at] of fired.splice(0)) {
          expect(at).toBe(due.get(key));
          due.delete(key);
        }
        wheel.checkInvariants();
        expect(wheel.size).toBe(due.size);
        expect(vi.getTimerCount()).toBe(due.size > 0 ? 1 : 0);
        for (const at of due.values()) expect(at).toBeGreaterThan(Date.now());
      }
    } finally {
      wheel.close();
    }
  }

  it('fires every key exactly at the first tick at or after its last touch plus timeout, and nothing else', () => {
    const slots = fc.integer({ min: 1, max: 7 });
    const tickMs = fc.integer({ min: 1, max: 150 });
    fc.assert(fc.property(slots, tickMs, fc.array(op, { maxLength: 60 }), run), { numRuns: 300 });
  });
});
