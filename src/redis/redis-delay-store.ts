/**
 * RedisDelayStore: the {@link DelayStore} of a `DelayQueue` in Redis. Jobs survive a restart, and
 * many processes may run DelayQueues over one prefix: a job is claimed by one of them at a time,
 * under a token and a lease the store renews while the job runs. Idle queues sleep until the next
 * due time and are woken over pub/sub when another process makes an earlier one (see `onWake`).
 */
import { InvalidArgumentError, LeaseExpiredError, QueueClosedError, UnknownBatchError } from '../errors.js';
import type { DelayedJob, DelayStore, JobClaim } from '../timers/delay-queue-options.js';
import { monotonicClock, type Clock } from '../time.js';
import * as check from '../validate.js';
import { decodeValue, encodeValue, type Codec } from './codec.js';
import { ownConnection } from './connection.js';
import { connect, resolveRedisQueueOptions, type RedisClient } from './redis-queue-options.js';
import { numberArg, parseNumber } from './replies.js';
import { defineScript, runScript, toStoreError, type ScriptArg } from './script-runner.js';
import {
  ACK_SCRIPT,
  CANCEL_SCRIPT,
  CLAIM_SCRIPT,
  EXTEND_SCRIPT,
  NACK_SCRIPT,
  NEXT_DUE_SCRIPT,
  SCHEDULE_SCRIPT,
  SIZE_SCRIPT,
} from './scripts/delay.js';
import { WakeChannel } from './wake.js';

const scripts = {
  schedule: defineScript('delay-schedule', SCHEDULE_SCRIPT),
  cancel: defineScript('delay-cancel', CANCEL_SCRIPT),
  claim: defineScript('delay-claim', CLAIM_SCRIPT),
  ack: defineScript('delay-ack', ACK_SCRIPT),
  nack: defineScript('delay-nack', NACK_SCRIPT),
  extend: defineScript('delay-extend', EXTEND_SCRIPT),
  nextDue: defineScript('delay-next-due', NEXT_DUE_SCRIPT),
  size: defineScript('delay-size', SIZE_SCRIPT),
} as const;

/** Most lease renewals sent in one script call. */
const RENEW_CHUNK = 1000;

/** First and longest pause before subscribing to the wake channel again after a failure. */
const RESUBSCRIBE_MIN_MS = 100;
const RESUBSCRIBE_MAX_MS = 30_000;

/** Options of {@link RedisDelayStore}. */
export interface RedisDelayStoreOptions<P> {
  /**
   * Namespace of the store's Redis keys (`{prefix}:dq:…`, one cluster slot). Every process
   * sharing the jobs uses the same prefix. Letters, digits and `_ . : -` only, 1 to 100 of them.
   */
  prefix: string;
  /**
   * The client to use, or a Redis URL to connect to. A client passed in is used as it is and never
   * closed by the store; a URL makes the store open (and `close()` close) its own connection.
   * @default process.env.REDIS_URL, else 'redis://127.0.0.1:6379'
   */
  redis?: RedisClient | string;
  /**
   * How long a claimed job stays claimed without word from its worker. The store renews the
   * leases of the jobs it claimed every `leaseMs / 3` while they run, so only a worker that died
   * (or stalled its event loop that long) loses its job to another process, which then runs it
   * again as its next attempt.
   * @default 30_000
   */
  leaseMs?: number;
  /** Turns payloads into strings for Redis and back (`undefined` payloads are kept apart). @default JSON */
  codec?: Codec<P>;
  /**
   * Where due checks and leases read the time. `'server'`: the Redis server's `TIME`, the same for
   * every process; the `now` a DelayQueue passes to `claimDue` is then ignored, and `nextDueAt()`
   * answers on `monotonicClock` (the DelayQueue's default clock), shifted by the local clock's
   * offset from the server's, so a skewed machine neither wakes early nor late. A {@link Clock}
   * (for tests, one process only): leases read it, `claimDue` takes jobs due by its `now` argument,
   * and `nextDueAt()` answers on that clock.
   * @default 'server'
   */
  clock?: 'server' | Clock;
  /**
   * Receives failures of the background lease renewal, `LeaseExpiredError` for a lease lost, and
   * failures to subscribe to the wake channel (retried with backoff). @default process.emitWarning
   */
  onError?: (error: unknown) => void;
}

