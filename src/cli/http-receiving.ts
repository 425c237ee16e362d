/** The HTTP plumbing of the demo's receiver (and the chaos harness's): listen, route, read, answer. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listening server on 127.0.0.1. */
export interface Listening {
  url: string;
  /** Stops listening and cuts every connection. */
  close(): Promise<void>;
}

/** Serves `handle` on a free port of 127.0.0.1; a request the client aborted mid-body is dropped. */
export async function listen(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<Listening> {
  const server = createServer((req, res) => {
    // A request the client aborted mid-body has nothing to book.
    handle(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The customer of a `POST /hooks/<customer>`, or undefined for any other request. */
export function customerOf(req: IncomingMessage): string | undefined {
  const match = req.method === 'POST' ? /^\/hooks\/([^/?]+)$/.exec(req.url ?? '') : null;
  if (match?.[1] === undefined) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined; // a malformed %-escape
  }
}

export function answer(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'text/plain' });
  res.end(status === 200 ? 'ok' : '');
}
