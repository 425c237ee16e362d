/**
 * The machinery shared by {@link RedisSortedQueue} and {@link RedisTimeSortedQueue}: the same
 * semantics and method names as the in-memory queues, asynchronous, with every multi-step
 * operation one Lua script (so it is atomic across processes). See `keyspace.ts` for the data
 * layout and `scripts/` for the scripts.
 */
import { Buffer } from 'node:buffer';
import { InvalidArgumentError, QueueClosedError, QueueFullError, UnknownBatchError } from '../errors.js';
import type { AckOptions, ClaimOptions, ExtendLeaseOptions, NackOptions } from '../queue/claim-options.js';
import type { Batch, ClaimedBatch, ClaimRef, QueueEntry } from '../queue/batch.js';
import type { QueueCounts } from '../queue/batch-source.js';
import * as check from '../validate.js';
import { encodeValue } from './codec.js';
import { checkRedisInvariants } from './invariants.js';
import { shardOfBatch, shardOfKey, shardTags, wakeChannel } from './keyspace.js';
import { clearShard, ownConnection } from './connection.js';
import { connect, resolveRedisQueueOptions, type RedisClient, type RedisQueueOptions, type ResolvedRedisQueueOptions } from './redis-queue-options.js';
import { checkSettleCode, numberArg, parseNumber, toBatch, toClaimedBatch, toEntry, type RawEntry } from './replies.js';
import { toStoreError } from './script-runner.js';
import { scripts } from './scripts/index.js';
import { limitArg, Shard } from './shard.js';
import { waitUntilDue, WakeChannel, type WaitOptions, type WakeListener } from './wake.js';

export abstract class RedisBatchQueue<K extends string, V> {
  /** Other processes may claim from the same queue: a closing dispatcher returns its claims instead of draining. */
  readonly shared = true;
  protected readonly options: ResolvedRedisQueueOptions<V>;
  /** The client the queue's commands go through. */
  readonly client: RedisClient;
  readonly #owned: boolean;
  readonly #shards: Shard[];
  readonly #wake: WakeChannel;
  #closed = false;
  #rotor = 0;

  protected constructor(options: RedisQueueOptions<V>, kind: 's' | 't', lingerMs: number) {
    this.options = resolveRedisQueueOptions(options);
    const { redis, prefix } = this.options;
    this.#owned = typeof redis === 'string';
    if (typeof redis !== 'string' && keyPrefixOf(redis) !== '') {
      throw new InvalidArgumentError('options.redis', 'a client without keyPrefix (the queue namespaces its keys by options.prefix)', keyPrefixOf(redis));
    }
    this.client = typeof redis === 'string' ? connect(redis) : redis;
    const channel = wakeChannel(prefix);
    const ctx = { ...this.options, client: this.client, kind, channel, lingerMs };
    this.#shards = shardTags(prefix, this.options.shards).map((tag, i) => new Shard(i, tag, ctx));
    this.#wake = new WakeChannel(() => ownConnection(this.client), channel);
  }

  /** The queue's namespace in Redis. */
  get prefix(): string {
    return this.options.prefix;
  }

  /** Whether `close()` was called on this instance. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The queue's clock reading: the Redis server's time, or the injected clock's. */
  async now(): Promise<number> {
    const { clock } = this.options;
    if (clock !== 'server') return clock.now();
    try {
      const [seconds, micros] = await this.client.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    } catch (cause) {
      throw toStoreError('reading the Redis server time failed', cause);
    }
  }