/** A claim this store renews: the job's id and the claim's token. */
interface Held {
  readonly id: string;
  readonly token: string;
}

/**
 * A {@link DelayStore} in Redis, for `new DelayQueue({ store, handler })` in one or many processes.
 *
 * - One pending job per id; `schedule` replaces it atomically. A job is claimed by one process at
 *   a time, under a token; `ack` and `nack` with a stale token (its lease ran out) are refused
 *   with `LeaseExpiredError` (or `UnknownBatchError` once the store no longer knows the token), so
 *   a stalled worker cannot settle a job another one took over.
 * - Leases are renewed by the store itself, on an unref'd timer every `leaseMs / 3`, for every
 *   job it claimed until that job is acked or nacked, or the store is closed. A job whose worker
 *   died is claimable again once its lease runs out, with `attempt` one higher.
 * - `cancel` from any process removes the pending job and marks a running one cancelled: if that
 *   run fails, its retry is dropped. (The running handler's `signal` aborts only when the cancel
 *   went through the DelayQueue that runs it, and a failure on the job's last attempt is still
 *   dead-lettered there: the DelayQueue decides that before it asks the store.)
 * - Due checks use the server's clock by default (see `clock`).
 * - No polling: a DelayQueue sleeps until `nextDueAt()` (the next job's due time, or the next
 *   lease's end), and `onWake` wakes it when another process schedules an earlier job. The first
 *   `onWake` opens one subscriber connection (a `duplicate()` of the client); `close()` closes it.
 * - Every operation is one Lua script (atomic across processes); failures reject with `StoreError`.
 *
 * Close the DelayQueue first, then the store: `close()` stops the renewals and closes the
 * connection the store opened.
 */
export class RedisDelayStore<P = unknown> implements DelayStore<P> {
  /** The client the store's commands go through. */
  readonly client: RedisClient;
  readonly prefix: string;
  readonly #owned: boolean;
  readonly #keys: readonly string[];
  /** `{prefix}:dq:`: a job's hash is this + `j:<id>`. */
  readonly #base: string;
  readonly #codec: Codec<P>;
  readonly #leaseMs: number;
  /** The subscription to `{prefix}:dq:wake`, opened by the first `onWake`. */
  readonly #wake: WakeChannel;
  readonly #clock: 'server' | Clock;
  readonly #onError: (error: unknown) => void;
  /** This store's claims not yet settled, by token: the leases it renews. */
  readonly #held = new Map<string, Held>();
  #renewTimer: NodeJS.Timeout | undefined;
  #renewing = false;
  #closed = false;

