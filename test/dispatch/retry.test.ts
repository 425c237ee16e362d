import { describe, expect, it } from 'vitest';
import { ErrorCode, InvalidArgumentError } from '../../src/errors.js';
import {
  DEFAULT_RETRY_ERROR_CODES,
  DEFAULT_RETRY_STATUSES,
  backoffDelay,
  classifyError,
  createRetryPolicy,
  parseRetryAfter,
  resolveRetryOptions,
  type DeliveryFailure,
} from '../../src/dispatch/retry.js';

const status = (statusCode: number, retryAfterMs?: number): DeliveryFailure =>
  retryAfterMs === undefined ? { kind: 'status', statusCode } : { kind: 'status', statusCode, retryAfterMs };
const network = (code: string | undefined): DeliveryFailure => ({ kind: 'network', code, error: new Error(code) });
const timeout: DeliveryFailure = { kind: 'timeout', error: new Error('headers timeout') };

describe('backoffDelay', () => {
  const options = { minDelayMs: 500, maxDelayMs: 60_000 };

  it('is uniform in [minDelayMs, min(maxDelayMs, minDelayMs * 2^attempt)]', () => {
    for (let attempt = 1; attempt <= 40; attempt += 1) {
      const cap = Math.min(60_000, 500 * 2 ** attempt);
      expect(backoffDelay(attempt, { ...options, random: () => 0 })).toBe(500);
      expect(backoffDelay(attempt, { ...options, random: () => 0.5 })).toBe(500 + (cap - 500) / 2);
      const high = backoffDelay(attempt, { ...options, random: () => 0.999 });
      expect(high).toBeGreaterThan(500);
      expect(high).toBeLessThanOrEqual(cap);
    }
  });

  it('doubles its window each attempt until maxDelayMs', () => {
    const highs = [1, 2, 3, 4, 5, 6, 7, 8].map((attempt) => backoffDelay(attempt, { ...options, random: () => 1 }));
    expect(highs).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
  });

  it('never leaves [minDelayMs, maxDelayMs] with Math.random', () => {
    for (let attempt = 1; attempt <= 2000; attempt += 1) {
      const delay = backoffDelay(attempt, options);
      expect(delay).toBeGreaterThanOrEqual(500);
      expect(delay).toBeLessThanOrEqual(60_000);
    }
  });

  it('stays 0 for minDelayMs 0, even past 2^1024', () => {
    expect(backoffDelay(5000, { minDelayMs: 0, maxDelayMs: 1000, random: () => 0.5 })).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects attempt %s', (attempt) => {
    expect(() => backoffDelay(attempt, options)).toThrow(expect.objectContaining({ argument: 'attempt' }));
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');

  it('reads delay-seconds as milliseconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 7 ', now)).toBe(7000);
  });

  it('tolerates decimal seconds', () => {
    expect(parseRetryAfter('1.5', now)).toBe(1500);
  });

  it('reads an HTTP-date as the time from now', () => {
    expect(parseRetryAfter('Wed, 01 May 2024 12:00:30 GMT', now)).toBe(30_000);
  });

  it('reads the obsolete RFC 850 and asctime forms, as UTC', () => {
    expect(parseRetryAfter('Wednesday, 01-May-24 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Wed May  1 12:02:00 2024', now)).toBe(120_000);
  });

  it('gives 0 for a date in the past', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(0);
  });

  it.each([undefined, null, '', 'soon', '-5', '1e3', 'foo 2020', '2024-05-01T12:00:30Z', 'Wed, 99 May 2024 12:00:30 GMT'])(
    'gives undefined for %j',
    (value) => {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    },
  );
});

describe('createRetryPolicy', () => {
  const policy = createRetryPolicy({ minDelayMs: 1000, maxDelayMs: 30_000, random: () => 0 });

  it.each(DEFAULT_RETRY_STATUSES)('retries status %i', (code) => {
    expect(policy(status(code), 1)).toBe(1000);
  });

  it.each([400, 401, 403, 404, 409, 410, 413, 422, 501])('dead-letters status %i at once', (code) => {
    expect(policy(status(code), 1)).toBeUndefined();
  });

  it.each(DEFAULT_RETRY_ERROR_CODES)('retries network error %s', (code) => {
    expect(policy(network(code), 1)).toBe(1000);
  });

  it.each(['ENOTFOUND', 'UND_ERR_CLOSED', 'UND_ERR_ABORTED', 'HPE_INVALID_CONSTANT', undefined])(
    'does not retry network error %s',
    (code) => {
      expect(policy(network(code), 1)).toBeUndefined();
    },
  );

  it('retries timeouts', () => {
    expect(policy(timeout, 1)).toBe(1000);
  });

  it('stops once maxAttempts attempts have failed', () => {
    const threeAttempts = createRetryPolicy({ maxAttempts: 3, random: () => 0 });
    expect(threeAttempts(status(503), 1)).toBe(500);
    expect(threeAttempts(status(503), 2)).toBe(500);
    expect(threeAttempts(status(503), 3)).toBeUndefined();
    expect(createRetryPolicy({ maxAttempts: 1 })(status(503), 1)).toBeUndefined();
  });

  it('makes 8 attempts by default', () => {
    const byDefault = createRetryPolicy();
    expect(byDefault(status(503), 7)).toBeTypeOf('number');
    expect(byDefault(status(503), 8)).toBeUndefined();
  });

  it('waits for Retry-After when it is longer than the backoff', () => {
    expect(policy(status(429, 12_000), 1)).toBe(12_000);
    expect(policy(status(503, 0), 1)).toBe(1000);
  });

  it('caps Retry-After at maxDelayMs', () => {
    expect(policy(status(429, 3_600_000), 1)).toBe(30_000);
  });

  it('caps the backoff at maxDelayMs', () => {
    const highest = createRetryPolicy({ minDelayMs: 1000, maxDelayMs: 30_000, maxAttempts: 100, random: () => 1 });
    expect(highest(status(503), 50)).toBe(30_000);
  });

  it('ignores Retry-After on a status that is not retried', () => {
    expect(policy(status(400, 5000), 1)).toBeUndefined();
  });

  it('uses the configured statuses and error codes instead of the defaults', () => {
    const custom = createRetryPolicy({ retryStatuses: [409], retryErrorCodes: ['ENOTFOUND'], random: () => 0 });
    expect(custom(status(409), 1)).toBe(500);
    expect(custom(status(503), 1)).toBeUndefined();
    expect(custom(network('ENOTFOUND'), 1)).toBe(500);
    expect(custom(network('ECONNRESET'), 1)).toBeUndefined();
  });
});

