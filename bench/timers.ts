/**
 * Idle timeouts for many keys: TimerWheel against the seed's two designs, one `setTimeout` per
 * key (re-created on each touch, or kept and `refresh()`ed) and a `Map` of last touches scanned
 * by `setInterval`. Every key is touched 5 times, in a random order each round (packets from
 * many users interleave; a sequential order would flatter every Map by walking it in memory
 * order). Reports touches/s and heap bytes per key, with ratios against `setTimeout` + `refresh()`.
 *
 * node --expose-gc --import tsx bench/timers.ts [--quick]
 */
import { monotonicClock } from '../src/time.js';
import { TimerWheel } from '../src/timers/timer-wheel.js';
import { heapUsed, printTable, quick, ratio, type Row } from './table.js';

const keyCount = quick ? 100_000 : 1_000_000;
const touchesPerKey = 5;
const timeoutMs = 30_000;

/** One way to keep an idle timeout per key. */
interface Design {
  name: string;
  /** Builds empty state and returns the touch loop over `sequence` plus a disposer. */
  create(): { touchAll(sequence: Uint32Array): void; dispose(): void };
}

let expired = 0;
const onExpire = (keys: readonly number[]): void => {
  expired += keys.length;
};
/** A per-key timer's callback, which like the seed's captures its key. */
const expireOne = (key: number): void => onExpire([key]);

const designs: Design[] = [
  {
    name: 'TimerWheel',
    create() {
      const wheel = new TimerWheel<number>({ timeoutMs, onExpire });
      return {
        touchAll(sequence) {
          for (let i = 0; i < sequence.length; i++) wheel.touch(sequence[i]!);
        },
        dispose: () => wheel.close(),
      };
    },
  },
  {
    name: 'setTimeout + refresh()',
    create() {
      const timers = new Map<number, NodeJS.Timeout>();
      return {
        touchAll(sequence) {
          for (let i = 0; i < sequence.length; i++) {
            const key = sequence[i]!;
            const timer = timers.get(key);
            if (timer === undefined) timers.set(key, setTimeout(() => expireOne(key), timeoutMs));
            else timer.refresh();
          }
        },
        dispose: () => clearAll(timers),
      };
    },
  },
  {
    name: 'setTimeout re-created',
    create() {
      const timers = new Map<number, NodeJS.Timeout>();
      return {
        touchAll(sequence) {
          for (let i = 0; i < sequence.length; i++) {
            const key = sequence[i]!;
            const timer = timers.get(key);
            if (timer !== undefined) clearTimeout(timer);
            timers.set(key, setTimeout(() => expireOne(key), timeoutMs));
          }
        },
        dispose: () => clearAll(timers),
      };
    },
  },
  {
    name: 'Map + setInterval scan',
    create() {
      const lastTouch = new Map<number, number>();
      const scan = (): void => {
        const now = monotonicClock.now();
        for (const [key, at] of lastTouch) {
          if (now - at < timeoutMs) continue;
          lastTouch.delete(key);
          expireOne(key);
        }
      };
      const interval = setInterval(scan, 1000);
      return {
        touchAll(sequence) {
          for (let i = 0; i < sequence.length; i++) lastTouch.set(sequence[i]!, monotonicClock.now());
        },
        dispose: () => clearInterval(interval),
      };
    },
  },
];

function clearAll(timers: Map<number, NodeJS.Timeout>): void {
  for (const timer of timers.values()) clearTimeout(timer);
  timers.clear();
}

/** Every key in `0..keys` `rounds` times, each round in its own random order (seeded, so runs compare). */
function touchSequence(keys: number, rounds: number): Uint32Array {
  const sequence = new Uint32Array(keys * rounds);
  let seed = 0x9e3779b9;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  for (let round = 0; round < rounds; round++) {
    const part = sequence.subarray(round * keys, (round + 1) * keys);
    for (let i = 0; i < keys; i++) part[i] = i;
    for (let i = keys - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const swap = part[i]!;
      part[i] = part[j]!;
      part[j] = swap;
    }
  }
  return sequence;
}

interface Measure {
  touchesPerSecond: number;
  heapPerKey: number;
}

function measure(design: Design, sequence: Uint32Array): Measure {
  const warmUp = design.create();
  warmUp.touchAll(touchSequence(10_000, touchesPerKey));
  warmUp.dispose();
  const before = heapUsed();
  const subject = design.create();
  const start = performance.now();
  subject.touchAll(sequence);
  const elapsedMs = performance.now() - start;
  const heapPerKey = (heapUsed() - before) / keyCount;
  subject.dispose();
  return { touchesPerSecond: (sequence.length / elapsedMs) * 1000, heapPerKey };
}

const sequence = touchSequence(keyCount, touchesPerKey);
const results = designs.map((design) => ({ name: design.name, ...measure(design, sequence) }));
const baseline = results.find((result) => result.name === 'setTimeout + refresh()')!;
const rows: Row[] = results.map((result) => ({
  design: result.name,
  'touches/s': result.touchesPerSecond,
  'vs refresh()': ratio(result.touchesPerSecond, baseline.touchesPerSecond),
  'heap B/key': result.heapPerKey,
  'vs refresh() ': ratio(result.heapPerKey, baseline.heapPerKey),
}));
printTable(`timers: ${keyCount.toLocaleString('en-US')} keys, each touched ${touchesPerKey} times, ${timeoutMs / 1000} s timeout`, rows);
if (expired > 0) throw new Error(`${expired} keys expired during the bench: it ran longer than the timeout`);
