/**
 * What is worth retrying and how long to wait first. The policy is a pure function of the failure
 * and the attempt number, so users can replace it and tests need no timers.
 */
import { InvalidArgumentError } from '../errors.js';
import { MAX_TIMER_DELAY_MS } from '../time.js';

/** Statuses that say "try again later": timeouts, too early, rate limits and transient server faults. */
export const DEFAULT_RETRY_STATUSES: readonly number[] = [408, 425, 429, 500, 502, 503, 504];

/**
 * Network error codes worth retrying. `ENOTFOUND` is left out: a host that does not resolve is a
 * misconfigured endpoint, not a blip (`EAI_AGAIN`, the resolver's "try again", is in).
 * `UND_ERR_SOCKET` is undici's "other side closed": the server dropped a kept-alive socket just as
 * we reused it. Undici's timeout codes are absent because {@link classifyError} makes them
 * `timeout` failures, which are always retried.
 */
export const DEFAULT_RETRY_ERROR_CODES: readonly string[] = [
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
];

const TIMEOUT_ERROR_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Why one delivery attempt failed. */
export type DeliveryFailure =
  /** The endpoint answered with a non-2xx status; `retryAfterMs` is its parsed `Retry-After`. */
  | { kind: 'status'; statusCode: number; retryAfterMs?: number }
  /** The request never got a response: refused, reset, unreachable. */
  | { kind: 'network'; code: string | undefined; error: unknown }
  /** Connecting, or waiting for headers or body, took too long. */
  | { kind: 'timeout'; error: unknown };

/**
 * Decides after a failed attempt: the delay in ms before the next attempt, or `undefined` to stop
 * (the batch is dead-lettered). `attempt` is the 1-based number of the attempt that just failed.
 */
export type RetryPolicy = (failure: DeliveryFailure, attempt: number) => number | undefined;

/** Options of {@link backoffDelay}. */
export interface BackoffOptions {
  /** The shortest wait, and the base of the exponential growth. */
  minDelayMs: number;
  /** The longest wait. */
  maxDelayMs: number;
  /** Uniform in [0, 1). @default Math.random */
  random?: () => number;
}

/** Options of {@link createRetryPolicy}. */
export interface RetryOptions extends BackoffOptions {
  /** Attempts in total, the first included; 1 means never retry. @default 8 */
  maxAttempts: number;
  /** @default 500 */
  minDelayMs: number;
  /** Also caps `Retry-After`. At most 2^31-1 (about 24.8 days). @default 60_000 */
  maxDelayMs: number;
  /** Response statuses that are retried. @default DEFAULT_RETRY_STATUSES */
  retryStatuses: readonly number[];
  /** Network error codes that are retried. @default DEFAULT_RETRY_ERROR_CODES */
  retryErrorCodes: readonly string[];
}

/**
 * Exponential backoff with jitter above a floor: uniform in [minDelayMs, cap], where
 * cap = min(maxDelayMs, minDelayMs * 2^attempt). So attempt 1 waits 1-2x minDelayMs, attempt 2
 * 1-4x, and so on up to maxDelayMs. The whole window is jittered, as in AWS's "full jitter", so
 * batches that failed together (an endpoint outage) spread out instead of retrying in lockstep;
 * but never below minDelayMs, because a retry within milliseconds only meets the same overloaded
 * server again.
 * @param attempt 1-based number of the attempt that just failed.
 */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  if (!Number.isSafeInteger(attempt) || attempt < 1) {
    throw new InvalidArgumentError('attempt', 'a positive integer', attempt);
  }
  const { minDelayMs, maxDelayMs } = validateDelays(options);
  // The exponent is clamped because 0 * 2^1024 (Infinity) is NaN; 2^1023 already exceeds any cap.
  const cap = Math.min(maxDelayMs, minDelayMs * 2 ** Math.min(attempt, 1023));
  return minDelayMs + (options.random ?? Math.random)() * (cap - minDelayMs);
}

