/**
 * Where each key with pending values is filed: the ready index (a B-tree ordered by place,
 * `(sortKey, seq)`), the deferred index (a B-tree ordered by `notBefore`, for keys a nack
 * delayed), or nowhere while one of its batches is claimed (with per-key order). The key map
 * lives here too, so that a key with nothing pending and nothing claimed is forgotten in one place.
 */
import type { Clock } from '../time.js';
import { BTree } from './btree.js';
import { KeyState, Location } from './key-state.js';
import type { Comparator } from './queue-options.js';

type State<S, K, V> = KeyState<S, K, V>;

export class KeyIndex<S, K, V> {
  /** Every key with pending values or claims outstanding. */
  readonly states = new Map<K, State<S, K, V>>();
  readonly #ready: BTree<State<S, K, V>, undefined>;
  readonly #deferred: BTree<State<S, K, V>, undefined>;

  constructor(
    compare: Comparator<S>,
    numeric: boolean,
    private readonly perKeyOrder: boolean,
    private readonly clock: Clock,
  ) {
    // A dedicated comparator on (sortKey, seq): the generic one is several times slower for numbers.
    const byPlace = numeric
      ? (a: State<S, K, V>, b: State<S, K, V>): number => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : a.seq - b.seq)
      : (a: State<S, K, V>, b: State<S, K, V>): number => compare(a.sortKey, b.sortKey) || a.seq - b.seq;
    this.#ready = new BTree<State<S, K, V>, undefined>(undefined, byPlace);
    this.#deferred = new BTree<State<S, K, V>, undefined>(undefined, (a, b) => notBeforeOf(a) - notBeforeOf(b) || a.seq - b.seq);
  }

  /** Takes a key out of its index; call before its place or deferral changes. */
  unplace(state: State<S, K, V>): void {
    if (state.where === Location.READY) this.#ready.delete(state);
    else if (state.where === Location.DEFERRED) this.#deferred.delete(state);
    state.where = Location.NONE;
  }

  /**
   * Takes the keys from `first` to `last` out of the ready index in one pass: they are a run at
   * its head, just picked in order, and one range delete beats a walk from the root for each.
   */
  unplaceRun(first: State<S, K, V>, last: State<S, K, V>, run: readonly (State<S, K, V> | number)[]): void {
    this.#ready.deleteRange(first, last, true);
    for (let i = 0; i < run.length; i += 2) (run[i] as State<S, K, V>).where = Location.NONE;
  }

  /** Files a key (out of any index) where it now belongs, or forgets it when it holds nothing. */
  place(state: State<S, K, V>): void {
    if (state.pending === 0) {
      if (state.claims === 0) this.states.delete(state.key);
      return;
    }
    if (this.perKeyOrder && state.claims > 0) return;
    const notBefore = notBeforeOf(state);
    if (notBefore > 0 && notBefore > this.clock.now()) {
      state.where = Location.DEFERRED;
      this.#deferred.set(state, undefined);
      return;
    }
    if (notBefore > 0) state.more().notBefore = 0;
    state.where = Location.READY;
    this.#ready.set(state, undefined);
  }

  /** Moves deferred keys whose `notBefore` is at most `upTo` to the ready index (all with `Infinity`). */
  undefer(upTo: number): void {
    for (let state = this.#deferred.minKey(); state !== undefined; state = this.#deferred.minKey()) {
      if (notBeforeOf(state) > upTo) return;
      this.#deferred.delete(state);
      state.more().notBefore = 0;
      state.where = Location.READY;
      this.#ready.set(state, undefined);
    }
  }

  /** The first ready key. */
  readyHead(): State<S, K, V> | undefined {
    return this.#ready.minKey();
  }

  /** Ready keys in place order. Do not change the index while iterating. */
  ready(): IterableIterator<State<S, K, V>> {
    return this.#ready.keys();
  }

  /** When the first deferred key's delay runs out. */
  nextUndeferAt(): number | undefined {
    const state = this.#deferred.minKey();
    return state === undefined ? undefined : notBeforeOf(state);
  }

  clear(): void {
    this.states.clear();
    this.#ready.clear();
    this.#deferred.clear();
  }

  /** Throws when the indexes and the keys' `where` disagree. */
  checkInvariants(): void {
    this.#ready.checkValid();
    this.#deferred.checkValid();
    for (const [key, state] of this.states) {
      if (state.key !== key) throw new Error('state filed under another key');
      if ((state.where === Location.READY) !== this.#ready.has(state)) throw new Error('ready index out of step');
      if ((state.where === Location.DEFERRED) !== this.#deferred.has(state)) throw new Error('deferred index out of step');
    }
    if (this.#ready.size + this.#deferred.size > this.states.size) throw new Error('index holds unknown keys');
  }
}

function notBeforeOf<S, K, V>(state: KeyState<S, K, V>): number {
  return state.extra?.notBefore ?? 0;
}
