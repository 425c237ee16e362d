/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the sender signs
 * `${webhook-id}.${webhook-timestamp}.${body}` with HMAC-SHA256 under a shared `whsec_` secret,
 * and the receiver recomputes it. The id lets receivers deduplicate retries; the timestamp,
 * checked against a tolerance, stops an intercepted request from being replayed later.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';

const SECRET_PREFIX = 'whsec_';
// Standard base64 with optional padding; Buffer.from(s, 'base64') alone would silently skip junk.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** The headers a Standard Webhooks request carries. */
export interface SignedHeaders {
  'webhook-id': string;
  /** Unix seconds, as a decimal string. */
  'webhook-timestamp': string;
  /** Space-separated `v1,<base64>` signatures, one per secret; absent when unsigned. */
  'webhook-signature'?: string;
}

/** What {@link sign} and {@link webhookHeaders} sign. */
export interface SignOptions {
  /** The message id: the same for every retry of one message, so receivers can deduplicate. */
  id: string;
  /** Unix seconds. */
  timestamp: number;
  /** The exact bytes sent: a string is signed as UTF-8. */
  body: string | Uint8Array;
  /** `whsec_` secrets; the first is current, more are kept while a rotation is under way. */
  secrets: readonly string[];
}

/** Request headers as a receiver sees them: a WHATWG `Headers` or a plain object (names in any case). */
export type IncomingHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Options of {@link verifySignature}. */
export interface VerifyOptions {
  /** The endpoint's `whsec_` secret, or several while a rotation is under way. */
  secret: string | readonly string[];
  headers: IncomingHeaders;
  /** The raw body as received, before any JSON parsing. */
  body: string | Uint8Array;
  /** How far `webhook-timestamp` may be from now, either way, in seconds. @default 300 */
  toleranceSeconds?: number;
  /** The receiver's clock, in epoch milliseconds. @default Date.now */
  now?: () => number;
}

/**
 * Decodes a `whsec_<base64>` secret into its HMAC key.
 * @throws {@link InvalidArgumentError} when the prefix is missing or the key is empty or not base64.
 */
export function parseSigningSecret(secret: string): Buffer {
  const hasPrefix = typeof secret === 'string' && secret.startsWith(SECRET_PREFIX);
  const key = hasPrefix ? secret.slice(SECRET_PREFIX.length) : '';
  if (key === '' || !BASE64.test(key)) {
    const expected = 'a Standard Webhooks secret: "whsec_" followed by a base64 key';
    throw new InvalidArgumentError('signingSecret', expected, secret);
  }
  return Buffer.from(key, 'base64');
}

/**
 * Computes the `webhook-signature` header value: `v1,<base64 HMAC-SHA256>` for each secret,
 * space-separated, so receivers holding either the old or the new secret accept the request.
 * @throws {@link InvalidArgumentError} on an empty id, a timestamp that is not whole seconds,
 * no secrets, or a malformed secret.
 */
export function sign(options: SignOptions): string {
  const { id, timestamp, body, secrets } = options;
  if (typeof id !== 'string' || id === '') throw new InvalidArgumentError('id', 'a non-empty string', id);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new InvalidArgumentError('timestamp', 'a non-negative integer (unix seconds)', timestamp);
  }
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new InvalidArgumentError('secrets', 'a non-empty array of "whsec_" secrets', secrets);
  }
  return secrets.map((secret) => `v1,${digest(parseSigningSecret(secret), id, String(timestamp), body)}`).join(' ');
}

/** The Standard Webhooks headers for one request; `webhook-signature` only when there are secrets. */
export function webhookHeaders(
  options: Omit<SignOptions, 'secrets'> & { secrets?: readonly string[] | undefined },
): SignedHeaders {
  const headers: SignedHeaders = { 'webhook-id': options.id, 'webhook-timestamp': String(options.timestamp) };
  const secrets = options.secrets ?? [];
  if (secrets.length > 0) headers['webhook-signature'] = sign({ ...options, secrets });
  return headers;
}

/**
 * For receivers: true iff the `webhook-id`, `webhook-timestamp` and `webhook-signature` headers are
 * present, the timestamp is within `toleranceSeconds` of now, and some `v1` signature in the header
 * matches some secret (compared in constant time). Malformed headers yield false, never a throw.
 * @throws {@link InvalidArgumentError} when a secret is malformed or `toleranceSeconds` is negative.
 */
export function verifySignature(options: VerifyOptions): boolean {
  const { secret } = options;
  const secrets = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? secret : [];
  if (secrets.length === 0) {
    throw new InvalidArgumentError('secret', 'a "whsec_" secret or a non-empty array of them', secret);
  }
  const keys = secrets.map(parseSigningSecret);
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  if (!(toleranceSeconds >= 0)) {
    throw new InvalidArgumentError('toleranceSeconds', 'a non-negative number', toleranceSeconds);
  }
  const id = readHeader(options.headers, 'webhook-id');
  const timestamp = readHeader(options.headers, 'webhook-timestamp');
  const signatures = readHeader(options.headers, 'webhook-signature');
  if (id === undefined || signatures === undefined || timestamp === undefined || !/^\d+$/.test(timestamp)) {
    return false;
  }
  const nowSeconds = (options.now ?? Date.now)() / 1000;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const received = signatures
    .split(/\s+/)
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3)));
  return keys.some((key) => {
    const expected = Buffer.from(digest(key, id, timestamp, options.body));
    // timingSafeEqual throws on a length mismatch; the length of a signature is no secret.
    return received.some((given) => given.length === expected.length && timingSafeEqual(given, expected));
  });
}

function digest(key: Buffer, id: string, timestamp: string, body: string | Uint8Array): string {
  // Two updates instead of one template string: a byte body is signed as-is, never decoded and re-encoded.
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

/** One header's value, or undefined when absent, empty or repeated (a repeated id or timestamp is ambiguous). */
function readHeader(headers: IncomingHeaders, name: string): string | undefined {
  const value = isHeadersObject(headers) ? headers.get(name) : findIgnoringCase(headers, name);
  const single: unknown = Array.isArray(value) && value.length === 1 ? value[0] : value;
  return typeof single === 'string' && single !== '' ? single : undefined;
}

function isHeadersObject(headers: IncomingHeaders): headers is { get(name: string): string | null } {
  return typeof (headers as { get?: unknown }).get === 'function';
}

function findIgnoringCase(headers: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(headers, name)) return headers[name];
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}
