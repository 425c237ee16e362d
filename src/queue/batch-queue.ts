/**
 * The machinery shared by {@link SortedQueue} and {@link TimeSortedQueue}: a `Map` from key to
 * its pending values, a B-tree of the keys that can be taken now ordered by place, a second
 * B-tree of keys deferred by a nack, and a table of claimed batches with their leases.
 *
 * Leases and deferrals are handled lazily, at the start of each operation that reads them, so
 * the queue needs no timer of its own and stays synchronous.
 */
import { InvalidArgumentError, LeaseExpiredError, QueueClosedError, QueueFullError, UnknownBatchError } from '../errors.js';
import * as check from '../validate.js';
import type { Batch, ClaimedBatch, ClaimRef, QueueEntry } from './batch.js';
import type { QueueCounts } from './batch-source.js';
import { BTree } from './btree.js';
import { ClaimRecord, ClaimTable, type ReturnReason } from './claims.js';
import { KeyState, Location } from './key-state.js';
import { resolveQueueOptions, type BatchQueueOptions, type Comparator, type ResolvedQueueOptions } from './queue-options.js';
import { takeValues, batchLength } from './take.js';

/** Options of `claim`. */
export interface ClaimOptions {
  /** Lease of these batches. @default the queue's `leaseMs` */
  leaseMs?: number;
  /** Most batches to claim, e.g. a consumer's free concurrency slots. @default no bound */
  maxBatches?: number;
  /** Also take keys deferred by a nack, as if their delay had run out (shutdown). @default false */
  includeDeferred?: boolean;
}

/** Options of `ack`. */
export interface AckOptions {
  /** The claim's token; taken from the claimed batch when one is passed. Without it no staleness check is possible. */
  token?: string;
}

/** Options of `nack`. */
export interface NackOptions extends AckOptions {
  /** The key is not claimable again before this time (queue clock). */
  notBefore?: number;
  /** The key is not claimable again for this many milliseconds. */
  delayMs?: number;
}

/** Options of `extendLease`. */
export interface ExtendLeaseOptions extends AckOptions {
  /** New lease, from now. @default the queue's `leaseMs` */
  leaseMs?: number;
}

type State<S, K, V> = KeyState<S, K, V>;

export abstract class BatchQueue<S, K, V> {
  protected readonly options: ResolvedQueueOptions<V>;
  readonly #compare: Comparator<S>;
  readonly #map = new Map<K, State<S, K, V>>();
  readonly #ready: BTree<State<S, K, V>, undefined>;
  readonly #deferred: BTree<State<S, K, V>, undefined>;
  readonly #claims = new ClaimTable<S, K, V>();
  readonly #listeners = new Set<(dueInMs: number) => void>();
  #size = 0;
  #claimed = 0;
  #seq = 0;
  #closed = false;

