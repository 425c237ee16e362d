/**
 * A key's place, kept on its state. The fresh values have a place (set by the first of them,
 * moved earlier by a smaller sort key, kept while any are pending); each batch that came back
 * (nack, expired lease) keeps the place its key had when it was claimed; the key's place is the
 * smallest of these. Every function here changes the state only: the caller takes the key out
 * of its index before and files it again after.
 */
import type { ClaimRecord, ClaimTable } from './claims.js';
import type { KeyState } from './key-state.js';
import type { Comparator } from './queue-options.js';

type State<S, K, V> = KeyState<S, K, V>;

/** The fresh values' place: on the state itself, or in `extra` while batches came back. */
export function freshSortKey<S, K, V>(state: State<S, K, V>): S {
  return state.hasReturned ? (state.extra?.freshSortKey as S) : state.sortKey;
}

export function freshSeq<S, K, V>(state: State<S, K, V>): number {
  return state.hasReturned ? (state.extra?.freshSeq ?? 0) : state.seq;
}

/** Sets the fresh values' place; the key's place follows unless a returned batch sits earlier. */
export function setFreshPlace<S, K, V>(state: State<S, K, V>, sortKey: S, seq: number, compare: Comparator<S>): void {
  if (state.hasReturned) {
    const extra = state.more();
    extra.freshSortKey = sortKey;
    extra.freshSeq = seq;
    recomputePlace(state, compare);
  } else {
    state.sortKey = sortKey;
    state.seq = seq;
  }
}

/** With returned batches: the key's place is the smallest of theirs and the fresh values'. */
export function recomputePlace<S, K, V>(state: State<S, K, V>, compare: Comparator<S>): void {
  const extra = state.more();
  let sortKey = extra.freshSortKey as S;
  let seq = state.values.length > 0 ? extra.freshSeq : Infinity;
  for (const record of extra.returned) {
    const order = seq === Infinity ? -1 : compare(record.sortKey, sortKey);
    if (order < 0 || (order === 0 && record.seq < seq)) {
      sortKey = record.sortKey;
      seq = record.seq;
    }
  }
  if (seq !== Infinity) {
    state.sortKey = sortKey;
    state.seq = seq;
  }
}

/** Puts a batch that came back in front of the key's fresh values, in value order. */
export function insertReturned<S, K, V>(state: State<S, K, V>, record: ClaimRecord<S, K, V>, compare: Comparator<S>): void {
  const extra = state.more();
  if (extra.returned.length === 0) {
    extra.freshSortKey = state.sortKey;
    extra.freshSeq = state.seq;
  }
  let at = extra.returned.length;
  while (at > 0 && (extra.returned[at - 1]?.order ?? 0) > record.order) at--;
  extra.returned.splice(at, 0, record);
  extra.returnedCount += record.values.length;
  recomputePlace(state, compare);
}

/** Takes the first returned batch: whole, or its first `count` values when it exceeds the bound. */
export function takeReturned<S, K, V>(
  state: State<S, K, V>,
  count: number,
  claims: ClaimTable<S, K, V>,
  compare: Comparator<S>,
): ClaimRecord<S, K, V> {
  const extra = state.more();
  const record = extra.returned[0] as ClaimRecord<S, K, V>;
  if (count < record.values.length) {
    // Only when `maxMessages` is smaller than when the batch was first claimed: the rest stays behind.
    extra.returned[0] = claims.remainder(record, count);
  } else {
    extra.returned.shift();
  }
  extra.returnedCount -= count;
  if (extra.returned.length === 0) {
    state.sortKey = extra.freshSortKey as S;
    state.seq = extra.freshSeq;
    extra.freshSortKey = undefined;
  } else {
    recomputePlace(state, compare);
  }
  return record;
}
