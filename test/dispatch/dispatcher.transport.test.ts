/**
 * Dispatcher over real sockets: a node:http receiver on 127.0.0.1 for what only a real
 * connection shows (keep-alive reuse, timeouts, resets, slow customers, body limits).
 */
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { Dispatcher, TimeSortedQueue, type DispatcherOptions } from '../../src/index.js';
import { startReceiver, valuesOf, type Receiver, type Script } from '../support/receiver.js';

const receivers: Receiver[] = [];
const dispatchers: Dispatcher<string, number>[] = [];

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close({ timeoutMs: 0 })));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function setup(script: Script, options: Partial<DispatcherOptions<string, number>> = {}) {
  const receiver = await startReceiver(script);
  receivers.push(receiver);
  const queue = new TimeSortedQueue<string, number>({ lingerMs: 0 });
  const dispatcher = new Dispatcher<string, number>({
    source: queue,
    endpoint: (key) => `${receiver.url}/${key}`,
    minDelayMs: 1,
    maxDelayMs: 5,
    ...options,
  });
  dispatchers.push(dispatcher);
  return { receiver, queue, dispatcher };
}

describe('Dispatcher over a real HTTP server', () => {
  it('retries after a headers timeout, with the same webhook-id', async () => {
    const { receiver, queue, dispatcher } = await setup((_, i) => (i === 0 ? { hang: true } : { status: 200 }), {
      headersTimeoutMs: 100,
    });
    const failures: string[] = [];
    dispatcher.on('retry', (event) => failures.push(event.failure.kind));
    queue.publish('acme', 1);
    await dispatcher.flush();
    expect(failures).toEqual(['timeout']);
    expect(receiver.requests).toHaveLength(2);
    expect(receiver.requests[1]?.headers['webhook-id']).toBe(receiver.requests[0]?.headers['webhook-id']);
  });

  it('retries when the server resets the connection mid-request', async () => {
    const { receiver, queue, dispatcher } = await setup((_, i) => (i === 0 ? { destroy: true } : { status: 200 }));
    const failures: unknown[] = [];
    dispatcher.on('retry', (event) => failures.push(event.failure));
    queue.publish('acme', 1);
    await dispatcher.flush();
    expect(failures).toEqual([expect.objectContaining({ kind: 'network' })]);
    expect(receiver.requests.map((r) => valuesOf(r))).toEqual([[1], [1]]);
  });

  it('does not let a slow customer hold up the others', async () => {
    let releaseSlow!: () => void;
    const slowAnswered = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const { receiver, queue, dispatcher } = await setup(async (request) => {
      if (request.path === '/slow') await slowAnswered;
      return { status: 200 };
    }, { concurrency: 4 });
    queue.publish('slow', 0);
    for (let i = 1; i <= 20; i++) queue.publish(`fast-${i}`, i);
    dispatcher.start();
    const sent = new Set<string>();
    await new Promise<void>((resolve) => {
      dispatcher.on('sent', (event) => {
        sent.add(event.batch.key);
        if (sent.size === 20) resolve();
      });
    });
    expect(sent.has('slow')).toBe(false);
    releaseSlow();
    await dispatcher.flush();
    expect(sent.has('slow')).toBe(true);
    expect(receiver.requests).toHaveLength(21);
  });

  it('reuses keep-alive connections: many batches, few sockets', async () => {
    const { receiver, queue, dispatcher } = await setup(() => ({ status: 200 }), { concurrency: 4, connections: 4 });
    for (let i = 0; i < 300; i++) queue.publish(`customer-${i}`, i);
    await dispatcher.flush();
    expect(receiver.requests).toHaveLength(300);
    expect(receiver.connections).toBeLessThanOrEqual(4);
  });

  it('splits a batch over several requests under maxBodyBytes, each with its own id and acked on its own', async () => {
    const { receiver, queue, dispatcher } = await setup(() => ({ status: 200 }), { maxBodyBytes: 200 });
    const values = Array.from({ length: 100 }, (_, i) => 1000 + i);
    for (const value of values) queue.publish('acme', value);
    await dispatcher.flush();
    expect(receiver.requests.length).toBeGreaterThan(2);
    for (const request of receiver.requests) expect(request.body.byteLength).toBeLessThanOrEqual(200);
    expect(receiver.requests.flatMap((r) => valuesOf<number>(r))).toEqual(values);
    const ids = receiver.requests.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await dispatcher.stats()).sentBatches).toBe(receiver.requests.length);
  });

  it('retries only the unsent parts of a split batch, in order', async () => {
    const { receiver, queue, dispatcher } = await setup((_, i) => (i === 1 ? { status: 503 } : { status: 200 }), { maxBodyBytes: 40 });
    const values = Array.from({ length: 12 }, (_, i) => 100 + i);
    for (const value of values) queue.publish('acme', value);
    await dispatcher.flush();
    const accepted = receiver.requests.filter((_, i) => i !== 1);
    expect(accepted.flatMap((r) => valuesOf<number>(r))).toEqual(values);
    expect(receiver.requests[2]?.headers['webhook-id']).toBe(receiver.requests[1]?.headers['webhook-id']);
  });

  it('gzips bodies from gzipMinBytes on', async () => {
    const { receiver, queue, dispatcher } = await setup(() => ({ status: 200 }), { gzipMinBytes: 64 });
    queue.publish('small', 1);
    for (let i = 0; i < 50; i++) queue.publish('big', i);
    await dispatcher.flush();
    const big = receiver.requests.find((r) => r.path === '/big');
    const small = receiver.requests.find((r) => r.path === '/small');
    expect(big?.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(big!.body).toString())).toHaveLength(50);
    expect(small?.headers['content-encoding']).toBeUndefined();
  });

  it('close() loses nothing: every value is received or dead-lettered as shutdown', async () => {
    const { receiver, queue, dispatcher } = await setup((request) => (request.path.startsWith('/hang') ? { hang: true } : { status: 200 }), {
      concurrency: 2,
    });
    for (let i = 0; i < 40; i++) queue.publish(i % 4 === 0 ? `hang-${i}` : `ok-${i}`, i);
    dispatcher.start();
    await dispatcher.close({ timeoutMs: 300 });
    const received = receiver.requests.filter((r) => r.path.startsWith('/ok')).flatMap((r) => valuesOf<number>(r));
    const dead = dispatcher.deadLetters.list();
    expect(dead.every((letter) => letter.reason.code === 'shutdown')).toBe(true);
    const accounted = [...received, ...dead.flatMap((letter) => letter.values)].sort((a, b) => a - b);
    expect(accounted).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(() => queue.publish('late', 1)).toThrow(expect.objectContaining({ code: 'ERR_QUEUE_CLOSED' }));
  });
});
