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
import type { AckOptions, ClaimOptions, ExtendLeaseOptions, NackOptions } from './claim-options.js';
import { ClaimRecord, ClaimTable } from './claims.js';
import { checkKeyState } from './invariants.js';
import { KeyIndex } from './key-index.js';
import { KeyState } from './key-state.js';
import { freshSeq, freshSortKey, insertReturned, setFreshPlace, takeReturned } from './places.js';
import { resolveQueueOptions, type BatchQueueOptions, type Comparator, type ResolvedQueueOptions } from './queue-options.js';
import { batchLength, takeValues } from './take.js';


export abstract class BatchQueue<S, K, V> {
  protected readonly options: ResolvedQueueOptions<V>;
  readonly #compare: Comparator<S>;
  readonly #index: KeyIndex<S, K, V>;
  readonly #claims = new ClaimTable<S, K, V>();
  readonly #listeners = new Set<(dueInMs: number) => void>();
  #size = 0;
  #claimed = 0;
  #seq = 0;
  #closed = false;
  readonly #origin: number;

  protected constructor(options: BatchQueueOptions<V> | undefined, compare: Comparator<S>, numeric: boolean) {
    this.options = resolveQueueOptions(options);
    this.#compare = compare;
    this.#index = new KeyIndex<S, K, V>(compare, numeric, this.options.perKeyOrder, this.options.clock);
    this.#origin = this.options.clock.now();
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
    let keys = this.#index.states.size;
    if (this.#claimed > 0) for (const state of this.#index.states.values()) if (state.pending === 0) keys--;
    return keys;
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
    const record = this.#resolve(claim, check.optionsObject('options', options));
    const state = this.#stateOf(record);
    this.#claims.delete(record);
    this.#claimed -= record.values.length;
    this.#index.unplace(state);
    state.more().claims--;
    this.#index.place(state);
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
    const record = this.#resolve(claim, check.optionsObject('options', options));
    if (!Array.isArray(counts) || counts.length === 0) throw new InvalidArgumentError('counts', 'a non-empty array', counts);
    let total = 0;
    for (const [i, count] of counts.entries()) total += check.positiveInteger(`counts[${i}]`, count);
    if (total !== record.values.length) {
      throw new InvalidArgumentError('counts', `counts summing to the batch's ${record.values.length} values`, total);
    }
    if (counts.length === 1) return [record.toBatch()];
    this.#stateOf(record).more().claims += counts.length - 1;
    this.#claims.delete(record);
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
    const state = this.#index.states.get(key);
    if (state === undefined) return [];
    const removed: V[] = [];
    this.#index.unplace(state);
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
    this.#index.place(state);
    this.#size -= removed.length;
    return removed;
  }

  /**
   * Makes a key deferred by a nack claimable now (e.g. resuming a paused customer).
   * Returns whether the key was deferred.
   */
  resume(key: K): boolean {
    checkKey(key);
    const state = this.#index.states.get(key);
    if (state === undefined || (state.extra?.notBefore ?? 0) === 0) return false;
    this.#index.unplace(state);
    state.more().notBefore = 0;
    this.#index.place(state);
    return true;
  }

  /** Removes everything: pending values and claims (their ids become unknown). */
  clear(): void {
    this.#index.clear();
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
    const state = this.#index.readyHead();
    return state === undefined ? undefined : entryOf(state);
  }

  /** Claimable keys in place order, with copies of their pending values. */
  *[Symbol.iterator](): IterableIterator<QueueEntry<S, K, V>> {
    this.tick();
    for (const state of Array.from(this.#index.ready())) yield entryOf(state);
  }

  /**
   * Throws an `Error` describing the first broken invariant: counters, index membership and
   * order, places, claims. For tests; O(n).
   */
  checkInvariants(): void {
    this.#index.checkInvariants();
    this.#claims.checkInvariants();
    let size = 0;
    let claimed = 0;
    for (const record of this.#claims.records()) if (record.status === 'claimed') claimed += record.values.length;
    for (const state of this.#index.states.values()) {
      size += state.pending;
      checkKeyState(state, this.options.perKeyOrder, this.#compare);
    }
    if (size !== this.#size) throw new Error(`size is ${this.#size}, counted ${size}`);
    if (claimed !== this.#claimed) throw new Error(`claimedCount is ${this.#claimed}, counted ${claimed}`);
  }

  // --- for subclasses -------------------------------------------------------------------------

  /**
   * Appends `value` to `key`'s pending values; a smaller `sortKey` than the key's place moves
   * the key. `now` saves a clock read when the caller has one.
   */
  protected add(sortKey: S, key: K, value: V, now?: number): KeyState<S, K, V> {
    const bytes = this.#admit(key, value);
    const seq = this.#seq++;
    let state = this.#index.states.get(key);
    if (state === undefined) {
      state = new KeyState<S, K, V>(key, [value], sortKey, seq, this.#sinceOf(now));
      this.#index.states.set(key, state);
      if (bytes >= 0) addSize(state, bytes);
      this.#size++;
      this.#index.place(state);
      this.#notify(sortKey);
      return state;
    }
    state.values.push(value);
    if (bytes >= 0) addSize(state, bytes);
    this.#size++;
    if (state.values.length === 1) {
      state.since = this.#sinceOf(now);
      this.#moveFresh(state, sortKey, seq);
    } else if (this.#compare(sortKey, freshSortKey(state)) < 0) {
      this.#moveFresh(state, sortKey, seq);
    }
    return state;
  }

  /**
   * Appends `value` to a key that already has fresh values, leaving its place as it is: for a
   * caller whose new sort key could not be smaller (a clock that never goes back), this saves
   * the clock read and the comparison. `undefined` (nothing stored) when the key has no fresh values.
   */
  protected appendToRun(key: K, value: V): KeyState<S, K, V> | undefined {
    const state = this.#index.states.get(key);
    if (state === undefined || state.values.length === 0) return undefined;
    const bytes = this.#admit(key, value);
    this.#seq++;
    state.values.push(value);
    if (bytes >= 0) addSize(state, bytes);
    this.#size++;
    return state;
  }

  /** Moves the key's fresh values to `sortKey` if that is earlier than their place (a batch became full). */
  protected advance(state: KeyState<S, K, V>, sortKey: S): void {
    if (state.values.length > 0 && this.#compare(sortKey, freshSortKey(state)) < 0) {
      this.#moveFresh(state, sortKey, freshSeq(state));
    }
  }

  /** Returns expired leases, undefers keys whose delay ran out; returns the clock reading. */
  protected tick(): number {
    const now = this.now();
    for (const record of this.#claims.expired(now)) {
      this.#claims.release(record, 'expired');
      this.#giveBack(record, 0);
    }
    this.#index.undefer(now);
    return now;
  }

  /** The head of the ready index (after `tick()`). */
  protected head(): KeyState<S, K, V> | undefined {
    return this.#index.readyHead();
  }

  /** When the next deferred key or lease comes back, if any (after `tick()`). */
  protected nextReturnAt(): number | undefined {
    const deferred = this.#index.nextUndeferAt();
    const lease = this.#claims.nextExpiry();
    if (deferred === undefined) return lease;
    return lease === undefined ? deferred : Math.min(deferred, lease);
  }

  protected pullUpTo(maxMessages: number | undefined, upTo: S | undefined): Batch<K, V>[] {
    const picks = this.#select(maxMessages, upTo, Infinity);
    const batches: Batch<K, V>[] = [];
    for (let i = 0; i < picks.length; i += 2) {
      const state = picks[i] as KeyState<S, K, V>;
      const count = picks[i + 1] as number;
      let values: V[];
      if (state.hasReturned) {
        const record = takeReturned(state, count, this.#claims, this.#compare);
        this.#claims.delete(record);
        values = record.values;
      } else {
        values = takeValues(state, count);
      }
      batches.push({ key: state.key, values });
      this.#index.place(state);
      this.#size -= count;
    }
    return batches;
  }

  protected claimUpTo(maxMessages: number | undefined, upTo: S | undefined, options: ClaimOptions | undefined): ClaimedBatch<K, V>[] {
    const o = check.optionsObject('options', options);
    const leaseMs = check.positiveNumber('options.leaseMs', o.leaseMs ?? this.options.leaseMs);
    const maxBatches = o.maxBatches === undefined ? Infinity : check.positiveInteger('options.maxBatches', o.maxBatches);
    if (check.boolean('options.includeDeferred', o.includeDeferred ?? false)) this.#index.undefer(Infinity);
    const picks = this.#select(maxMessages, upTo, maxBatches);
    const leaseExpiresAt = this.now() + leaseMs;
    const batches: ClaimedBatch<K, V>[] = [];
    for (let i = 0; i < picks.length; i += 2) {
      const state = picks[i] as KeyState<S, K, V>;
      const count = picks[i + 1] as number;
      const record = state.hasReturned ? takeReturned(state, count, this.#claims, this.#compare) : this.#newRecord(state, count);
      state.more().claims++;
      this.#claims.activate(record, leaseExpiresAt);
      batches.push(record.toBatch());
      this.#index.place(state);
      this.#size -= count;
      this.#claimed += count;
    }
    return batches;
  }

  // --- internals ------------------------------------------------------------------------------

  /**
   * Picks `[state, count, state, count, …]` in place order within the bounds, and takes the
   * picked keys out of the ready index (the caller files each one again after taking from it).
   */
  #select(maxMessages: number | undefined, upTo: S | undefined, maxBatches: number): (KeyState<S, K, V> | number)[] {
    let remaining = maxMessages === undefined ? Infinity : check.positiveInteger('maxMessages', maxMessages);
    this.tick();
    const picks: (KeyState<S, K, V> | number)[] = [];
    // Collect first: a B-tree iterator must not see the tree change under it.
    for (const state of this.#index.ready()) {
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
    const first = picks[0] as KeyState<S, K, V> | undefined;
    if (first !== undefined) this.#index.unplaceRun(first, picks[picks.length - 2] as KeyState<S, K, V>, picks);
    return picks;
  }

  /** Gives the fresh values a new place, and tells listeners when the key's place changed. */
  #moveFresh(state: KeyState<S, K, V>, sortKey: S, seq: number): void {
    this.#index.unplace(state);
    setFreshPlace(state, sortKey, seq, this.#compare);
    this.#index.place(state);
    if (state.sortKey === sortKey) this.#notify(sortKey);
  }

  /** Puts a record back in front of its key's fresh values, in value order. */
  #giveBack(record: ClaimRecord<S, K, V>, notBefore: number): void {
    const state = this.#stateOf(record);
    this.#index.unplace(state);
    insertReturned(state, record, this.#compare);
    const extra = state.more();
    extra.claims--;
    if (notBefore > extra.notBefore) extra.notBefore = notBefore;
    this.#index.place(state);
    this.#claimed -= record.values.length;
    this.#size += record.values.length;
  }

  #newRecord(state: KeyState<S, K, V>, count: number): ClaimRecord<S, K, V> {
    const { sortKey, seq } = state;
    const enqueuedAt = this.#origin + state.since;
    return new ClaimRecord<S, K, V>(this.#claims.newId(), state.key, takeValues(state, count), sortKey, seq, enqueuedAt, this.#claims.newOrder(), 1);
  }

  #resolve(claim: ClaimRef, options: AckOptions): ClaimRecord<S, K, V> {
    const id = typeof claim === 'string' ? claim : typeof claim === 'object' && claim !== null ? claim.id : undefined;
    if (typeof id !== 'string') throw new InvalidArgumentError('claim', 'a batch id or a claimed batch', claim);
    const token = options.token ?? (typeof claim === 'object' ? claim.token : undefined);
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

  #stateOf(record: ClaimRecord<S, K, V>): KeyState<S, K, V> {
    const state = this.#index.states.get(record.key);
    if (state === undefined) throw new Error(`duebatch internal error: no state for the key of batch ${record.id}`);
    return state;
  }

  /**
   * A publish time kept per key: whole milliseconds since the queue was made. A small integer
   * is stored inline by V8, where an epoch-millisecond double takes a 16-byte box per key.
   */
  #sinceOf(now: number | undefined): number {
    return Math.floor((now ?? this.now()) - this.#origin);
  }

  /** Checks a publish (key, value, open, room) and returns the value's size (-1 without `sizeOf`). */
  #admit(key: K, value: V): number {
    checkKey(key);
    if (value === undefined) throw new InvalidArgumentError('value', 'a value other than undefined', value);
    if (this.#closed) throw new QueueClosedError();
    if (this.#size + this.#claimed >= this.options.maxPending) throw new QueueFullError(this.options.maxPending);
    return this.options.sizeOf === undefined ? -1 : this.#sizeOfChecked(value);
  }

  #sizeOfChecked(value: V): number {
    const size = (this.options.sizeOf as (value: V) => number)(value);
    if (typeof size !== 'number' || !Number.isFinite(size) || size < 0) {
      throw new InvalidArgumentError('options.sizeOf(value)', 'a finite number >= 0', size);
    }
    return size;
  }

  #notify(sortKey: S): void {
    if (this.#listeners.size === 0) return;
    const dueInMs = Math.max(0, this.dueAtOf(sortKey) - this.now());
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