  /** What the queue holds, across every process and shard (after returning expired leases). One round trip per shard, in parallel. */
  async counts(): Promise<QueueCounts> {
    const replies = await Promise.all(this.#shards.map((shard) => shard.run(scripts.counts)));
    const total = { pending: 0, claimed: 0, keys: 0 };
    for (const reply of replies as number[][]) {
      total.pending += Number(reply[0]);
      total.claimed += Number(reply[1]);
      total.keys += Number(reply[2]);
    }
    return total;
  }

  /** When something is next claimable, on the queue's clock; `undefined` when nothing will be. */
  async nextDueAt(): Promise<number | undefined> {
    let best: number | undefined;
    for (const { at } of await this.#nextDue()) if (at !== undefined && (best === undefined || at < best)) best = at;
    return best;
  }

  /** Milliseconds until something is next claimable (0: now); `undefined` when the queue holds nothing. */
  async nextDueIn(): Promise<number | undefined> {
    let best: number | undefined;
    for (const { now, at } of await this.#nextDue()) {
      if (at !== undefined && (best === undefined || at - now < best)) best = Math.max(0, at - now);
    }
    return best;
  }

  /**
   * Calls `listener(dueInMs)` when any process's publish (or nack, ack, claim) gives a key a new
   * or earlier due time, and with 0 after the subscriber reconnects. Opens one subscriber
   * connection per queue instance on first use. Returns an unsubscribe function.
   */
  onWake(listener: WakeListener): () => void {
    return this.#wake.add(listener);
  }

  /** Resolves once announcements reach `onWake` listeners. */
  wakeReady(): Promise<void> {
    return this.#wake.ready();
  }

  /** Resolves when something may be claimable; sleeps without polling Redis in between. See {@link waitUntilDue}. */
  waitUntilDue(options?: WaitOptions): Promise<void> {
    return waitUntilDue(this, options);
  }

  /** Removes a claimed batch's values for good. Rejects with `UnknownBatchError` or `LeaseExpiredError`, changing nothing. */
  async ack(claim: ClaimRef, options?: AckOptions): Promise<void> {
    const { id, token, shard } = this.#ref(claim, options);
    checkSettleCode(await shard.acker.add([id, token]), id);
  }

  /**
   * Puts a claimed batch back in front of its key, at the key's place when it was claimed; with
   * `notBefore` (on the queue's clock) or `delayMs`, the key is not claimable before then.
   */
  async nack(claim: ClaimRef, options?: NackOptions): Promise<void> {
    const o = check.optionsObject('options', options);
    const notBefore = o.notBefore === undefined ? '' : numberArg(check.finiteNumber('options.notBefore', o.notBefore));
    const delayMs = o.delayMs === undefined ? '' : numberArg(check.nonNegativeNumber('options.delayMs', o.delayMs));
    const { id, token, shard } = this.#ref(claim, o);
    checkSettleCode(await shard.run(scripts.nack, [id, token, notBefore, delayMs]), id);
  }

  /** Moves a claim's lease to `now + leaseMs`. */
  async extendLease(claim: ClaimRef, options?: ExtendLeaseOptions): Promise<ClaimedBatch<K, V>> {
    const o = check.optionsObject('options', options);
    const leaseMs = check.positiveNumber('options.leaseMs', o.leaseMs ?? this.options.leaseMs);
    const { id, token, shard } = this.#ref(claim, o);
    const reply = (await shard.run(scripts.extend, [id, token, leaseMs])) as unknown[];
    checkSettleCode(reply[0], id);
    return toClaimedBatch(this.options.codec, reply[1]);
  }

  /** Replaces a claimed batch by parts of `counts[i]` values, in order, under ids `${id}.1`, `${id}.2`, …, each settled on its own. */
  async split(claim: ClaimRef, counts: readonly number[], options?: AckOptions): Promise<ClaimedBatch<K, V>[]> {
    const { id, token, shard } = this.#ref(claim, options);
    if (!Array.isArray(counts) || counts.length === 0) throw new InvalidArgumentError('counts', 'a non-empty array', counts);
    for (const [i, count] of counts.entries()) check.positiveInteger(`counts[${i}]`, count);
    const reply = (await shard.run(scripts.split, [id, token, counts.length, ...counts])) as unknown[];
    if (reply[0] === 'counts') {
      const total = counts.reduce((a, b) => a + b, 0);
      throw new InvalidArgumentError('counts', `counts summing to the batch's ${String(reply[1])} values`, total);
    }
    checkSettleCode(reply[0], id);
    return reply.slice(1).map((part) => toClaimedBatch<K, V>(this.options.codec, part));
  }

  /** Makes a key deferred by a nack claimable now (e.g. resuming a paused customer); whether it was deferred. */
  async resume(key: K): Promise<boolean> {
    checkKey(key);
    return Number(await this.#shardOfKey(key).run(scripts.resume, [key])) === 1;
  }

  /** Removes `key`'s pending values (claimed ones stay claimed) and returns them, oldest first. */
  async remove(key: K): Promise<V[]> {
    checkKey(key);
    const reply = await this.#shardOfKey(key).run(scripts.remove, [key]);
    return toBatch<K, V>(this.options.codec, [key, reply]).values;
  }

  /** The first claimable key, its place and its pending values, without removing anything. */
  async peek(): Promise<QueueEntry<number, K, V> | undefined> {
    return (await this.entries(1))[0];
  }

  /**
   * Claimable keys in place order with their pending values (`limit` keys at most per shard).
   * With several shards, entries are merged by sort key; ties across shards are in shard order.
   */
  async entries(limit?: number): Promise<QueueEntry<number, K, V>[]> {
    const max = limit === undefined ? -1 : check.positiveInteger('limit', limit);
    const replies = await Promise.all(this.#shards.map((shard) => shard.run(scripts.entries, [max])));
    const merged: RawEntry<K, V>[] = replies.flatMap((reply) => (reply as unknown[]).map((raw) => toEntry<K, V>(this.options.codec, raw)));
    if (this.#shards.length > 1) merged.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
    const entries = merged.map(({ key, sortKey, values }) => ({ key, sortKey, values }));
    return limit === undefined ? entries : entries.slice(0, limit);
  }

  /** Deletes every key of the queue (SCAN + UNLINK per shard). Not atomic against concurrent publishes. */
  async clear(): Promise<void> {
    await this.#drain();
    for (const shard of this.#shards) await clearShard(this.client, shard.tag);
  }

  /** Refuses further publishes from this instance with `QueueClosedError`, and waits for the ones sent. Claims and settles go on. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#drain();
  }

  /** `close()`, then closes the wake subscription and the connection the queue opened (not a client passed in). */
  async quit(): Promise<void> {
    await this.close();
    await this.#wake.close();
    if (this.#owned) await this.client.quit().catch(() => this.client.disconnect());
  }

  /** Throws an `Error` describing the first broken invariant of the data in Redis. For tests, with no concurrent writers; O(n). */
  async checkInvariants(): Promise<void> {
    for (const shard of this.#shards) await checkRedisInvariants(this.client, shard.tag, this.options.perKeyOrder);
  }

  // --- for subclasses -------------------------------------------------------------------------

  /** Stores `value` under `key` at `sortKey` ('' in a time queue); coalesced with the tick's other publishes. */
  protected async add(sortKey: string, key: K, value: V): Promise<void> {
    checkKey(key);
    if (value === undefined) throw new InvalidArgumentError('value', 'a value other than undefined', value);
    if (this.#closed) throw new QueueClosedError();
    const text = encodeValue(this.options.codec, value);
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > this.options.maxValueBytes) {
      throw new InvalidArgumentError('value', `at most ${this.options.maxValueBytes} bytes once encoded (bytes received)`, bytes);
    }
    if (!(await this.#shardOfKey(key).publisher.add([sortKey, key, text]))) throw new QueueFullError(this.options.maxPending);
  }

  /** Claims (or pulls) batches, visiting every shard from a different starting one each call. */
  protected takeUpTo(mode: 'pull', maxMessages: number | undefined, upTo: string, options?: ClaimOptions): Promise<Batch<K, V>[]>;
  protected takeUpTo(mode: 'claim', maxMessages: number | undefined, upTo: string, options?: ClaimOptions): Promise<ClaimedBatch<K, V>[]>;
  protected async takeUpTo(mode: 'claim' | 'pull', maxMessages: number | undefined, upTo: string, options?: ClaimOptions): Promise<Batch<K, V>[]> {
    const o = check.optionsObject('options', options);
    const leaseMs = check.positiveNumber('options.leaseMs', o.leaseMs ?? this.options.leaseMs);
    const maxBatches = o.maxBatches === undefined ? Infinity : check.positiveInteger('options.maxBatches', o.maxBatches);
    const undefer = check.boolean('options.includeDeferred', o.includeDeferred ?? false) ? '1' : '0';
    let remaining = maxMessages === undefined ? Infinity : check.positiveInteger('maxMessages', maxMessages);
    const shards = this.#shards;
    const start = this.#rotor++ % shards.length;
    const out: Batch<K, V>[] = [];
    for (let i = 0; i < shards.length && remaining > 0 && out.length < maxBatches; i++) {
      const shard = shards[(start + i) % shards.length] as Shard;
      const args = [
        mode, limitArg(remaining), upTo, limitArg(this.options.maxBatchSize), leaseMs, out.length === 0 ? '1' : '0',
        limitArg(maxBatches - out.length), undefer,
      ];
      for (const raw of (await shard.run(scripts.take, args)) as unknown[]) {
        const batch = mode === 'claim' ? toClaimedBatch<K, V>(this.options.codec, raw) : toBatch<K, V>(this.options.codec, raw);
        out.push(batch);
        remaining -= batch.values.length;
      }
    }
    return out;
  }

  // --- internals ------------------------------------------------------------------------------

  async #nextDue(): Promise<{ now: number; at: number | undefined }[]> {
    const replies = await Promise.all(this.#shards.map((shard) => shard.run(scripts.nextDue)));
    return (replies as unknown[][]).map(([now, at]) => ({ now: parseNumber(now), at: at === '' ? undefined : parseNumber(at) }));
  }

  #shardOfKey(key: string): Shard {
    return this.#shards[shardOfKey(key, this.#shards.length)] as Shard;
  }

  /** The id, token and shard a settle names; rejects malformed references and ids of no shard here. */
  #ref(claim: ClaimRef, options: AckOptions | undefined): { id: string; token: string; shard: Shard } {
    const id = typeof claim === 'string' ? claim : typeof claim === 'object' && claim !== null ? claim.id : undefined;
    if (typeof id !== 'string') throw new InvalidArgumentError('claim', 'a batch id or a claimed batch', claim);
    const token = options?.token ?? (typeof claim === 'object' ? claim.token : undefined);
    if (token !== undefined && (typeof token !== 'string' || token.includes(','))) {
      throw new InvalidArgumentError('options.token', 'a token string', token);
    }
    const index = shardOfBatch(id, this.#shards.length);
    if (index === undefined) throw new UnknownBatchError(id);
    return { id, token: token ?? '', shard: this.#shards[index] as Shard };
  }

  async #drain(): Promise<void> {
    await Promise.all(this.#shards.flatMap((shard) => [shard.publisher.drain(), shard.acker.drain()]));
  }
}

/** The client's ioredis `keyPrefix` ('' for none): it would prefix KEYS but not the keys scripts derive from them. */
function keyPrefixOf(client: RedisClient): string {
  const options = client.options as { keyPrefix?: string; redisOptions?: { keyPrefix?: string } };
  return options.keyPrefix ?? options.redisOptions?.keyPrefix ?? '';
}

function checkKey(key: unknown): void {
  if (typeof key !== 'string') throw new InvalidArgumentError('key', 'a string (Redis queues take string keys)', key);
}
