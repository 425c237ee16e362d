/**
 * Serves msw request handlers to undici. msw cannot see undici's requests (it hooks node:http
 * and global fetch), so this undici Dispatcher turns each request into a Fetch `Request`,
 * asks msw's `getResponse()` for the answer, and plays it back through undici's handler.
 * `HttpResponse.error()` plays back as a reset connection.
 */
import { getResponse, type RequestHandler } from 'msw';
import { Dispatcher } from 'undici';

type LegacyHandler = {
  onConnect?(abort: (reason?: unknown) => void): void;
  onHeaders?(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean;
  onData?(chunk: Buffer): boolean;
  onComplete?(trailers: Buffer[] | null): void;
  onError?(error: Error): void;
};

export class MswDispatcher extends Dispatcher {
  /** Requests seen, in order. */
  readonly requests: Request[] = [];

  constructor(readonly handlers: RequestHandler[]) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    void this.#answer(options, handler as unknown as LegacyHandler);
    return true;
  }

  override async close(): Promise<void> {}

  override async destroy(): Promise<void> {}

  async #answer(options: Dispatcher.DispatchOptions, handler: LegacyHandler): Promise<void> {
    let aborted = false;
    handler.onConnect?.(() => {
      aborted = true;
    });
    try {
      const url = new URL(options.path, String(options.origin));
      const init: RequestInit = { method: options.method, headers: toHeaders(options.headers) };
      if (options.body !== undefined && options.body !== null) init.body = Buffer.from(options.body as Uint8Array);
      const request = new Request(url, init);
      this.requests.push(request.clone());
      const response = await getResponse(this.handlers, request);
      if (aborted) return;
      if (response === undefined) throw new Error(`no msw handler for ${options.method} ${url.href}`);
      if (response.type === 'error') throw Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
      const raw: Buffer[] = [];
      response.headers.forEach((value, name) => raw.push(Buffer.from(name), Buffer.from(value)));
      handler.onHeaders?.(response.status, raw, () => {}, response.statusText);
      handler.onData?.(Buffer.from(await response.arrayBuffer()));
      handler.onComplete?.([]);
    } catch (error) {
      if (!aborted) handler.onError?.(error as Error);
    }
  }
}

function toHeaders(headers: Dispatcher.DispatchOptions['headers']): Headers {
  const out = new Headers();
  if (headers === undefined || headers === null) return out;
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) out.append(String(headers[i]), String(headers[i + 1]));
  } else {
    for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
      if (value !== undefined) out.append(name, Array.isArray(value) ? value.join(', ') : value);
    }
  }
  return out;
}
