/** How much of a key forms its next batch, and taking that many fresh values off the key. */
import type { KeyState } from './key-state.js';
import type { ResolvedQueueOptions } from './queue-options.js';

/**
 * Values in the key's next batch: a returned batch comes back whole; otherwise the fresh
 * values, at most `maxBatchSize` of them and as many as fit in `maxBatchBytes` (at least one).
 */
export function batchLength<S, K, V>(state: KeyState<S, K, V>, options: ResolvedQueueOptions<V>): number {
  const extra = state.extra;
  const returned = extra?.returned[0];
  if (returned !== undefined) return returned.values.length;
  const count = Math.min(state.values.length, options.maxBatchSize);
  const sizes = extra?.sizes;
  if (sizes === undefined || extra === undefined || extra.bytes <= options.maxBatchBytes) return count;
  let bytes = sizes[0] ?? 0;
  let fit = 1;
  while (fit < count && bytes + (sizes[fit] ?? 0) <= options.maxBatchBytes) bytes += sizes[fit++] ?? 0;
  return fit;
}

/** Takes the first `count` fresh values off the key. The key's place is left as it is. */
export function takeValues<S, K, V>(state: KeyState<S, K, V>, count: number): V[] {
  const extra = state.extra;
  let taken: V[];
  if (count >= state.values.length) {
    // The whole run: hand the array over instead of copying it.
    taken = state.values;
    state.values = [];
  } else {
    taken = state.values.splice(0, count);
  }
  const sizes = extra?.sizes;
  if (extra !== undefined && sizes !== undefined) {
    const removed = sizes.splice(0, count);
    for (const size of removed) extra.bytes -= size;
  }
  return taken;
}
