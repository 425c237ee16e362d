/**
 * Every error duebatch throws or reports is a {@link DuebatchError} with a stable `code`.
 * Tell errors apart by `code` (or `instanceof`), never by message text.
 */

/** The stable codes of every error duebatch throws or reports. */
export const ErrorCode = {
  INVALID_ARGUMENT: 'ERR_INVALID_ARGUMENT',
  QUEUE_FULL: 'ERR_QUEUE_FULL',
  QUEUE_CLOSED: 'ERR_QUEUE_CLOSED',
  UNKNOWN_BATCH: 'ERR_UNKNOWN_BATCH',
  LEASE_EXPIRED: 'ERR_LEASE_EXPIRED',
  HTTP_STATUS: 'ERR_HTTP_STATUS',
  NETWORK: 'ERR_NETWORK',
  TIMEOUT: 'ERR_TIMEOUT',
  SERIALIZE: 'ERR_SERIALIZE',
  INVALID_ENDPOINT: 'ERR_INVALID_ENDPOINT',
  SIGNATURE: 'ERR_SIGNATURE',
  ABORTED: 'ERR_ABORTED',
  STORE: 'ERR_STORE',
} as const;

/** One of the values of {@link ErrorCode}. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Base class of every duebatch error. */
export class DuebatchError extends Error {
  /** Stable machine-readable code, e.g. `ERR_QUEUE_FULL`. */
  readonly code: ErrorCodeValue;

  constructor(code: ErrorCodeValue, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** An argument or option is missing, of the wrong type or out of range. Nothing was changed. */
export class InvalidArgumentError extends DuebatchError {
  /** The argument or option at fault, e.g. `maxMessages` or `options.lingerMs`. */
  readonly argument: string;

  constructor(argument: string, expected: string, received: unknown) {
    super(ErrorCode.INVALID_ARGUMENT, `${argument} must be ${expected}, received ${describeValue(received)}`);
    this.argument = argument;
  }
}

/** A publish would take the queue past its `maxPending` bound. Nothing was stored. */
export class QueueFullError extends DuebatchError {
  /** The configured bound (values held: pending plus claimed). */
  readonly limit: number;

  constructor(limit: number) {
    super(ErrorCode.QUEUE_FULL, `queue is full: it holds its maxPending of ${limit} values`);
    this.limit = limit;
  }
}

/** The queue or client was closed; it accepts no more publishes. */
export class QueueClosedError extends DuebatchError {
  constructor() {
    super(ErrorCode.QUEUE_CLOSED, 'queue is closed');
  }
}

/** `ack`, `nack`, `extendLease` or `split` named a batch id that is not claimed: unknown, or already settled. */
export class UnknownBatchError extends DuebatchError {
  readonly batchId: string;

  constructor(batchId: string) {
    super(ErrorCode.UNKNOWN_BATCH, `no claimed batch with id ${JSON.stringify(batchId)}: unknown or already settled`);
    this.batchId = batchId;
  }
}

/**
 * A settle came from a claim whose lease had expired: the batch went back to the queue
 * (and may have been claimed again under a new token). Nothing was changed.
 */
export class LeaseExpiredError extends DuebatchError {
  readonly batchId: string;

  constructor(batchId: string) {
    super(ErrorCode.LEASE_EXPIRED, `the claim on batch ${JSON.stringify(batchId)} is stale: its lease expired`);
    this.batchId = batchId;
  }
}

/** The endpoint answered with a status that is not an ack. */
export class HttpStatusError extends DuebatchError {
  readonly statusCode: number;
  /** The start of the response body, for diagnosis. */
  readonly body: string;

  constructor(statusCode: number, body: string) {
    super(ErrorCode.HTTP_STATUS, `endpoint answered ${statusCode}`);
    this.statusCode = statusCode;
    this.body = body;
  }
}

/** The request failed below HTTP: connection refused or reset, DNS, TLS. `cause` holds undici's error. */
export class NetworkError extends DuebatchError {
  /** The socket or undici error code, e.g. `ECONNRESET`, `UND_ERR_SOCKET`. */
  readonly errorCode: string | undefined;

  constructor(errorCode: string | undefined, options: { cause: unknown }) {
    super(ErrorCode.NETWORK, `request failed: ${errorCode ?? 'network error'}`, options);
    this.errorCode = errorCode;
  }
}

/** The endpoint did not send headers or body in time. */
export class TimeoutError extends DuebatchError {
  constructor(options: { cause: unknown }) {
    super(ErrorCode.TIMEOUT, 'request timed out', options);
  }
}

/** A batch's values could not be serialized (a cycle, a BigInt, a throwing `serialize`). */
export class SerializeError extends DuebatchError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.SERIALIZE, message, options);
  }
}

/** `endpoint(key)` threw, or gave something that is not an http(s) URL. */
export class InvalidEndpointError extends DuebatchError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.INVALID_ENDPOINT, message, options);
  }
}

/** A storage backend (e.g. Redis) failed: connection lost, script error. `cause` holds the client's error. */
export class StoreError extends DuebatchError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.STORE, message, options);
  }
}

/** An operation was cut short by an `AbortSignal` or by `close()`. */
export class AbortedError extends DuebatchError {
  constructor(message = 'operation aborted', options?: { cause?: unknown }) {
    super(ErrorCode.ABORTED, message, options);
  }
}

/** A value as short text for an error message; never throws. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  return `a ${typeof value}`;
}
