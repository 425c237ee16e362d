/** Small helpers shared by the example-based queue tests. */
import { expect } from 'vitest';
import type { BatchQueue, Batch } from '../../src/index.js';

/** Runs `fn`, requires it to throw an instance of `type` with `props` (e.g. its `code`), and returns the error. */
export function expectThrows<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E, props: Record<string, unknown>): E {
  let error: unknown;
  try {
    fn();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(type);
  expect(error).toMatchObject(props);
  return error as E;
}

/** Each batch as `key: v1 v2`, for compact expectations. */
export const shown = <K, V>(batches: Batch<K, V>[]): string[] => batches.map((b) => `${String(b.key)}: ${b.values.join(' ')}`);

/** What can be observed of a queue without taking anything; checks its invariants on the way. */
export function snapshot<S, K, V>(queue: BatchQueue<S, K, V>): unknown {
  queue.checkInvariants();
  return { size: queue.size, keyCount: queue.keyCount, claimedCount: queue.claimedCount, entries: [...queue] };
}
