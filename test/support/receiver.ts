/**
 * A real HTTP receiver on 127.0.0.1 for transport tests: records every request and answers as
 * the test's script says (a status, a delay, a hang, a reset socket).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Which connection carried it (1-based, in order of opening). */
  socket: number;
}

/** What to do with a request. */
export type Action =
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | { destroy: true }
  | { hang: true };

export type Script = (request: ReceivedRequest, index: number) => Action | Promise<Action>;

export interface Receiver {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  requests: ReceivedRequest[];
  /** Connections opened so far. */
  readonly connections: number;
  script: Script;
  close(): Promise<void>;
}

/** Starts a receiver on a free port. The default script answers 200. */
export async function startReceiver(script: Script = () => ({ status: 200 })): Promise<Receiver> {
  const sockets = new WeakMap<Socket, number>();
  const open = new Set<Socket>();
  let connections = 0;
  const requests: ReceivedRequest[] = [];
  const receiver = { script } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks),
        socket: sockets.get(req.socket) ?? 0,
      };
      requests.push(request);
      void Promise.resolve(receiver.script(request, requests.length - 1)).then(async (action) => {
        if ('destroy' in action) return req.socket.destroy();
        if ('hang' in action) return;
        if (action.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, action.delayMs));
        res.writeHead(action.status, action.headers);
        res.end(action.body ?? '');
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.set(socket, ++connections);
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  Object.defineProperty(receiver, 'connections', { get: () => connections });
  return receiver;
}

/** Values of a JSON-array request body. */
export function valuesOf<V = unknown>(request: ReceivedRequest): V[] {
  return JSON.parse(request.body.toString('utf8')) as V[];
}
