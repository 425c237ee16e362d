/** Options of the Redis queues, their defaults and their validation, in one place. */
import { Redis, type Cluster } from 'ioredis';
import { InvalidArgumentError } from '../errors.js';
import type { Clock } from '../time.js';
import * as check from '../validate.js';
import { jsonCodec, type Codec } from './codec.js';

/** An ioredis client: a single node (or Sentinel) `Redis`, or a `Cluster`. */
export type RedisClient = Redis | Cluster;

/** Options shared by {@link RedisSortedQueue} and {@link RedisTimeSortedQueue}. */
export interface RedisQueueOptions<V> {
  /**
   * Namespace of the queue's Redis keys. Every process sharing the queue uses the same prefix
   * (and the same `shards`). Letters, digits and `_ . : -` only, 1 to 100 of them; the keys are
   * `{prefix}:…` (or `{prefix/i}:…` with shards), so one queue's keys share a cluster hash slot
   * per shard.
   */
  prefix: string;
  /**
   * The client to use, or a Redis URL to connect to. A client passed in is used as it is and
   * never closed by the queue (see the README for the settings we recommend); a URL makes the
   * queue open (and `quit()` close) its own connections, with `maxRetriesPerRequest: 0`, so a
   * command issued while Redis is unreachable fails within about a second instead of hanging.
   * @default process.env.REDIS_URL, else 'redis://127.0.0.1:6379'
   */
  redis?: RedisClient | string;
  /**
   * Number of hash tags the queue's keys are spread over. Each key (customer) lives in one
   * shard, chosen by a hash of the key; `claim` visits every shard, starting at a different one
   * each call. More than 1 only pays off on a Redis Cluster. Every process must use the same value.
   * @default 1
   */
  shards?: number;
  /** Turns values into strings for Redis and back. @default JSON */
  codec?: Codec<V>;
  /**
   * Largest encoded value, in UTF-8 bytes. A larger value is refused with
   * `InvalidArgumentError` (argument `value`) and nothing is written.
   * @default 1_048_576 (1 MiB)
   */
  maxValueBytes?: number;
  /**
   * Bound on the values the queue holds, pending plus claimed, across every process. A publish
   * beyond it fails with `QueueFullError` and stores nothing.
   * @default Infinity
   */
  maxPending?: number;
  /**
   * Most values in one batch. In a `RedisTimeSortedQueue` a key with this many pending values is
   * also due at once.
   * @default Infinity
   */
  maxBatchSize?: number;
  /**
   * How long a claimed batch may stay unsettled before it returns to the queue by itself (its
   * dispatcher died). `claim(…, { leaseMs })` overrides it per claim.
   * @default 30_000
   */
  leaseMs?: number;
  /**
   * While a key has a claimed batch outstanding, no process claims its newer values.
   * @default true
   */
  perKeyOrder?: boolean;
  /**
   * Where due checks and leases read the time: `'server'` is the Redis server's `TIME`, the same
   * for every process whatever its local clock says. A {@link Clock} is read locally and passed
   * to every script instead; for tests (a `ManualClock`) and single-process use only, because
   * processes with different clocks would then disagree on what is due.
   * @default 'server'
   */
  clock?: 'server' | Clock;
  /**
   * Most publishes (or acks) sent in one script call; a tick with more sends several calls.
   * @default 5000
   */
  maxCoalesce?: number;
}

/** Options of {@link RedisTimeSortedQueue}. */
export interface RedisTimeSortedQueueOptions<V> extends RedisQueueOptions<V> {
  /**
   * How long a key collects values before its batch is due, from its oldest pending value
   * (measured on the server's clock).
   * @default 1000
   */
  lingerMs?: number;
}

/** {@link RedisQueueOptions} with every default applied. */
export interface ResolvedRedisQueueOptions<V> {
  prefix: string;
  redis: RedisClient | string;
  shards: number;
  codec: Codec<V>;
  maxValueBytes: number;
  maxPending: number;
  maxBatchSize: number;
  leaseMs: number;
  perKeyOrder: boolean;
  clock: 'server' | Clock;
  maxCoalesce: number;
}

const PREFIX = /^[\w.:-]{1,100}$/;

/** The URL a queue connects to when given none. */
export function defaultRedisUrl(): string {
  return process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
}

/** Applies defaults and validates; throws `InvalidArgumentError` naming the first bad option. */
export function resolveRedisQueueOptions<V>(options: RedisQueueOptions<V>): ResolvedRedisQueueOptions<V> {
  const o = check.optionsObject('options', options);
  if (typeof o.prefix !== 'string' || !PREFIX.test(o.prefix)) {
    throw new InvalidArgumentError('options.prefix', 'a string of 1 to 100 letters, digits, _ . : or -', o.prefix);
  }
  const redis = o.redis ?? defaultRedisUrl();
  if (typeof redis !== 'string' && (typeof redis !== 'object' || redis === null || typeof redis.evalsha !== 'function')) {
    throw new InvalidArgumentError('options.redis', 'an ioredis client or a redis:// URL', redis);
  }
  const codec = o.codec ?? (jsonCodec as Codec<V>);
  if (typeof codec !== 'object' || codec === null || typeof codec.encode !== 'function' || typeof codec.decode !== 'function') {
    throw new InvalidArgumentError('options.codec', 'an object with encode() and decode() methods', codec);
  }
  const clock = o.clock ?? 'server';
  if (clock !== 'server' && (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function')) {
    throw new InvalidArgumentError('options.clock', "'server' or an object with a now() method", clock);
  }
  return {
    prefix: o.prefix,
    redis,
    shards: check.positiveInteger('options.shards', o.shards ?? 1),
    codec,
    maxValueBytes: check.positiveInteger('options.maxValueBytes', o.maxValueBytes ?? 1_048_576),
    maxPending: check.positiveLimit('options.maxPending', o.maxPending ?? Infinity),
    maxBatchSize: check.positiveLimit('options.maxBatchSize', o.maxBatchSize ?? Infinity),
    leaseMs: check.positiveNumber('options.leaseMs', o.leaseMs ?? 30_000),
    perKeyOrder: check.boolean('options.perKeyOrder', o.perKeyOrder ?? true),
    clock,
    maxCoalesce: check.positiveInteger('options.maxCoalesce', o.maxCoalesce ?? 5000),
  };
}

/**
 * A client for `url` with settings that make failures reach the caller quickly and never
 * write twice: commands in flight when the connection drops fail at once instead of being
 * sent again after the reconnect (`maxRetriesPerRequest: 0`; ioredis would otherwise resend
 * scripts Redis may already have run, storing a publish twice); reconnects back off up to 1 s;
 * connection errors are kept off the console (they reach callers as `StoreError`s instead).
 */
export function connect(url: string): Redis {
  const client = new Redis(url, {
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  });
  client.on('error', () => {
    // Reported through the commands that fail; an 'error' listener keeps ioredis from logging each retry.
  });
  return client;
}
