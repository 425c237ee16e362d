/**
 * The scenario the seed implementation failed: producers publishing to rotating keys, a consumer
 * pulling on a timer, lingerMs 3000, simulated on a ManualClock. The seed lost and duplicated
 * values, released keys early through stale index entries, could livelock its consume loop,
 * treated maxMessages as a hint and ignored its constructor options.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, QueueFullError, TimeSortedQueue } from '../../src/index.js';
import { expectThrows } from './helpers.js';

const LINGER_MS = 3000;

interface ScenarioOptions {
  producers: number;
  publishEveryMs: number;
  keys: number;
  pullEveryMs: number;
  pullMax: number;
  durationMs: number;
}

interface ScenarioResult {
  published: number;
  delivered: number[];
  /** Batches released before LINGER_MS after their oldest value, as readable lines. */
  early: string[];
  /** Pulls over pullMax, batches mixing keys or out of publish order, index listing a key twice. */
  broken: string[];
  /** Most pulls one consume loop needed: more than 1 means the bound held values back. */
  mostPullsInOneLoop: number;
}

function runScenario(o: ScenarioOptions): ScenarioResult {
  const clock = new ManualClock(0);
  const queue = new TimeSortedQueue<string, number>({ clock, lingerMs: LINGER_MS });
  const publishedAt: number[] = [];
  const keyOf: string[] = [];
  const sent = new Array<number>(o.producers).fill(0);
  const result: ScenarioResult = { published: 0, delivered: [], early: [], broken: [], mostPullsInOneLoop: 0 };

  const consume = (): void => {
    let pulls = 0;
    for (let batches = queue.pull(o.pullMax); batches.length > 0; batches = queue.pull(o.pullMax)) {
      if (++pulls > 10_000) throw new Error(`livelock at ${clock.now()} ms: pull keeps returning batches`);
      const total = batches.reduce((sum, b) => sum + b.values.length, 0);
      if (total > o.pullMax) result.broken.push(`pull of ${total} values > ${o.pullMax}`);
      for (const { key, values } of batches) {
        const oldest = Math.min(...values.map((v) => publishedAt[v] ?? Infinity));
        if (clock.now() - oldest < LINGER_MS) result.early.push(`${key} at ${clock.now()}: oldest value from ${oldest}`);
        if (values.some((v, i) => keyOf[v] !== key || (i > 0 && v < (values[i - 1] ?? 0)))) result.broken.push(`batch of ${key} mixed up`);
        result.delivered.push(...values);
      }
    }
    result.mostPullsInOneLoop = Math.max(result.mostPullsInOneLoop, pulls);
    const indexed = [...queue].map((e) => e.key);
    if (new Set(indexed).size !== indexed.length) result.broken.push(`a key indexed twice at ${clock.now()}`);
  };

  for (let t = 0; t <= o.durationMs; t++) {
    clock.set(t);
    for (let p = 0; p < o.producers; p++) {
      // Producers are staggered by a few ms and each walks the keys from its own offset.
      if (t < p * 4 || (t - p * 4) % o.publishEveryMs !== 0) continue;
      const key = `k${(p * 7 + (sent[p] ?? 0)) % o.keys}`;
      sent[p] = (sent[p] ?? 0) + 1;
      publishedAt.push(t);
      keyOf.push(key);
      queue.publish(key, result.published++);
    }
    if (t % o.pullEveryMs === 0) consume();
    if (t % 1000 === 0) queue.checkInvariants();
  }
  clock.advance(LINGER_MS); // producers stopped: everything left becomes due
  consume();
  expect(queue.counts()).toEqual({ pending: 0, claimed: 0, keys: 0 });
  return result;
}