// The three HTTP-date forms of RFC 9110 §5.6.7. Date.parse alone would take "foo 2020" or "-5" as dates.
const IMF_FIXDATE = /^[a-z]{3}, \d{2} [a-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/i;
const RFC850_DATE = /^[a-z]{6,9}, \d{2}-[a-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/i;
const ASCTIME_DATE = /^[a-z]{3} [a-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/i;

/**
 * Parses a `Retry-After` value, delay-seconds (decimals tolerated) or an HTTP-date, into the
 * milliseconds to wait from `nowMs`: 0 for a date in the past, undefined when absent or unparseable.
 */
export function parseRetryAfter(value: string | undefined | null, nowMs: number): number | undefined {
  const text = value?.trim() ?? '';
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  if (!IMF_FIXDATE.test(text) && !RFC850_DATE.test(text) && !ASCTIME_DATE.test(text)) return undefined;
  // asctime carries no zone, and HTTP dates are always UTC: without " GMT" it would parse as local time.
  const date = Date.parse(ASCTIME_DATE.test(text) ? `${text} GMT` : text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil(date - nowMs));
}

/** Applies the defaults of {@link RetryOptions} and validates the result. */
export function resolveRetryOptions(options: Partial<RetryOptions> = {}): RetryOptions {
  const resolved: RetryOptions = {
    maxAttempts: options.maxAttempts ?? 8,
    minDelayMs: options.minDelayMs ?? 500,
    maxDelayMs: options.maxDelayMs ?? 60_000,
    retryStatuses: options.retryStatuses ?? DEFAULT_RETRY_STATUSES,
    retryErrorCodes: options.retryErrorCodes ?? DEFAULT_RETRY_ERROR_CODES,
    ...(options.random === undefined ? {} : { random: options.random }),
  };
  if (!Number.isSafeInteger(resolved.maxAttempts) || resolved.maxAttempts < 1) {
    throw new InvalidArgumentError('options.maxAttempts', 'a positive integer', resolved.maxAttempts);
  }
  validateDelays(resolved);
  if (!isArrayOf(resolved.retryStatuses, (s) => Number.isInteger(s) && s >= 100 && s <= 599)) {
    throw new InvalidArgumentError('options.retryStatuses', 'an array of HTTP status codes', resolved.retryStatuses);
  }
  if (!isArrayOf(resolved.retryErrorCodes, (code) => typeof code === 'string')) {
    throw new InvalidArgumentError('options.retryErrorCodes', 'an array of strings', resolved.retryErrorCodes);
  }
  if (resolved.random !== undefined && typeof resolved.random !== 'function') {
    throw new InvalidArgumentError('options.random', 'a function returning a number in [0, 1)', resolved.random);
  }
  return resolved;
}

/**
 * The default policy: retry statuses and network codes from the options and every timeout, until
 * `maxAttempts` attempts have been made. The wait is {@link backoffDelay}, or the endpoint's
 * `Retry-After` when that is longer (it asks for at least that long), capped at `maxDelayMs`.
 */
export function createRetryPolicy(options: Partial<RetryOptions> = {}): RetryPolicy {
  const resolved = resolveRetryOptions(options);
  const statuses = new Set(resolved.retryStatuses);
  const codes = new Set(resolved.retryErrorCodes);
  const isRetryable = (failure: DeliveryFailure): boolean => {
    if (failure.kind === 'status') return statuses.has(failure.statusCode);
    if (failure.kind === 'network') return failure.code !== undefined && codes.has(failure.code);
    return true;
  };
  return (failure, attempt) => {
    if (attempt >= resolved.maxAttempts || !isRetryable(failure)) return undefined;
    const backoff = backoffDelay(attempt, resolved);
    const retryAfter = failure.kind === 'status' ? (failure.retryAfterMs ?? 0) : 0;
    return Math.min(resolved.maxDelayMs, Math.max(backoff, retryAfter));
  };
}

/**
 * Maps an error thrown by undici's `request` to a {@link DeliveryFailure}. Wrappers (fetch's
 * "fetch failed" TypeError, our own errors) carry the socket's error as `cause`, so the chain is
 * walked a few levels and the innermost string `code` wins; a timeout code anywhere makes it a timeout.
 */
export function classifyError(error: unknown): DeliveryFailure {
  let code: string | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const { code: own, name, cause } = current as { code?: unknown; name?: unknown; cause?: unknown };
    // AbortSignal.timeout() rejects with a DOMException named TimeoutError (whose numeric code is 23).
    if ((typeof own === 'string' && TIMEOUT_ERROR_CODES.has(own)) || name === 'TimeoutError') {
      return { kind: 'timeout', error };
    }
    if (typeof own === 'string') code = own;
    current = cause;
  }
  return { kind: 'network', code, error };
}

function validateDelays<T extends BackoffOptions>(options: T): T {
  const { minDelayMs, maxDelayMs } = options;
  if (!Number.isFinite(minDelayMs) || minDelayMs < 0) {
    throw new InvalidArgumentError('options.minDelayMs', 'a non-negative number', minDelayMs);
  }
  // sleep() hands the delay to setTimeout, which fires anything longer than 2^31-1 ms after 1 ms.
  if (!Number.isFinite(maxDelayMs) || maxDelayMs < minDelayMs || maxDelayMs > MAX_TIMER_DELAY_MS) {
    const expected = `a number from minDelayMs (${minDelayMs}) to 2^31-1`;
    throw new InvalidArgumentError('options.maxDelayMs', expected, maxDelayMs);
  }
  return options;
}

function isArrayOf<T>(value: readonly T[], check: (item: T) => boolean): boolean {
  return Array.isArray(value) && value.every(check);
}
