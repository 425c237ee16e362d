/**
 * The seed's design, ported to TypeScript for the queue bench: like .NET `SortedList`, one
 * entry per key in an array kept sorted by `(sortKey, seq)`, found by binary search and moved
 * with `splice`; a `Map` from key to its entry holds the pending values. A publish with a
 * smaller sort key than the key's place moves the entry. Same `publish` / `pull` semantics as
 * `SortedQueue` (whole batches in place order, a head key larger than the bound gives its first
 * `maxMessages` values and keeps its place), so one driver runs both and their results compare.
 *
 * Kept lean on purpose, to be a fair baseline: the entry object holds the values itself (one
 * object per key), and a pull removes its entries with one `splice` rather than one
 * `RemoveAt(0)` per key as the C# original did.
 */

/** One key: its place `(sortKey, seq)` and its pending values. */
interface Entry {
  sortKey: number;
  seq: number;
  readonly key: string;
  values: number[];
}

/** A key's values taken together, as `SortedQueue.pull` returns them. */
export interface ArrayBatch {
  readonly key: string;
  readonly values: number[];
}

export class SortedArrayQueue {
  readonly #entries: Entry[] = [];
  readonly #byKey = new Map<string, Entry>();
  #seq = 0;

  /** Keys with pending values. */
  get keyCount(): number {
    return this.#byKey.size;
  }

  /** Appends `value` to `key`'s values. O(log n) search plus an O(n) splice when the key is new or moves. */
  publish(sortKey: number, key: string, value: number): void {
    const seq = this.#seq++;
    const entry = this.#byKey.get(key);
    if (entry === undefined) {
      const created: Entry = { sortKey, seq, key, values: [value] };
      this.#byKey.set(key, created);
      this.#entries.splice(this.#lowerBound(sortKey, seq), 0, created);
      return;
    }
    entry.values.push(value);
    if (sortKey < entry.sortKey) {
      this.#entries.splice(this.#lowerBound(entry.sortKey, entry.seq), 1);
      entry.sortKey = sortKey;
      entry.seq = seq;
      this.#entries.splice(this.#lowerBound(sortKey, seq), 0, entry);
    }
  }

  /**
   * Removes and returns batches in place order, `maxMessages` values at most, only keys whose
   * place is at most `upTo` when given. O(b + n): one splice at the front.
   */
  pull(maxMessages: number, options?: { upTo?: number }): ArrayBatch[] {
    const upTo = options?.upTo ?? Infinity;
    const entries = this.#entries;
    const batches: ArrayBatch[] = [];
    let remaining = maxMessages;
    let taken = 0;
    while (taken < entries.length && remaining > 0) {
      const entry = entries[taken]!;
      if (entry.sortKey > upTo) break;
      const count = entry.values.length;
      if (count > remaining) {
        if (batches.length === 0) batches.push({ key: entry.key, values: entry.values.splice(0, remaining) });
        break;
      }
      batches.push({ key: entry.key, values: entry.values });
      this.#byKey.delete(entry.key);
      remaining -= count;
      taken++;
    }
    if (taken > 0) entries.splice(0, taken);
    return batches;
  }

  /**
   * Builds the queue from keys given in publish order (bench setup, not timed): `places[i]` is
   * key i's place and `values[i]` its pending values; seqs follow the given order. O(n log n).
   */
  load(keys: readonly string[], places: Float64Array, values: readonly number[][]): void {
    for (let i = 0; i < keys.length; i++) {
      const entry: Entry = { sortKey: places[i]!, seq: this.#seq, key: keys[i]!, values: values[i]! };
      this.#seq += entry.values.length;
      this.#entries.push(entry);
      this.#byKey.set(entry.key, entry);
    }
    this.#entries.sort((a, b) => a.sortKey - b.sortKey || a.seq - b.seq);
  }

  /** The first index whose entry sorts at or after `(sortKey, seq)`. */
  #lowerBound(sortKey: number, seq: number): number {
    const entries = this.#entries;
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const entry = entries[mid]!;
      if (entry.sortKey < sortKey || (entry.sortKey === sortKey && entry.seq < seq)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
