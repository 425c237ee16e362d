/**
 * One request for one (part of a) batch: headers, optional gzip, the POST, and what came of it.
 * The dispatcher decides what to do with the outcome (ack, retry, dead-letter).
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { HttpStatusError, NetworkError, TimeoutError } from '../errors.js';
import type { ClaimedBatch } from '../queue/batch.js';
import type { ResolvedDispatcherOptions } from './dispatcher-options.js';
import { classifyError, parseRetryAfter, type DeliveryFailure } from './retry.js';
import { webhookHeaders } from './signature.js';
import type { DeliveryResponse, Transport } from './transport.js';

const gzipAsync = promisify(gzip);

/** What one request came to. */
export type AttemptResult =
  | { ok: true; response: DeliveryResponse }
  | { ok: false; failure: DeliveryFailure; error: Error; aborted: boolean };

/** Builds the request headers of a part: per-key headers first, so they cannot override the webhook ones. */
export function requestHeaders<K, V>(
  options: ResolvedDispatcherOptions<K, V>,
  part: ClaimedBatch<K, V>,
  body: Uint8Array,
  extra: Record<string, string> | undefined,
): Record<string, string> {
  const signed = webhookHeaders({
    id: part.id,
    // Standard Webhooks timestamps are wall-clock seconds: receivers compare them with their own clock.
    timestamp: Math.floor(Date.now() / 1000),
    body,
    secrets: options.signingSecrets,
  });
  const headers: Record<string, string> = {
    ...extra,
    'content-type': options.contentType,
    'user-agent': options.userAgent,
    'webhook-id': signed['webhook-id'],
    'webhook-timestamp': signed['webhook-timestamp'],
  };
  if (signed['webhook-signature'] !== undefined) headers['webhook-signature'] = signed['webhook-signature'];
  return headers;
}

/** Sends one body and classifies the result. Never throws. */
export async function attempt<K, V>(
  options: ResolvedDispatcherOptions<K, V>,
  transport: Transport,
  url: URL,
  headers: Record<string, string>,
  body: Uint8Array,
  signal: AbortSignal,
): Promise<AttemptResult> {
  try {
    let payload = body;
    if (body.byteLength >= options.gzipMinBytes) {
      payload = await gzipAsync(body);
      headers = { ...headers, 'content-encoding': 'gzip' };
    }
    const response = await transport.post(url, headers, payload, signal);
    if (options.isAck(response)) return { ok: true, response };
    const retryAfter = firstHeader(response.headers['retry-after']);
    const retryAfterMs = parseRetryAfter(retryAfter, Date.now());
    const failure: DeliveryFailure = { kind: 'status', statusCode: response.statusCode, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    return { ok: false, failure, error: new HttpStatusError(response.statusCode, response.body), aborted: false };
  } catch (error) {
    const failure = classifyError(error);
    const wrapped = failure.kind === 'timeout' ? new TimeoutError({ cause: error }) : new NetworkError(failure.kind === 'network' ? failure.code : undefined, { cause: error });
    return { ok: false, failure, error: wrapped, aborted: signal.aborted };
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
