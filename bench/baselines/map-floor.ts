/**
 * The floors of the queue bench: the least a per-key queue can do, with no index at all.
 * `MapFloor` is a bare `Map<key, value[]>` (publish = get/push, drain = iterate and delete).
 * `FifoMapFloor` adds what a steady workload needs to let keys go: keys leave oldest first
 * (publish order of their first value, sort keys ignored) whenever more than `keys` are pending.
 */

/** A key's values taken together, as `SortedQueue.pull` returns them. */
export interface FloorBatch {
  readonly key: string;
  readonly values: number[];
}

export class MapFloor {
  readonly #map = new Map<string, number[]>();

  publish(key: string, value: number): void {
    const values = this.#map.get(key);
    if (values === undefined) this.#map.set(key, [value]);
    else values.push(value);
  }

  /** Iterates and deletes every key; returns the number of values seen. */
  drain(): number {
    let drained = 0;
    for (const [key, values] of this.#map) {
      this.#map.delete(key);
      drained += values.length;
    }
    return drained;
  }
}

export class FifoMapFloor {
  readonly #map = new Map<string, number[]>();
  readonly #keys: number;
  /** Pending keys in arrival order, from `#head` on. */
  #order: string[] = [];
  #head = 0;

  /** @param keys - pending keys to keep; `pull` lets the oldest go beyond that */
  constructor(keys: number) {
    this.#keys = keys;
  }

  /** Appends `value` to `key`'s values; the sort key is ignored. */
  publish(_sortKey: number, key: string, value: number): void {
    const values = this.#map.get(key);
    if (values !== undefined) {
      values.push(value);
      return;
    }
    this.#map.set(key, [value]);
    this.#order.push(key);
  }

  /** The oldest keys beyond the `keys` to keep, `maxMessages` values at most (whole batches); `upTo` is ignored. */
  pull(maxMessages: number, _options?: { upTo?: number }): FloorBatch[] {
    const batches: FloorBatch[] = [];
    let remaining = maxMessages;
    while (this.#map.size > this.#keys) {
      const key = this.#order[this.#head]!;
      const values = this.#map.get(key)!;
      if (values.length > remaining) {
        if (batches.length === 0) batches.push({ key, values: values.splice(0, remaining) });
        break;
      }
      this.#map.delete(key);
      this.#head++;
      remaining -= values.length;
      batches.push({ key, values });
    }
    if (this.#head > 65_536 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
    return batches;
  }
}
