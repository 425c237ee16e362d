/** The dispatch bench's raw undici side: POSTs with the dispatcher's headers and options, at a fixed concurrency. */
import type { Dispatcher as UndiciDispatcher } from 'undici';

/** The headers the dispatcher sends (unsigned). */
function headersOf(id: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'duebatch/0.1.0',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
  };
}

/** Runs `send(0..count-1)`, `concurrency` at once. */
export async function runWithConcurrency(count: number, concurrency: number, send: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await send(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** POSTs `body` to `path` through `dispatcher` and reads the (empty) answer; throws unless 200. */
export async function post(dispatcher: UndiciDispatcher, path: string, id: string, body: string | Buffer): Promise<void> {
  const response = await dispatcher.request({
    path,
    method: 'POST',
    headers: headersOf(id),
    body,
    // As the dispatcher's transport does: lets undici pipeline a POST (when pipelining > 1).
    idempotent: true,
    blocking: false,
  });
  if (response.statusCode !== 200) throw new Error(`the receiver answered ${response.statusCode}`);
  await response.body.dump();
}