describe('seed scenario: 4 producers every 15 ms, a consumer every 100 ms, lingerMs 3000', () => {
  let result: ScenarioResult;
  beforeAll(() => {
    result = runScenario({ producers: 4, publishEveryMs: 15, keys: 24, pullEveryMs: 100, pullMax: 100, durationMs: 60_000 });
  });

  it('delivers every value exactly once', () => {
    expect(result.published).toBeGreaterThan(15_000);
    const sorted = [...result.delivered].sort((a, b) => a - b);
    expect(sorted).toEqual(Array.from({ length: result.published }, (_, i) => i));
  });

  it('releases no batch before lingerMs after its oldest value (no stale early entry)', () => {
    expect(result.early).toEqual([]);
  });

  it('keeps every pull within maxMessages, every batch to one key in order, every key indexed once', () => {
    expect(result.broken).toEqual([]);
    expect(result.mostPullsInOneLoop).toBeGreaterThan(1); // the bound was binding at times
  });
});

describe('seed bugs, one by one', () => {
  function queueAt0(options: { maxBatchSize?: number; maxPending?: number } = {}): { clock: ManualClock; queue: TimeSortedQueue<string, string> } {
    const clock = new ManualClock(0);
    return { clock, queue: new TimeSortedQueue<string, string>({ clock, lingerMs: LINGER_MS, ...options }) };
  }

  type Take = (queue: TimeSortedQueue<string, string>) => () => void;
  const pulled: Take = (queue) => {
    expect(queue.pull()).toHaveLength(1);
    return () => undefined;
  };
  const claimed: Take = (queue) => {
    const batches = queue.claim();
    expect(batches).toHaveLength(1);
    return () => batches.forEach((batch) => queue.ack(batch));
  };

  it.each([
    ['pulled', pulled],
    ['claimed, then acked after its next value', claimed],
  ])('a key that was %s waits a full window for its next value: no stale entry releases it early', (_, take) => {
    const { clock, queue } = queueAt0();
    queue.publish('a', 'a1');
    clock.set(3000);
    const settle = take(queue);

    clock.set(3001);
    queue.publish('a', 'a2');
    settle();
    clock.set(3100);
    expect(queue.pull()).toEqual([]);
    expect([...queue].map((e) => e.key)).toEqual(['a']);
    clock.set(6000);
    expect(queue.pull()).toEqual([]);
    clock.set(6001);
    expect(queue.pull().map((b) => b.values)).toEqual([['a2']]);
  });

  it('maxMessages is a hard bound: a 50-value key gives 10 to pull(10)', () => {
    const { clock, queue } = queueAt0();
    for (let i = 0; i < 50; i++) queue.publish('a', `a${i}`);
    clock.set(3000);

    const sizes: number[] = [];
    for (let batches = queue.pull(10); batches.length > 0; batches = queue.pull(10)) sizes.push(...batches.map((b) => b.values.length));
    expect(sizes).toEqual([10, 10, 10, 10, 10]);
  });

  it('honours the options given to the constructor', () => {
    const { clock, queue } = queueAt0({ maxBatchSize: 2, maxPending: 3 });
    expect(queue.lingerMs).toBe(LINGER_MS);
    queue.publish('a', 'a1');
    queue.publish('b', 'b1');

    clock.set(2999); // past the default 1000 ms window, not past ours
    expect(queue.pull()).toEqual([]);
    queue.publish('b', 'b2'); // b is full at 2 values
    expect(queue.pull().map((b) => b.values)).toEqual([['b1', 'b2']]);
    queue.publish('c', 'c1');
    queue.publish('c', 'c2');
    expectThrows(() => queue.publish('d', 'd1'), QueueFullError, { code: 'ERR_QUEUE_FULL', limit: 3 });
  });

  it('100,000 keys due at the same instant come out in publish order, in bounded pulls', () => {
    const { clock, queue } = queueAt0();
    const count = 100_000;
    for (let i = 0; i < count; i++) queue.publish(`k${i}`, `v${i}`);
    clock.set(LINGER_MS);

    const pullSizes: number[] = [];
    const keys: string[] = [];
    for (let batches = queue.pull(1000); batches.length > 0; batches = queue.pull(1000)) {
      pullSizes.push(batches.length);
      for (const batch of batches) keys.push(batch.key);
    }
    expect(pullSizes).toEqual(new Array<number>(100).fill(1000));
    expect(keys).toEqual(Array.from({ length: count }, (_, i) => `k${i}`));
  });
});
