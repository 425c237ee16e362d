/** The invariants of one key's state, checked by `checkInvariants()` in tests. */
import { describeValue } from '../errors.js';
import { Location, type KeyState } from './key-state.js';
import type { Comparator } from './queue-options.js';

/** Throws an `Error` naming the first broken invariant of `state`. */
export function checkKeyState<S, K, V>(state: KeyState<S, K, V>, perKeyOrder: boolean, compare: Comparator<S>): void {
  const name = describeValue(state.key);
  if (state.pending === 0 && state.claims === 0) throw new Error(`empty key ${name} kept`);
  if (state.claims < 0) throw new Error(`negative claim count on ${name}`);
  if (state.pending === 0 && state.where !== Location.NONE) throw new Error(`key ${name} indexed with nothing pending`);
  if (state.pending > 0 && state.where === Location.NONE && !(perKeyOrder && state.claims > 0)) {
    throw new Error(`key ${name} has pending values but no place in an index`);
  }
  const extra = state.extra;
  if (extra === undefined) return;
  const counted = extra.returned.reduce((sum, record) => sum + record.values.length, 0);
  if (counted !== extra.returnedCount) throw new Error(`returnedCount of ${name} is off`);
  for (const record of extra.returned) {
    if (record.status !== 'returned') throw new Error(`returned batch ${record.id} marked ${record.status}`);
    if (compare(record.sortKey, state.sortKey) < 0) throw new Error(`key ${name} sits after a returned batch`);
  }
  if (extra.sizes !== undefined) {
    if (extra.sizes.length !== state.values.length) throw new Error(`sizes of ${name} out of step`);
    if (extra.sizes.reduce((a, b) => a + b, 0) !== extra.bytes) throw new Error(`bytes of ${name} out of step`);
  }
}