describe('resolveRetryOptions', () => {
  it('fills in the defaults', () => {
    expect(resolveRetryOptions()).toEqual({
      maxAttempts: 8,
      minDelayMs: 500,
      maxDelayMs: 60_000,
      retryStatuses: DEFAULT_RETRY_STATUSES,
      retryErrorCodes: DEFAULT_RETRY_ERROR_CODES,
    });
  });

  it.each([
    [{ maxAttempts: 0 }, 'options.maxAttempts'],
    [{ maxAttempts: 2.5 }, 'options.maxAttempts'],
    [{ minDelayMs: -1 }, 'options.minDelayMs'],
    [{ minDelayMs: Number.NaN }, 'options.minDelayMs'],
    [{ minDelayMs: 5000, maxDelayMs: 1000 }, 'options.maxDelayMs'],
    [{ maxDelayMs: -1 }, 'options.maxDelayMs'],
    [{ maxDelayMs: Number.POSITIVE_INFINITY }, 'options.maxDelayMs'],
    [{ maxDelayMs: 2 ** 31 }, 'options.maxDelayMs'],
    [{ retryStatuses: [503, 1000] }, 'options.retryStatuses'],
    [{ retryErrorCodes: [42] as unknown as string[] }, 'options.retryErrorCodes'],
    [{ random: 0.5 as unknown as () => number }, 'options.random'],
  ])('rejects %j, naming %s', (options, argument) => {
    let thrown: unknown;
    try {
      createRetryPolicy(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    expect(thrown).toMatchObject({ code: ErrorCode.INVALID_ARGUMENT, argument });
  });

  it('says what it expected in the message', () => {
    expect(() => resolveRetryOptions({ maxAttempts: 0 })).toThrow('options.maxAttempts must be a positive integer, received 0');
  });
});

describe('classifyError', () => {
  const withCode = (code: string, cause?: unknown): Error => Object.assign(new Error(code, { cause }), { code });

  it.each(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])('makes %s a timeout', (code) => {
    const error = withCode(code);
    expect(classifyError(error)).toEqual({ kind: 'timeout', error });
  });

  it('makes an AbortSignal.timeout() rejection a timeout', () => {
    const error = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    expect(classifyError(error)).toMatchObject({ kind: 'timeout' });
  });

  it('makes other errors network failures carrying their code', () => {
    const error = withCode('UND_ERR_SOCKET');
    expect(classifyError(error)).toEqual({ kind: 'network', code: 'UND_ERR_SOCKET', error });
  });

  it('finds the code of a wrapped socket error', () => {
    const error = new TypeError('fetch failed', { cause: withCode('ECONNRESET') });
    expect(classifyError(error)).toMatchObject({ kind: 'network', code: 'ECONNRESET', error });
    const twice = withCode('ERR_NETWORK', new Error('wrapper', { cause: withCode('ECONNREFUSED') }));
    expect(classifyError(twice)).toMatchObject({ kind: 'network', code: 'ECONNREFUSED' });
    expect(classifyError(new Error('outer', { cause: withCode('UND_ERR_HEADERS_TIMEOUT') }))).toMatchObject({ kind: 'timeout' });
  });

  it('has no code for errors without one, or a numeric one', () => {
    expect(classifyError(new Error('boom'))).toMatchObject({ kind: 'network', code: undefined });
    expect(classifyError('a string')).toMatchObject({ kind: 'network', code: undefined });
    expect(classifyError(new DOMException('aborted', 'AbortError'))).toMatchObject({ kind: 'network', code: undefined });
  });

  it('survives a cause cycle', () => {
    const error = withCode('ECONNRESET');
    error.cause = error;
    expect(classifyError(error)).toMatchObject({ kind: 'network', code: 'ECONNRESET' });
  });
});