  /** @throws InvalidArgumentError naming the first bad option. */
  constructor(options: RedisDelayStoreOptions<P>) {
    const o = check.optionsObject('options', options);
    const base = resolveRedisQueueOptions<P>({
      prefix: o.prefix as string,
      ...(o.redis === undefined ? {} : { redis: o.redis }),
      ...(o.leaseMs === undefined ? {} : { leaseMs: o.leaseMs }),
      ...(o.codec === undefined ? {} : { codec: o.codec }),
      ...(o.clock === undefined ? {} : { clock: o.clock }),
    });
    this.#onError = o.onError === undefined ? emitWarning : check.func('options.onError', o.onError);
    const { redis } = base;
    if (typeof redis !== 'string' && keyPrefixOf(redis) !== '') {
      throw new InvalidArgumentError('options.redis', 'a client without keyPrefix (the store namespaces its keys by options.prefix)', keyPrefixOf(redis));
    }
    this.#owned = typeof redis === 'string';
    this.client = typeof redis === 'string' ? connect(redis) : redis;
    this.prefix = base.prefix;
    this.#base = `{${base.prefix}}:dq:`;
    this.#keys = ['due', 'wait', 'lease', 'meta'].map((name) => this.#base + name);
    this.#codec = base.codec;
    this.#leaseMs = base.leaseMs;
    this.#clock = base.clock;
    this.#wake = new WakeChannel(() => ownConnection(this.client), `${this.#base}wake`);
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Claims of this store not settled yet: the leases it is renewing. */
  get heldCount(): number {
    return this.#held.size;
  }

  /** Stores `job`, replacing the pending job with its id (atomically, across processes). */
  async schedule(job: DelayedJob<P>): Promise<void> {
    const { id, dueAt, attempt } = checkJob('job', job);
    const payload = this.#encode(job.payload);
    await this.#run(scripts.schedule, [id, numberArg(dueAt), attempt, payload]);
  }

  /** Removes the pending job with this id and marks a claimed one cancelled (see the class notes); whether either happened. */
  async cancel(id: string): Promise<boolean> {
    return Number(await this.#run(scripts.cancel, [checkId(id)])) === 1;
  }

  /** The pending job with this id, else the claimed one, else `undefined`. One HMGET. */
  async get(id: string): Promise<DelayedJob<P> | undefined> {
    this.#checkOpen();
    const key = `${this.#base}j:${checkId(id)}`;
    let f: (string | null)[];
    try {
      f = await this.client.hmget(key, 'due', 'att', 'p', 'cdue', 'catt', 'cp');
    } catch (cause) {
      throw toStoreError('reading a delayed job failed', cause);
    }
    if (f[0] != null) return this.#job(id, f[0], f[1], f[2]);
    if (f[3] != null) return this.#job(id, f[3], f[4], f[5]);
    return undefined;
  }

  /** Jobs held, pending plus claimed, across every process (after returning expired leases). */
  async size(): Promise<number> {
    return Number(await this.#run(scripts.size, []));
  }

  /**
   * Claims at most `limit` due jobs, earliest due first, equal due times in schedule order, and
   * renews their leases until they are settled. With the server clock, "due" is by the server's
   * time and `now` is ignored (see `clock`).
   */
  async claimDue(now: number, limit: number): Promise<JobClaim<P>[]> {
    const upTo = this.#clock === 'server' ? '' : numberArg(check.finiteNumber('now', now));
    const reply = await this.#run(scripts.claim, [upTo, check.positiveInteger('limit', limit), this.#leaseMs]);
    const claims = (reply as unknown[][]).map(([id, token, dueAt, attempt, payload]) => ({
      job: this.#job(String(id), dueAt, attempt, payload),
      token: String(token),
    }));
    for (const { job, token } of claims) this.#held.set(token, { id: job.id, token });
    if (claims.length > 0) this.#startRenewing();
    return claims;
  }

  /** Removes a claimed job for good. @throws LeaseExpiredError or UnknownBatchError for a stale claim, changing nothing. */
  async ack(claim: JobClaim<P>): Promise<void> {
    const { id, token } = this.#release(claim);
    settleCode(await this.#run(scripts.ack, [id, token]), id);
  }

  /**
   * Replaces a claimed job by `retry`, unless its id was scheduled again (that job stands) or
   * cancelled (from any process) while it was claimed; whether `retry` was stored.
   * @throws LeaseExpiredError or UnknownBatchError for a stale claim, changing nothing.
   */
  async nack(claim: JobClaim<P>, retry: DelayedJob<P>): Promise<boolean> {
    const { dueAt, attempt } = checkJob('retry', retry);
    if (retry.id !== checkClaim(claim).id) throw new InvalidArgumentError('retry.id', "the claimed job's id", retry.id);
    const payload = this.#encode(retry.payload);
    const { id, token } = this.#release(claim);
    const code = await this.#run(scripts.nack, [id, token, numberArg(dueAt), attempt, payload]);
    if (code === 'stored') return true;
    if (code === 'dropped') return false;
    settleCode(code, id);
    return false;
  }

  /**
   * When the DelayQueue should look again: the next pending job's due time, or the next lease's
   * end if that comes first (a dead worker's job comes back then, and a job scheduled behind a
   * claim becomes claimable); `undefined` when neither exists. On the local clock (see `clock`).
   */
  async nextDueAt(): Promise<number | undefined> {
    const [nowText, due, lease] = (await this.#run(scripts.nextDue, [])) as unknown[];
    const now = parseNumber(nowText);
    let at = Math.min(due === '' ? Infinity : parseNumber(due), lease === '' ? Infinity : parseNumber(lease));
    if (at === Infinity) return undefined;
    if (this.#clock === 'server') at = monotonicClock.now() + (at - now);
    return at;
  }

  /**
   * Calls `listener` when another process may have made the next due time earlier: a schedule, a
   * retry or a released job due before every other claimable job is announced on the channel
   * `{prefix}:dq:wake`. Also called once the subscription is active (announcements made before
   * were not heard) and after the subscriber reconnects (those made meanwhile were lost). The
   * first call opens the store's one subscriber connection; a failed subscription is reported to
   * `onError` and retried with backoff. Returns the unsubscribe function. A no-op once closed.
   */
  onWake(listener: () => void): () => void {
    check.func('listener', listener);
    if (this.#closed) return () => undefined;
    let active = true;
    const isActive = (): boolean => active && !this.#closed;
    const remove = this.#wake.add(() => {
      if (isActive()) listener();
    });
    this.#whenSubscribed(listener, isActive, 0);
    return () => {
      active = false;
      remove();
    };
  }

  /**
   * Stops renewing leases (jobs still claimed here come back to the store once their lease runs
   * out), closes the wake subscription, and closes the connection the store opened (not a client
   * passed in). Later calls reject with `QueueClosedError`. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopRenewing();
    this.#held.clear();
    await this.#wake.close();
    if (this.#owned) await this.client.quit().catch(() => this.client.disconnect());
  }

  /** The same as `close()`, named as the Redis queues name it. */
  quit(): Promise<void> {
    return this.close();
  }

  // --- lease renewal --------------------------------------------------------------------------

  #startRenewing(): void {
    if (this.#renewTimer !== undefined || this.#closed) return;
    this.#renewTimer = setInterval(() => void this.#renew(), Math.max(1, this.#leaseMs / 3));
    this.#renewTimer.unref();
  }

  #stopRenewing(): void {
    clearInterval(this.#renewTimer);
    this.#renewTimer = undefined;
  }

  /** Stops renewing `claim` (before it is settled, so a renewal racing the settle is not taken for a lost lease). */
  #release(claim: JobClaim<P>): Held {
    const held = checkClaim(claim);
    this.#checkOpen();
    this.#held.delete(held.token);
    if (this.#held.size === 0) this.#stopRenewing();
    return held;
  }

  /** Moves every held lease to now + leaseMs; one script call per {@link RENEW_CHUNK} claims. */
  async #renew(): Promise<void> {
    if (this.#renewing) return; // the previous round is still in flight
    this.#renewing = true;
    try {
      const held = [...this.#held.values()];
      for (let i = 0; i < held.length && !this.#closed; i += RENEW_CHUNK) {
        const chunk = held.slice(i, i + RENEW_CHUNK);
        const args: ScriptArg[] = [this.#leaseMs, chunk.length];
        for (const { id, token } of chunk) args.push(id, token);
        const codes = (await this.#run(scripts.extend, args)) as unknown[];
        chunk.forEach(({ id, token }, j) => {
          // A claim released meanwhile was settled (or is being): its code means nothing now.
          if (codes[j] === 'ok' || !this.#held.delete(token)) return;
          this.#report(new LeaseExpiredError(id));
        });
      }
      if (this.#held.size === 0) this.#stopRenewing();
    } catch (error) {
      if (!this.#closed) this.#report(error);
    } finally {
      this.#renewing = false;
    }
  }

  // --- wake subscription ----------------------------------------------------------------------

  /** Calls `listener` once the wake subscription is active; after a failure, reports it and tries again later. */
  #whenSubscribed(listener: () => void, isActive: () => boolean, failures: number): void {
    if (!isActive()) return;
    this.#wake.ready().then(
      () => {
        if (isActive()) listener();
      },
      (error: unknown) => {
        if (!isActive()) return;
        this.#report(error);
        const delayMs = Math.min(RESUBSCRIBE_MIN_MS * 2 ** failures, RESUBSCRIBE_MAX_MS);
        setTimeout(() => this.#whenSubscribed(listener, isActive, failures + 1), delayMs).unref();
      },
    );
  }

  // --- internals ------------------------------------------------------------------------------

  #run(script: Parameters<typeof runScript>[1], args: readonly ScriptArg[]): Promise<unknown> {
    this.#checkOpen();
    const now = this.#clock === 'server' ? '' : numberArg(this.#clock.now());
    return runScript(this.client, script, this.#keys, [now, ...args]);
  }

  #checkOpen(): void {
    if (this.#closed) throw new QueueClosedError();
  }

  /** A payload as stored: 'u' for `undefined` (which JSON cannot encode), else 'v' + the codec's text. */
  #encode(payload: P): string {
    return payload === undefined ? 'u' : `v${encodeValue(this.#codec, payload)}`;
  }

  #job(id: string, dueAt: unknown, attempt: unknown, payload: unknown): DelayedJob<P> {
    const text = String(payload);
    const value = text === 'u' ? (undefined as P) : decodeValue(this.#codec, text.slice(1));
    return Object.freeze({ id, payload: value, dueAt: parseNumber(dueAt), attempt: parseNumber(attempt) });
  }

  #report(error: unknown): void {
    try {
      this.#onError(error);
    } catch (secondary) {
      emitWarning(secondary);
    }
  }
}

function checkId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidArgumentError('id', 'a non-empty string', id);
  return id;
}

function checkJob<P>(name: string, job: DelayedJob<P>): DelayedJob<P> {
  if (typeof job !== 'object' || job === null) throw new InvalidArgumentError(name, 'a DelayedJob', job);
  checkId(job.id);
  check.finiteNumber(`${name}.dueAt`, job.dueAt);
  check.positiveInteger(`${name}.attempt`, job.attempt);
  return job;
}

function checkClaim<P>(claim: JobClaim<P>): Held {
  const token: unknown = claim?.token;
  if (typeof claim !== 'object' || claim === null || typeof token !== 'string' || typeof claim.job !== 'object' || claim.job === null) {
    throw new InvalidArgumentError('claim', 'a JobClaim ({ job, token })', claim);
  }
  return { id: checkId(claim.job.id), token };
}

/** Throws the error a settle script's code stands for; returns on 'ok'. */
function settleCode(code: unknown, id: string): void {
  if (code === 'ok') return;
  if (code === 'expired') throw new LeaseExpiredError(id);
  if (code === 'unknown') throw new UnknownBatchError(id);
  throw toStoreError('unexpected reply from a duebatch Redis script', new Error(`settle code ${String(code)}`));
}

/** The client's ioredis `keyPrefix` ('' for none): it would prefix KEYS but not the keys scripts derive from them. */
function keyPrefixOf(client: RedisClient): string {
  const options = client.options as { keyPrefix?: string; redisOptions?: { keyPrefix?: string } };
  return options.keyPrefix ?? options.redisOptions?.keyPrefix ?? '';
}

function emitWarning(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(`RedisDelayStore: ${String(error)}`));
}
