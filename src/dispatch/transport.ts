/**
 * HTTP out: one undici `Agent` (a keep-alive `Pool` per origin) unless the user injects a
 * dispatcher (a proxy agent, an interceptor chain, a `MockAgent` in tests).
 */
import { Agent, type Dispatcher as UndiciDispatcher } from 'undici';

/** What the endpoint answered. The body is read (up to a bound) so the socket goes back to the pool. */
export interface DeliveryResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The start of the response body, at most `maxResponseBytes`. */
  body: string;
}

/** Options of {@link Transport}. */
export interface TransportOptions {
  /** Use this undici dispatcher instead of an own `Agent` (its pool settings are then its own). */
  dispatcher: UndiciDispatcher | undefined;
  /** Connections per origin. */
  connections: number;
  /** Requests in flight per connection. */
  pipelining: number;
  /** Time to wait for the response headers. */
  headersTimeoutMs: number;
  /** Time allowed between two body chunks. */
  bodyTimeoutMs: number;
  /** How long an idle connection is kept. */
  keepAliveTimeoutMs: number;
  /** How much of a response body is kept for `isAck` and diagnosis. */
  maxResponseBytes: number;
}

/** Posts request bodies over keep-alive connections. */
export class Transport {
  readonly #dispatcher: UndiciDispatcher;
  readonly #own: boolean;
  readonly #options: TransportOptions;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.#own = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({
        connections: options.connections,
        pipelining: options.pipelining,
        keepAliveTimeout: options.keepAliveTimeoutMs,
        headersTimeout: options.headersTimeoutMs,
        bodyTimeout: options.bodyTimeoutMs,
      });
  }

  /** POSTs `body` to `url`; rejects with undici's error on a network failure or timeout. */
  async post(url: URL, headers: Record<string, string>, body: Uint8Array, signal: AbortSignal): Promise<DeliveryResponse> {
    // The dispatcher's own request(): the top-level one parses the URL again and copies the options.
    const response = await this.#dispatcher.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: 'POST',
      headers,
      body,
      signal,
      headersTimeout: this.#options.headersTimeoutMs,
      bodyTimeout: this.#options.bodyTimeoutMs,
      // Every batch carries a stable webhook-id, so a replayed request is safe; this lets undici pipeline POSTs.
      idempotent: true,
      blocking: false,
    });
    const empty = response.headers['content-length'] === '0';
    return {
      statusCode: response.statusCode,
      headers: response.headers,
      body: empty ? (await response.body.dump(), '') : await readBounded(response.body, this.#options.maxResponseBytes),
    };
  }

  /** Closes the own agent's connections (an injected dispatcher is the user's to close). */
  async close(): Promise<void> {
    if (this.#own) await this.#dispatcher.close();
  }
}

/** Reads the whole body (so the connection can be reused) but keeps at most `limit` bytes. */
async function readBounded(body: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
  const kept: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) kept.push(Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, limit - size)));
    size += chunk.byteLength;
  }
  return Buffer.concat(kept).toString('utf8');
}
