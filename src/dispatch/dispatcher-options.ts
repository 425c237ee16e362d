/** Options of the {@link Dispatcher}, their defaults and their validation, in one place. */
import { createRequire } from 'node:module';
import type { Dispatcher as UndiciDispatcher } from 'undici';
import { InvalidArgumentError } from '../errors.js';
import type { BatchSource } from '../queue/batch-source.js';
import { monotonicClock, type Clock } from '../time.js';
import * as check from '../validate.js';
import { serializeJson, type Serializer } from './body.js';
import type { CircuitOptions } from './circuit.js';
import type { DeadLetter, DeadLetterReason } from './dead-letters.js';
import { createRetryPolicy, resolveRetryOptions, type RetryOptions, type RetryPolicy } from './retry.js';
import { parseSigningSecret } from './signature.js';
import type { DeliveryResponse } from './transport.js';

/** Where a key's batches go: a URL, or a function of the key (sync or async). */
export type Endpoint<K> = string | URL | ((key: K) => string | URL | Promise<string | URL>);

/** Extra request headers: fixed, or a function of the key (sync or async). */
export type HeadersOption<K> = Record<string, string> | ((key: K) => Record<string, string> | Promise<Record<string, string>>);

/**
 * Options of the {@link Dispatcher}. The retry settings (`maxAttempts`, `minDelayMs`,
 * `maxDelayMs`, `retryStatuses`, `retryErrorCodes`) sit at the top level; see `RetryOptions`.
 */
export interface DispatcherOptions<K, V> extends Partial<RetryOptions> {
  /** The queue to send from: a `TimeSortedQueue`, a `SortedQueue`, or a Redis queue. */
  source: BatchSource<K, V>;
  /** The customer's URL. Required. An invalid URL dead-letters that key's batch, nothing more. */
  endpoint: Endpoint<K>;
  /** Extra headers per key (e.g. an API key). @default none */
  headers?: HeadersOption<K>;
  /** Requests in flight at once, over all keys (one per key at most). @default 16 */
  concurrency?: number;
  /** Most values claimed at once. @default 1000 */
  maxMessages?: number;
  /** Lease of a claimed batch; a dispatcher that dies holding it loses nothing after this. @default 60_000 */
  leaseMs?: number;
  /** Connections per origin (ignored with `dispatcher`). @default 16 */
  connections?: number;
  /** Requests pipelined per connection (ignored with `dispatcher`). @default 1 */
  pipelining?: number;
  /** Time to wait for response headers. @default 10_000 */
  headersTimeoutMs?: number;
  /** Time allowed between body chunks. @default 10_000 */
  bodyTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept (ignored with `dispatcher`). @default 4_000 */
  keepAliveTimeoutMs?: number;
  /** An undici dispatcher to send through (proxy agent, interceptors, `MockAgent`). @default an own `Agent` */
  dispatcher?: UndiciDispatcher;
  /** Turns a batch's values into the request body. @default `JSON.stringify(values)` */
  serialize?: Serializer<V>;
  /** The `content-type` header. @default 'application/json' */
  contentType?: string;
  /** Bodies of at least this many bytes are gzipped (`content-encoding: gzip`). @default Infinity (never) */
  gzipMinBytes?: number;
  /** A larger body is split over several requests, each acked on its own. @default Infinity */
  maxBodyBytes?: number;
  /** How much of a response body is read into `DeliveryResponse.body` (the rest is discarded). @default 65_536 */
  maxResponseBytes?: number;
  /** Whether a response acks the batch. @default a 2xx status */
  isAck?: (response: DeliveryResponse) => boolean;
  /**
   * A retry policy of your own, `(failure, attempt) => delayMs | undefined` (undefined: dead-letter).
   * Replaces the one built from the retry settings. @default createRetryPolicy(retry settings)
   */
  retryPolicy?: RetryPolicy;
  /**
   * Where undeliverable batches go: called with the letter (the batch's `id`, `key`, `values`,
   * `attempts`, and the `reason`) and the reason again. The batch leaves the queue once this
   * resolves; if it throws, the letter is kept in `deadLetters` instead. Without it letters are
   * kept in `deadLetters` (bounded by `maxDeadLetters`).
   */
  onDeadLetter?: (letter: DeadLetter<K, V>, reason: DeadLetterReason) => void | Promise<void>;
  /** Bound of the in-memory dead-letter list (batches). When full, batches stay queued. @default 10_000 */
  maxDeadLetters?: number;
  /** Pause a key after consecutive failures. @default off */
  circuit?: CircuitOptions;
  /** Standard Webhooks secret(s) (`whsec_…`); several sign with each during key rotation. @default unsigned */
  signingSecret?: string | readonly string[];
  /** The `user-agent` header. @default `duebatch/<version>` */
  userAgent?: string;
  /** Clock of the latency figures; use the queue's clock. @default monotonicClock */
  clock?: Clock;
  /** Aborting it closes the dispatcher at once: whatever is not delivered is dead-lettered as `shutdown`. */
  signal?: AbortSignal;
}