  protected constructor(options: BatchQueueOptions<V> | undefined, compare: Comparator<S>, numeric: boolean) {
    this.options = resolveQueueOptions(options);
    this.#compare = compare;
    // A dedicated comparator on (sortKey, seq): the generic one is several times slower for numbers.
    const byPlace = numeric
      ? (a: State<S, K, V>, b: State<S, K, V>): number =>
          a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : a.seq - b.seq
      : (a: State<S, K, V>, b: State<S, K, V>): number => compare(a.sortKey, b.sortKey) || a.seq - b.seq;
    this.#ready = new BTree<State<S, K, V>, undefined>(undefined, byPlace);
    this.#deferred = new BTree<State<S, K, V>, undefined>(
      undefined,
      (a, b) => (a.extra?.notBefore ?? 0) - (b.extra?.notBefore ?? 0) || a.seq - b.seq,
    );
  }

  /** Pending values (claimable or deferred; claimed values not included). O(1), after returning expired leases. */
  get size(): number {
    this.tick();
    return this.#size;
  }

  /** Values handed out by `claim` and not yet settled (leases not expired). O(1). */
  get claimedCount(): number {
    this.tick();
    return this.#claimed;
  }

  /** Keys with pending values. O(1) while nothing is claimed, O(keys) otherwise. */
  get keyCount(): number {
    this.tick();
    return this.#map.size - this.#keysWithOnlyClaims();
  }

  /** Pending values, claimed values and keys, in one call. */
  counts(): QueueCounts {
    return { pending: this.size, claimed: this.#claimed, keys: this.keyCount };
  }

  /**
   * Milliseconds until something is next claimable (0: now), counting deferred keys and
   * expiring leases; `undefined` when the queue holds nothing.
   */
  nextDueIn(): number | undefined {
    const at = this.nextDueAt();
    return at === undefined ? undefined : Math.max(0, at - this.now());
  }

  /** When something is next claimable, on the queue's clock; `undefined` when nothing will be. */
  abstract nextDueAt(): number | undefined;

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The queue's clock reading. */
  now(): number {
    return this.options.clock.now();
  }

  /**
   * Calls `listener(dueInMs)` whenever a publish gives a key a place (new, or earlier than it had),
   * with the milliseconds until that key is due. A consumer sleeping until the next due time
   * re-arms when this is sooner. Returns an unsubscribe function.
   */
  onWake(listener: (dueInMs: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Removes and returns batches in place order, `maxMessages` values at most in all. Whole
   * batches only, except that a key at the head with more than `maxMessages` values gives its
   * first `maxMessages` and keeps its place. Stops at the first batch that does not fit.
   * O(b log n) for b batches. `maxMessages` undefined: no bound.
   */
  pull(maxMessages?: number): Batch<K, V>[] {
    return this.pullUpTo(maxMessages, undefined);
  }

  /**
   * Like {@link pull}, but the values stay held until `ack(batch)`; `nack(batch)` or an expired
   * lease puts them back in front of the key under the same batch id. With `perKeyOrder`, a key
   * with a claim outstanding is skipped. O(b log n).
   */
  claim(maxMessages?: number, options?: ClaimOptions): ClaimedBatch<K, V>[] {
    return this.claimUpTo(maxMessages, undefined, options);
  }

  /** Removes a claimed batch's values for good. Throws `UnknownBatchError` or `LeaseExpiredError`, changing nothing. */
  ack(claim: ClaimRef, options?: AckOptions): void {
    const record = this.#resolve(claim, options);
    const state = this.#stateOf(record);
    this.#claims.delete(record);
    this.#claimed -= record.values.length;
    this.#update(state, () => {
      state.more().claims--;
    });
  }

  /**
   * Puts a claimed batch's values back in front of the key's newer values, at the key's place
   * when it was claimed; with `notBefore`/`delayMs`, the key is not claimable before then.
   */
  nack(claim: ClaimRef, options?: NackOptions): void {
    const o = check.optionsObject('options', options);
    const now = this.now();
    let notBefore = 0;
    if (o.notBefore !== undefined) notBefore = check.finiteNumber('options.notBefore', o.notBefore);
    if (o.delayMs !== undefined) notBefore = Math.max(notBefore, now + check.nonNegativeNumber('options.delayMs', o.delayMs));
    const record = this.#resolve(claim, o);
    this.#claims.release(record, 'nack');
    this.#giveBack(record, notBefore > now ? notBefore : 0);
  }

  /** Moves a claim's lease to `now + leaseMs`. */
  extendLease(claim: ClaimRef, options?: ExtendLeaseOptions): ClaimedBatch<K, V> {
    const o = check.optionsObject('options', options);
    const leaseMs = check.positiveNumber('options.leaseMs', o.leaseMs ?? this.options.leaseMs);
    const record = this.#resolve(claim, o);
    this.#claims.extend(record, this.now() + leaseMs);
    return record.toBatch();
  }

  /**
   * Replaces a claimed batch by parts of `counts[i]` values each (in order), each settled on its
   * own, under ids `${id}.1`, `${id}.2`, … . The parts share the lease. Used to send a batch
   * over several requests.
   */
  split(claim: ClaimRef, counts: readonly number[], options?: AckOptions): ClaimedBatch<K, V>[] {
    const record = this.#resolve(claim, options);
    if (!Array.isArray(counts) || counts.length === 0) throw new InvalidArgumentError('counts', 'a non-empty array', counts);
    let total = 0;
    for (const [i, count] of counts.entries()) total += check.positiveInteger(`counts[${i}]`, count);
    if (total !== record.values.length) {
      throw new InvalidArgumentError('counts', `counts summing to the batch's ${record.values.length} values`, total);
    }
    if (counts.length === 1) return [record.toBatch()];
    const state = this.#stateOf(record);
    this.#claims.delete(record);
    state.more().claims += counts.length - 1;
    const span = record.span / counts.length;
    let offset = 0;
    return counts.map((count, i) => {
      const part = new ClaimRecord<S, K, V>(
        `${record.id}.${i + 1}`, record.key, record.values.slice(offset, offset + count),
        record.sortKey, record.seq, record.enqueuedAt, record.order + i * span, span,
      );
      offset += count;
      part.attempt = record.attempt - 1;
      this.#claims.activate(part, record.leaseExpiresAt);
      return part.toBatch();
    });
  }

  /** Removes `key`'s pending values (claimed ones stay claimed) and returns them, oldest first. */
  remove(key: K): V[] {
    checkKey(key);
    const state = this.#map.get(key);
    if (state === undefined) return [];
    const removed: V[] = [];
    this.#update(state, () => {
      const extra = state.extra;
      if (extra !== undefined) {
        for (const record of extra.returned) {
          removed.push(...record.values);
          this.#claims.delete(record);
        }
        extra.returned = [];
        extra.returnedCount = 0;
        extra.notBefore = 0;
        if (extra.sizes !== undefined) extra.sizes = [];
        extra.bytes = 0;
      }
      removed.push(...state.values);
      state.values = [];
    });
    this.#size -= removed.length;
    return removed;
  }

  /**
   * Makes a key deferred by a nack claimable now (e.g. resuming a paused customer).
   * Returns whether the key was deferred.
   */
  resume(key: K): boolean {
    checkKey(key);
    const state = this.#map.get(key);
    if (state === undefined || (state.extra?.notBefore ?? 0) === 0) return false;
    this.#update(state, () => {
      state.more().notBefore = 0;
    });
    return true;
  }

  /** Removes everything: pending values and claims (their ids become unknown). */
  clear(): void {
    this.#map.clear();
    this.#ready.clear();
    this.#deferred.clear();
    this.#claims.clear();
    this.#size = 0;
    this.#claimed = 0;
  }

  /** Refuses further publishes with `QueueClosedError`; claims and settles go on. */
  close(): void {
    this.#closed = true;
  }

  /** The first claimable key, its place and (a copy of) its pending values, without removing anything. */
  peek(): QueueEntry<S, K, V> | undefined {
    this.tick();
    const state = this.#ready.minKey();
    return state === undefined ? undefined : entryOf(state);
  }

  /** Claimable keys in place order, with copies of their pending values. */
  *[Symbol.iterator](): IterableIterator<QueueEntry<S, K, V>> {
    this.tick();
    for (const state of Array.from(this.#ready.keys())) yield entryOf(state);
  }

  /**
   * Throws an `Error` describing the first broken invariant: counters, index membership and
   * order, places, claims. For tests; O(n).
   */
  checkInvariants(): void {
    this.#ready.checkValid();
    this.#deferred.checkValid();
    this.#claims.checkInvariants();
    let size = 0;
    let claimed = 0;
    for (const record of this.#claims.records()) if (record.status === 'claimed') claimed += record.values.length;
    for (const [key, state] of this.#map) {
      if (state.key !== key) throw new Error('state filed under another key');
      size += state.pending;
      checkState(state, this.options.perKeyOrder, this.#compare);
      if ((state.where === Location.READY) !== this.#ready.has(state)) throw new Error('ready index out of step');
      if ((state.where === Location.DEFERRED) !== this.#deferred.has(state)) throw new Error('deferred index out of step');
    }
    if (this.#ready.size + this.#deferred.size > this.#map.size) throw new Error('index holds unknown keys');
    if (size !== this.#size) throw new Error(`size is ${this.#size}, counted ${size}`);
    if (claimed !== this.#claimed) throw new Error(`claimedCount is ${this.#claimed}, counted ${claimed}`);
  }

  // --- for subclasses -------------------------------------------------------------------------

  /** Appends `value` to `key`'s pending values; a smaller `sortKey` than the key's place moves the key. */
  protected add(sortKey: S, key: K, value: V): State<S, K, V> {
    checkKey(key);
    if (value === undefined) throw new InvalidArgumentError('value', 'a value other than undefined', value);
    if (this.#closed) throw new QueueClosedError();
    if (this.#size + this.#claimed >= this.options.maxPending) throw new QueueFullError(this.options.maxPending);
    const bytes = this.options.sizeOf === undefined ? -1 : this.#sizeOfChecked(value);
    const seq = this.#seq++;
    let state = this.#map.get(key);
    if (state === undefined) {
      state = new KeyState<S, K, V>(key, [value], sortKey, seq, this.now());
      this.#map.set(key, state);
      if (bytes >= 0) addSize(state, bytes);
      this.#size++;
      this.#place(state);
      this.#notify(sortKey);
      return state;
    }
    state.values.push(value);
    if (bytes >= 0) addSize(state, bytes);
    this.#size++;
    if (state.values.length === 1) {
      state.since = this.now();
      this.#setFreshPlace(state, sortKey, seq, true);
    } else if (this.#compare(sortKey, this.#freshSortKey(state)) < 0) {
      this.#setFreshPlace(state, sortKey, seq, false);
    }
    return state;
  }

  /** Moves the key's fresh values to `sortKey` if that is earlier than their place (a batch became full). */
  protected advance(state: State<S, K, V>, sortKey: S): void {
    if (state.values.length > 0 && this.#compare(sortKey, this.#freshSortKey(state)) < 0) {
      this.#setFreshPlace(state, sortKey, this.#freshSeq(state), false);
    }
  }

  /** Reaps expired leases and promotes deferred keys whose time came; returns the clock reading. */
  protected tick(): number {
    const now = this.now();
    for (const record of this.#claims.expired(now)) {
      this.#claims.release(record, 'expired');
      this.#giveBack(record, 0);
    }
    for (let state = this.#deferred.minKey(); state !== undefined; state = this.#deferred.minKey()) {
      if ((state.extra?.notBefore ?? 0) > now) break;
      this.#update(state, () => {
        state.more().notBefore = 0;
      });
    }
    return now;
  }

  /** The head of the ready index (after `tick()`). */
  protected head(): State<S, K, V> | undefined {
    return this.#ready.minKey();
  }

  /** When the next deferred key or lease comes back, if any (after `tick()`). */
  protected nextReturnAt(): number | undefined {
    const deferred = this.#deferred.minKey()?.extra?.notBefore;
    const lease = this.#claims.nextExpiry();
    if (deferred === undefined) return lease;
    return lease === undefined ? deferred : Math.min(deferred, lease);
  }

  protected pullUpTo(maxMessages: number | undefined, upTo: S | undefined): Batch<K, V>[] {
    const picks = this.#select(maxMessages, upTo);
    const batches: Batch<K, V>[] = [];
    for (let i = 0; i < picks.length; i += 2) {
      const state = picks[i] as State<S, K, V>;
      const count = picks[i + 1] as number;
      this.#update(state, () => {
        const record = state.hasReturned ? this.#takeReturned(state, count) : undefined;
        if (record !== undefined) this.#claims.delete(record);
        batches.push({ key: state.key, values: record?.values ?? takeValues(state, count) });
      });
      this.#size -= count;
    }
    return batches;
  }

  protected claimUpTo(maxMessages: number | undefined, upTo: S | undefined, options: ClaimOptions | undefined): ClaimedBatch<K, V>[] {
    const o = check.optionsObject('options', options);
    const leaseMs = check.positiveNumber('options.leaseMs', o.leaseMs ?? this.options.leaseMs);
    const maxBatches = o.maxBatches === undefined ? Infinity : check.positiveInteger('options.maxBatches', o.maxBatches);
    if (check.boolean('options.includeDeferred', o.includeDeferred ?? false)) this.#undeferAll();
    const picks = this.#select(maxMessages, upTo, maxBatches);
    const leaseExpiresAt = this.now() + leaseMs;
    const batches: ClaimedBatch<K, V>[] = [];
    for (let i = 0; i < picks.length; i += 2) {
      const state = picks[i] as State<S, K, V>;
      const count = picks[i + 1] as number;
      this.#update(state, () => {
        const record = (state.hasReturned ? this.#takeReturned(state, count) : undefined) ?? this.#newRecord(state, count);
        state.more().claims++;
        this.#claims.activate(record, leaseExpiresAt);
        batches.push(record.toBatch());
      });
      this.#size -= count;
      this.#claimed += count;
    }
    return batches;
  }

  // --- internals ------------------------------------------------------------------------------

  #undeferAll(): void {
    for (let state = this.#deferred.minKey(); state !== undefined; state = this.#deferred.minKey()) {
      this.#update(state, () => {
        state.more().notBefore = 0;
      });
    }
  }

  /** Picks `[state, count, state, count, …]` in place order within the bound. */
  #select(maxMessages: number | undefined, upTo: S | undefined, maxBatches = Infinity): (State<S, K, V> | number)[] {
    let remaining = maxMessages === undefined ? Infinity : check.positiveInteger('maxMessages', maxMessages);
    this.tick();
    const picks: (State<S, K, V> | number)[] = [];
    // Collect first: a B-tree iterator must not see the tree change under it.
    for (const state of this.#ready.keys()) {
      if (upTo !== undefined && this.#compare(state.sortKey, upTo) > 0) break;
      const count = batchLength(state, this.options);
      if (count <= remaining) {
        picks.push(state, count);
        remaining -= count;
        if (remaining === 0 || picks.length === maxBatches * 2) break;
      } else {
        if (picks.length === 0) picks.push(state, remaining);
        break;
      }
    }
    return picks;
  }

  /** Runs `change` on a key with the key out of its index, then files it where it now belongs. */
  #update(state: State<S, K, V>, change: () => void): void {
    this.#unplace(state);
    change();
    this.#place(state);
  }

  #unplace(state: State<S, K, V>): void {
    if (state.where === Location.READY) this.#ready.delete(state);
    else if (state.where === Location.DEFERRED) this.#deferred.delete(state);
    state.where = Location.NONE;
  }

  #place(state: State<S, K, V>): void {
    if (state.pending === 0) {
      if (state.claims === 0) this.#map.delete(state.key);
      return;
    }
    if (this.options.perKeyOrder && state.claims > 0) return;
    const notBefore = state.extra?.notBefore ?? 0;
    if (notBefore > 0 && notBefore > this.now()) {
      state.where = Location.DEFERRED;
      this.#deferred.set(state, undefined);
    } else {
      if (notBefore > 0) state.more().notBefore = 0;
      state.where = Location.READY;
      this.#ready.set(state, undefined);
    }
  }

  #freshSortKey(state: State<S, K, V>): S {
    return state.hasReturned ? (state.extra?.freshSortKey as S) : state.sortKey;
  }

  #freshSeq(state: State<S, K, V>): number {
    return state.hasReturned ? (state.extra?.freshSeq ?? 0) : state.seq;
  }

  /** Sets the fresh values' place; the key's place follows unless a returned batch sits earlier. */
  #setFreshPlace(state: State<S, K, V>, sortKey: S, seq: number, fresh: boolean): void {
    this.#update(state, () => {
      if (state.hasReturned) {
        const extra = state.more();
        extra.freshSortKey = sortKey;
        extra.freshSeq = seq;
        this.#recomputePlace(state);
      } else {
        state.sortKey = sortKey;
        state.seq = seq;
      }
    });
    if (fresh || state.sortKey === sortKey) this.#notify(state.sortKey);
  }

  /** With returned batches: the key's place is the smallest of theirs and the fresh values'. */
  #recomputePlace(state: State<S, K, V>): void {
    const extra = state.more();
    let best: { sortKey: S; seq: number } | undefined =
      state.values.length > 0 ? { sortKey: extra.freshSortKey as S, seq: extra.freshSeq } : undefined;
    for (const record of extra.returned) {
      if (best === undefined || this.#compare(record.sortKey, best.sortKey) < 0 ||
        (this.#compare(record.sortKey, best.sortKey) === 0 && record.seq < best.seq)) {
        best = { sortKey: record.sortKey, seq: record.seq };
      }
    }
    if (best !== undefined) {
      state.sortKey = best.sortKey;
      state.seq = best.seq;
    }
  }

  /** Puts a record back in front of its key's fresh values, in value order. */
  #giveBack(record: ClaimRecord<S, K, V>, notBefore: number): void {
    const state = this.#stateOf(record);
    this.#update(state, () => {
      const extra = state.more();
      if (extra.returned.length === 0) {
        extra.freshSortKey = state.sortKey;
        extra.freshSeq = state.seq;
      }
      let at = extra.returned.length;
      while (at > 0 && (extra.returned[at - 1]?.order ?? 0) > record.order) at--;
      extra.returned.splice(at, 0, record);
      extra.returnedCount += record.values.length;
      extra.claims--;
      if (notBefore > extra.notBefore) extra.notBefore = notBefore;
      this.#recomputePlace(state);
    });
    this.#claimed -= record.values.length;
    this.#size += record.values.length;
  }

  /** Takes the first returned batch (whole, or its first `count` values when it exceeds the bound). */
  #takeReturned(state: State<S, K, V>, count: number): ClaimRecord<S, K, V> {
    const extra = state.more();
    const record = extra.returned[0] as ClaimRecord<S, K, V>;
    if (count < record.values.length) {
      // Only when `maxMessages` is smaller than when the batch was first claimed: the rest stays behind.
      const rest = new ClaimRecord<S, K, V>(
        this.#claims.newId(), state.key, record.values.slice(count), record.sortKey, record.seq,
        record.enqueuedAt, record.order + record.span / 2, record.span / 2,
      );
      rest.status = 'returned';
      rest.returnedBy = 'nack';
      this.#claims.register(rest);
      record.values = record.values.slice(0, count);
      extra.returned[0] = rest;
    } else {
      extra.returned.shift();
    }
    extra.returnedCount -= count;
    if (extra.returned.length === 0) {
      state.sortKey = extra.freshSortKey as S;
      state.seq = extra.freshSeq;
      extra.freshSortKey = undefined;
    } else {
      this.#recomputePlace(state);
    }
    return record;
  }

  #newRecord(state: State<S, K, V>, count: number): ClaimRecord<S, K, V> {
    const since = state.since;
    return new ClaimRecord<S, K, V>(
      this.#claims.newId(), state.key, takeValues(state, count), state.sortKey, state.seq, since, this.#claims.newOrder(), 1,
    );
  }

  #resolve(claim: ClaimRef, options: AckOptions | undefined): ClaimRecord<S, K, V> {
    const id = typeof claim === 'string' ? claim : typeof claim === 'object' && claim !== null ? claim.id : undefined;
    if (typeof id !== 'string') throw new InvalidArgumentError('claim', 'a batch id or a claimed batch', claim);
    const token = options?.token ?? (typeof claim === 'object' ? claim.token : undefined);
    if (token !== undefined && typeof token !== 'string') throw new InvalidArgumentError('options.token', 'a string', token);
    this.tick();
    const record = this.#claims.get(id);
    if (record === undefined) throw new UnknownBatchError(id);
    if (record.status === 'returned') {
      // A token whose lease ran out is stale whatever happened since (a later claim may have nacked the batch).
      const expiredToken = token !== undefined && record.expiredTokens?.includes(token) === true;
      if (expiredToken || (token === undefined && record.returnedBy === 'expired')) throw new LeaseExpiredError(id);
      throw new UnknownBatchError(id);
    }
    if (token !== undefined && token !== record.token) {
      throw record.expiredTokens?.includes(token) === true ? new LeaseExpiredError(id) : new UnknownBatchError(id);
    }
    return record;
  }

  #stateOf(record: ClaimRecord<S, K, V>): State<S, K, V> {
    const state = this.#map.get(record.key);
    if (state === undefined) throw new Error(`duebatch internal error: no state for the key of batch ${record.id}`);
    return state;
  }

  #sizeOfChecked(value: V): number {
    const size = (this.options.sizeOf as (value: V) => number)(value);
    if (typeof size !== 'number' || !Number.isFinite(size) || size < 0) {
      throw new InvalidArgumentError('options.sizeOf(value)', 'a finite number >= 0', size);
    }
    return size;
  }

  #keysWithOnlyClaims(): number {
    if (this.#claimed === 0) return 0;
    let count = 0;
    for (const state of this.#map.values()) if (state.pending === 0) count++;
    return count;
  }

  #notify(dueAt: S): void {
    if (this.#listeners.size === 0) return;
    const dueInMs = Math.max(0, this.dueAtOf(dueAt) - this.now());
    for (const listener of this.#listeners) listener(dueInMs);
  }

  /** When a key placed at `sortKey` becomes claimable, on the queue's clock. */
  protected abstract dueAtOf(sortKey: S): number;
}

function addSize<S, K, V>(state: KeyState<S, K, V>, bytes: number): void {
  const extra = state.more();
  (extra.sizes ??= []).push(bytes);
  extra.bytes += bytes;
}

function entryOf<S, K, V>(state: KeyState<S, K, V>): QueueEntry<S, K, V> {
  const values: V[] = [];
  for (const record of state.extra?.returned ?? []) values.push(...record.values);
  values.push(...state.values);
  return { key: state.key, sortKey: state.sortKey, values };
}

function checkKey(key: unknown): void {
  if (key === null || key === undefined) throw new InvalidArgumentError('key', 'a key other than null or undefined', key);
  if (typeof key === 'number' && Number.isNaN(key)) throw new InvalidArgumentError('key', 'a key other than NaN', key);
}

function checkState<S, K, V>(state: KeyState<S, K, V>, perKeyOrder: boolean, compare: Comparator<S>): void {
  const extra = state.extra;
  if (state.pending === 0 && state.claims === 0) throw new Error(`empty key ${String(state.key)} kept`);
  if (state.claims < 0) throw new Error(`negative claim count on ${String(state.key)}`);
  if (state.pending === 0 && state.where !== Location.NONE) throw new Error(`key ${String(state.key)} indexed with nothing pending`);
  if (state.pending > 0 && state.where === Location.NONE && !(perKeyOrder && state.claims > 0)) {
    throw new Error(`key ${String(state.key)} has pending values but no place in an index`);
  }
  if (extra === undefined) return;
  const counted = extra.returned.reduce((sum, record) => sum + record.values.length, 0);
  if (counted !== extra.returnedCount) throw new Error(`returnedCount of ${String(state.key)} is off`);
  for (const record of extra.returned) {
    if (record.status !== 'returned') throw new Error(`returned batch ${record.id} marked ${record.status}`);
    if (compare(record.sortKey, state.sortKey) < 0) throw new Error(`key ${String(state.key)} sits after a returned batch`);
  }
  if (extra.sizes !== undefined) {
    if (extra.sizes.length !== state.values.length) throw new Error(`sizes of ${String(state.key)} out of step`);
    if (extra.sizes.reduce((a, b) => a + b, 0) !== extra.bytes) throw new Error(`bytes of ${String(state.key)} out of step`);
  }
}

/** Re-exported for subclasses' signatures. */
export type { ReturnReason };
