/**
 * The reference model of the queue semantics: plain arrays, sorted on every call, no index,
 * no cleverness. The property tests run the same commands on a real queue and on this model
 * and require the same answers.
 */

type Place = { sortKey: number; seq: number };

interface ModelBatch {
  id: string;
  key: string;
  values: number[];
  place: Place;
  order: number;
  status: 'claimed' | 'returned';
  leaseExpiresAt: number;
}

interface ModelKey {
  fresh: number[];
  freshPlace: Place | undefined;
  returned: ModelBatch[];
  claims: number;
  notBefore: number;
}

export interface ModelOptions {
  maxBatchSize: number;
  leaseMs: number;
  perKeyOrder: boolean;
  now: () => number;
}

const before = (a: Place, b: Place): boolean => a.sortKey < b.sortKey || (a.sortKey === b.sortKey && a.seq < b.seq);

export class QueueModel {
  readonly keys = new Map<string, ModelKey>();
  readonly batches = new Map<string, ModelBatch>();
  #seq = 0;
  #order = 0;
  #ids = 0;

  constructor(readonly options: ModelOptions) {}

  publish(sortKey: number, key: string, value: number): void {
    const seq = this.#seq++;
    const state = this.keys.get(key) ?? { fresh: [], freshPlace: undefined, returned: [], claims: 0, notBefore: 0 };
    this.keys.set(key, state);
    state.fresh.push(value);
    const place = { sortKey, seq };
    if (state.fresh.length === 1 || (state.freshPlace !== undefined && before(place, state.freshPlace))) {
      state.freshPlace = place;
    }
  }

  place(state: ModelKey): Place | undefined {
    const places = state.returned.map((b) => b.place);
    if (state.fresh.length > 0 && state.freshPlace !== undefined) places.push(state.freshPlace);
    return places.reduce<Place | undefined>((best, p) => (best === undefined || before(p, best) ? p : best), undefined);
  }

  pending(state: ModelKey): number {
    return state.fresh.length + state.returned.reduce((sum, b) => sum + b.values.length, 0);
  }

  /** Keys claimable now, in place order. */
  ready(): [string, ModelKey][] {
    this.#expire();
    const now = this.options.now();
    return [...this.keys]
      .filter(([, s]) => this.pending(s) > 0 && !(this.options.perKeyOrder && s.claims > 0) && s.notBefore <= now)
      .sort(([, a], [, b]) => (before(this.place(a) as Place, this.place(b) as Place) ? -1 : 1));
  }

  #select(maxMessages: number): [string, ModelKey, number][] {
    const picks: [string, ModelKey, number][] = [];
    let remaining = maxMessages;
    for (const [key, state] of this.ready()) {
      const first = state.returned[0];
      const length = first ? first.values.length : Math.min(state.fresh.length, this.options.maxBatchSize);
      if (length <= remaining) {
        picks.push([key, state, length]);
        remaining -= length;
        if (remaining === 0) break;
      } else {
        if (picks.length === 0) picks.push([key, state, remaining]);
        break;
      }
    }
    return picks;
  }

  pull(maxMessages: number): { key: string; values: number[] }[] {
    return this.#select(maxMessages).map(([key, state, count]) => {
      const first = state.returned[0];
      let values: number[];
      if (first) {
        values = first.values.splice(0, count);
        if (first.values.length === 0) {
          state.returned.shift();
          this.batches.delete(first.id);
        } else {
          this.batches.delete(first.id);
          first.id = `m${this.#ids++}`;
          this.batches.set(first.id, first);
        }
      } else {
        values = state.fresh.splice(0, count);
      }
      this.#cleanup(key, state);
      return { key, values };
    });
  }

  claim(maxMessages: number): ModelBatch[] {
    const now = this.options.now();
    return this.#select(maxMessages).map(([key, state, count]) => {
      const first = state.returned[0];
      let batch: ModelBatch;
      if (first && count < first.values.length) {
        const rest = { ...first, id: `m${this.#ids++}`, values: first.values.slice(count), order: first.order + 0.5 };
        batch = { ...first, values: first.values.slice(0, count) };
        this.batches.set(rest.id, rest);
        state.returned[0] = rest;
      } else if (first) {
        batch = first;
        state.returned.shift();
      } else {
        batch = {
          id: `m${this.#ids++}`, key, values: state.fresh.splice(0, count), place: state.freshPlace as Place,
          order: this.#order++, status: 'claimed', leaseExpiresAt: 0,
        };
      }
      batch.status = 'claimed';
      batch.leaseExpiresAt = now + this.options.leaseMs;
      this.batches.set(batch.id, batch);
      state.claims++;
      return batch;
    });
  }

  ack(id: string): void {
    const batch = this.batches.get(id) as ModelBatch;
    this.batches.delete(id);
    const state = this.keys.get(batch.key) as ModelKey;
    state.claims--;
    this.#cleanup(batch.key, state);
  }

  nack(id: string, notBefore = 0): void {
    const batch = this.batches.get(id) as ModelBatch;
    this.#giveBack(batch);
    const state = this.keys.get(batch.key) as ModelKey;
    state.notBefore = Math.max(state.notBefore, notBefore);
  }

  remove(key: string): number[] {
    const state = this.keys.get(key);
    if (!state) return [];
    const removed = [...state.returned.flatMap((b) => b.values), ...state.fresh];
    for (const batch of state.returned) this.batches.delete(batch.id);
    state.returned = [];
    state.fresh = [];
    state.notBefore = 0;
    this.#cleanup(key, state);
    return removed;
  }

  size(): number {
    this.#expire();
    return [...this.keys.values()].reduce((sum, s) => sum + this.pending(s), 0);
  }

  claimedCount(): number {
    this.#expire();
    return [...this.batches.values()].filter((b) => b.status === 'claimed').reduce((sum, b) => sum + b.values.length, 0);
  }

  keyCount(): number {
    return [...this.keys.values()].filter((s) => this.pending(s) > 0).length;
  }

  #giveBack(batch: ModelBatch): void {
    const state = this.keys.get(batch.key) as ModelKey;
    batch.status = 'returned';
    state.returned.push(batch);
    state.returned.sort((a, b) => a.order - b.order);
    state.claims--;
  }

  #expire(): void {
    const now = this.options.now();
    const expired = [...this.batches.values()]
      .filter((b) => b.status === 'claimed' && b.leaseExpiresAt <= now)
      .sort((a, b) => a.leaseExpiresAt - b.leaseExpiresAt);
    for (const batch of expired) this.#giveBack(batch);
    for (const state of this.keys.values()) if (state.notBefore <= now) state.notBefore = 0;
  }

  #cleanup(key: string, state: ModelKey): void {
    if (state.fresh.length === 0) state.freshPlace = undefined;
    if (this.pending(state) === 0) state.notBefore = 0;
    if (this.pending(state) === 0 && state.claims === 0) this.keys.delete(key);
  }
}