/** Options with every default applied. */
export interface ResolvedDispatcherOptions<K, V> {
  source: BatchSource<K, V>;
  endpoint: (key: K) => string | URL | Promise<string | URL>;
  headers: ((key: K) => Record<string, string> | Promise<Record<string, string>>) | undefined;
  concurrency: number;
  maxMessages: number;
  leaseMs: number;
  connections: number;
  pipelining: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
  dispatcher: UndiciDispatcher | undefined;
  serialize: Serializer<V>;
  contentType: string;
  gzipMinBytes: number;
  maxBodyBytes: number;
  maxResponseBytes: number;
  isAck: (response: DeliveryResponse) => boolean;
  retryPolicy: RetryPolicy;
  /** Statuses the retry settings retry; any other non-ack status is a rejection. */
  retryStatuses: readonly number[];
  onDeadLetter: ((letter: DeadLetter<K, V>, reason: DeadLetterReason) => void | Promise<void>) | undefined;
  maxDeadLetters: number;
  circuit: CircuitOptions | undefined;
  signingSecrets: readonly string[];
  userAgent: string;
  clock: Clock;
  signal: AbortSignal | undefined;
}

const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** Applies defaults and validates; throws `InvalidArgumentError` naming the first bad option. */
export function resolveDispatcherOptions<K, V>(options: DispatcherOptions<K, V>): ResolvedDispatcherOptions<K, V> {
  const o = check.optionsObject('options', options);
  if (o.source === undefined || typeof o.source?.claim !== 'function') {
    throw new InvalidArgumentError('options.source', 'a queue (TimeSortedQueue, SortedQueue or a Redis queue)', o.source);
  }
  const headersTimeoutMs = check.positiveNumber('options.headersTimeoutMs', o.headersTimeoutMs ?? 10_000);
  const bodyTimeoutMs = check.positiveNumber('options.bodyTimeoutMs', o.bodyTimeoutMs ?? 10_000);
  const leaseMs = check.positiveNumber('options.leaseMs', o.leaseMs ?? 60_000);
  if (leaseMs <= headersTimeoutMs) {
    throw new InvalidArgumentError('options.leaseMs', `more than headersTimeoutMs (${headersTimeoutMs})`, leaseMs);
  }
  return {
    source: o.source,
    endpoint: resolveEndpoint(o.endpoint),
    headers: resolveHeaders(o.headers),
    concurrency: check.positiveInteger('options.concurrency', o.concurrency ?? 16),
    maxMessages: check.positiveInteger('options.maxMessages', o.maxMessages ?? 1000),
    leaseMs,
    connections: check.positiveInteger('options.connections', o.connections ?? 16),
    pipelining: check.positiveInteger('options.pipelining', o.pipelining ?? 1),
    headersTimeoutMs,
    bodyTimeoutMs,
    keepAliveTimeoutMs: check.positiveNumber('options.keepAliveTimeoutMs', o.keepAliveTimeoutMs ?? 4_000),
    dispatcher: resolveUndiciDispatcher(o.dispatcher),
    serialize: o.serialize === undefined ? serializeJson : check.func<Serializer<V>>('options.serialize', o.serialize),
    contentType: nonEmptyString('options.contentType', o.contentType ?? 'application/json'),
    gzipMinBytes: check.positiveLimit('options.gzipMinBytes', o.gzipMinBytes ?? Infinity),
    maxBodyBytes: check.positiveLimit('options.maxBodyBytes', o.maxBodyBytes ?? Infinity),
    maxResponseBytes: check.positiveInteger('options.maxResponseBytes', o.maxResponseBytes ?? 65_536),
    retryStatuses: resolveRetryOptions(retrySettings(o)).retryStatuses,
    isAck: o.isAck === undefined ? isSuccess : check.func<(response: DeliveryResponse) => boolean>('options.isAck', o.isAck),
    retryPolicy: resolveRetryPolicy(o),
    onDeadLetter: o.onDeadLetter === undefined ? undefined : check.func('options.onDeadLetter', o.onDeadLetter),
    maxDeadLetters: check.positiveInteger('options.maxDeadLetters', o.maxDeadLetters ?? 10_000),
    circuit: o.circuit === undefined ? undefined : resolveCircuit(o.circuit),
    signingSecrets: resolveSecrets(o.signingSecret),
    userAgent: nonEmptyString('options.userAgent', o.userAgent ?? `duebatch/${version}`),
    clock: resolveClock(o.clock),
    signal: resolveSignal(o.signal),
  };
}

function resolveRetryPolicy(o: Partial<RetryOptions> & { retryPolicy?: RetryPolicy }): RetryPolicy {
  // Built even with a custom policy, so bad retry settings are reported rather than ignored.
  const built = createRetryPolicy(retrySettings(o));
  return o.retryPolicy === undefined ? built : check.func<RetryPolicy>('options.retryPolicy', o.retryPolicy);
}

/** The retry settings among the dispatcher options, without the undefined ones. */
function retrySettings(o: Partial<RetryOptions>): Partial<RetryOptions> {
  const settings: Partial<RetryOptions> = {};
  for (const name of ['maxAttempts', 'minDelayMs', 'maxDelayMs', 'retryStatuses', 'retryErrorCodes', 'random'] as const) {
    if (o[name] !== undefined) Object.assign(settings, { [name]: o[name] });
  }
  return settings;
}

function isSuccess(response: DeliveryResponse): boolean {
  return response.statusCode >= 200 && response.statusCode < 300;
}

function resolveEndpoint<K>(endpoint: Endpoint<K> | undefined): (key: K) => string | URL | Promise<string | URL> {
  if (typeof endpoint === 'function') return endpoint;
  if (typeof endpoint === 'string' || endpoint instanceof URL) {
    if (!URL.canParse(String(endpoint))) throw new InvalidArgumentError('options.endpoint', 'an http(s) URL', endpoint);
    const url = new URL(endpoint);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new InvalidArgumentError('options.endpoint', 'an http(s) URL', String(endpoint));
    }
    return () => url;
  }
  throw new InvalidArgumentError('options.endpoint', 'a URL or a function of the key returning one', endpoint);
}

function resolveHeaders<K>(headers: HeadersOption<K> | undefined): ResolvedDispatcherOptions<K, unknown>['headers'] {
  if (headers === undefined || typeof headers === 'function') return headers;
  if (typeof headers !== 'object' || headers === null) throw new InvalidArgumentError('options.headers', 'an object or a function', headers);
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') throw new InvalidArgumentError(`options.headers.${name}`, 'a string', value);
  }
  const fixed = { ...headers };
  return () => fixed;
}

function resolveClock(clock: Clock | undefined): Clock {
  if (clock === undefined) return monotonicClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw new InvalidArgumentError('options.clock', 'an object with a now() method', clock);
  }
  return clock;
}

function resolveSignal(signal: AbortSignal | undefined): AbortSignal | undefined {
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidArgumentError('options.signal', 'an AbortSignal', signal);
  return signal;
}

function resolveUndiciDispatcher(dispatcher: UndiciDispatcher | undefined): UndiciDispatcher | undefined {
  if (dispatcher !== undefined && (typeof dispatcher !== 'object' || dispatcher === null || typeof dispatcher.dispatch !== 'function')) {
    throw new InvalidArgumentError('options.dispatcher', 'an undici Dispatcher', dispatcher);
  }
  return dispatcher;
}

function resolveCircuit(circuit: CircuitOptions): CircuitOptions {
  const o = check.optionsObject('options.circuit', circuit);
  return {
    failureThreshold: check.positiveInteger('options.circuit.failureThreshold', o.failureThreshold),
    pauseMs: check.positiveNumber('options.circuit.pauseMs', o.pauseMs),
  };
}

function resolveSecrets(secret: string | readonly string[] | undefined): readonly string[] {
  if (secret === undefined) return [];
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new InvalidArgumentError('options.signingSecret', 'a whsec_ secret or a non-empty array of them', secret);
  }
  for (const s of secrets) parseSigningSecret(s);
  return [...secrets];
}

function nonEmptyString(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new InvalidArgumentError(name, 'a non-empty string', value);
  return value;
}
