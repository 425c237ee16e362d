/** Dispatcher construction, lifecycle (start, flush, close, abort), events, stats and the circuit. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { Dispatcher, SortedQueue, TimeSortedQueue, createPushClient, type DispatcherOptions } from '../../src/index.js';
import { MswDispatcher } from '../support/msw-dispatcher.js';

const origin = 'http://customers.test';
const okAgent = () => new MswDispatcher([http.post(`${origin}/*`, () => new HttpResponse(null))]);
const base = (): DispatcherOptions<string, number> => ({
  source: new TimeSortedQueue<string, number>({ lingerMs: 0 }),
  endpoint: `${origin}/hook`,
  dispatcher: okAgent(),
});

describe('Dispatcher options', () => {
  it.each([
    ['no source', { source: undefined }, 'options.source'],
    ['no endpoint', { endpoint: undefined }, 'options.endpoint'],
    ['an endpoint that is not a URL', { endpoint: 'ftp://x' }, 'options.endpoint'],
    ['concurrency 0', { concurrency: 0 }, 'options.concurrency'],
    ['negative concurrency', { concurrency: -2 }, 'options.concurrency'],
    ['maxMessages 0', { maxMessages: 0 }, 'options.maxMessages'],
    ['minDelayMs above maxDelayMs', { minDelayMs: 5000, maxDelayMs: 1000 }, 'options.maxDelayMs'],
    ['maxAttempts 0', { maxAttempts: 0 }, 'options.maxAttempts'],
    ['a lease shorter than the headers timeout', { leaseMs: 100, headersTimeoutMs: 1000 }, 'options.leaseMs'],
    ['a malformed signing secret', { signingSecret: 'hunter2' }, 'signingSecret'],
    ['a non-function serialize', { serialize: 'json' }, 'options.serialize'],
    ['a circuit without a threshold', { circuit: { pauseMs: 10 } }, 'options.circuit.failureThreshold'],
  ])('rejects %s with a typed error naming the option', (_, override, argument) => {
    const options = { ...base(), ...override } as DispatcherOptions<string, number>;
    expect(() => new Dispatcher(options)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT', argument }));
  });
});

describe('Dispatcher lifecycle', () => {
  it('wakes at the next due time by itself, without polling', async () => {
    const queue = new TimeSortedQueue<string, number>({ lingerMs: 30 });
    const dispatcher = new Dispatcher({ source: queue, endpoint: `${origin}/hook`, dispatcher: okAgent() }).start();
    const sent = new Promise<number>((resolve) => dispatcher.once('sent', (event) => resolve(event.latencyMs)));
    queue.publish('acme', 1);
    // Released when due: no earlier than lingerMs after the value.
    expect(await sent).toBeGreaterThanOrEqual(30);
    await dispatcher.close();
  });

  it('flush() sends what is pending now, linger or not, and resolves once it is acked', async () => {
    const queue = new TimeSortedQueue<string, number>({ lingerMs: 60_000 });
    const dispatcher = new Dispatcher({ source: queue, endpoint: `${origin}/hook`, dispatcher: okAgent() });
    for (let i = 0; i < 10; i++) queue.publish(`k${i % 3}`, i);
    await dispatcher.flush();
    const stats = await dispatcher.stats();
    expect(stats).toMatchObject({ pending: 0, claimed: 0, inFlight: 0, sentBatches: 3, sentValues: 10, requests: 3, retries: 0 });
    expect(stats.latency.count).toBe(3);
    await dispatcher.close();
  });

  it('sends from a plain SortedQueue too, in sort-key order', async () => {
    const queue = new SortedQueue<number, string, number>();
    const agent = okAgent();
    const dispatcher = new Dispatcher({ source: queue, endpoint: (key) => `${origin}/${key}`, dispatcher: agent, concurrency: 1 });
    queue.publish(3, 'c', 1);
    queue.publish(1, 'a', 2);
    queue.publish(2, 'b', 3);
    await dispatcher.flush();
    expect(agent.requests.map((r) => new URL(r.url).pathname)).toEqual(['/a', '/b', '/c']);
    await dispatcher.close();
  });

  it('close() refuses a negative or NaN timeout and changes nothing', async () => {
    const options = base();
    const dispatcher = new Dispatcher(options).start();
    for (const timeoutMs of [-1, Number.NaN]) {
      expect(() => dispatcher.close({ timeoutMs })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT', argument: 'options.timeoutMs' }));
    }
    (options.source as TimeSortedQueue<string, number>).publish('acme', 1);
    await dispatcher.close();
    expect(dispatcher.stats().sentValues).toBe(1);
  });

  it('an aborted signal closes the dispatcher and dead-letters what is left as shutdown', async () => {
    const controller = new AbortController();
    const queue = new TimeSortedQueue<string, number>({ lingerMs: 60_000 });
    const dispatcher = new Dispatcher({ source: queue, endpoint: `${origin}/hook`, dispatcher: okAgent(), signal: controller.signal }).start();
    queue.publish('acme', 1);
    controller.abort();
    await dispatcher.close();
    expect(dispatcher.deadLetters.list()).toEqual([expect.objectContaining({ values: [1], reason: expect.objectContaining({ code: 'shutdown' }) })]);
  });

  it('pauses a key after consecutive failures, lists it, and resumes it on request', async () => {
    let down = true;
    const agent = new MswDispatcher([
      http.post(`${origin}/:key`, ({ params }) => new HttpResponse(null, { status: params['key'] === 'broken' && down ? 503 : 200 })),
    ]);
    const queue = new TimeSortedQueue<string, number>({ lingerMs: 0 });
    const dispatcher = new Dispatcher({
      source: queue,
      endpoint: (key) => `${origin}/${key}`,
      dispatcher: agent,
      minDelayMs: 1,
      maxDelayMs: 2,
      circuit: { failureThreshold: 3, pauseMs: 60_000 },
    }).start();
    const paused = new Promise<string>((resolve) => dispatcher.once('paused', (event) => resolve(event.key)));
    queue.publish('broken', 1);
    queue.publish('fine', 2);
    expect(await paused).toBe('broken');
    expect(dispatcher.pausedKeys().map((p) => p.key)).toEqual(['broken']);
    expect(agent.requests.filter((r) => r.url.endsWith('/broken'))).toHaveLength(3);
    down = false;
    const delivered = new Promise<string>((resolve) => dispatcher.on('sent', (event) => event.batch.key === 'broken' && resolve(event.batch.key)));
    expect(await dispatcher.resume('broken')).toBe(true);
    expect(await delivered).toBe('broken');
    expect(dispatcher.pausedKeys()).toEqual([]);
    await dispatcher.close();
  });

  it('a custom serializer and isAck decide the body and what counts as accepted', async () => {
    const agent = new MswDispatcher([http.post(`${origin}/hook`, () => HttpResponse.json({ accepted: true }, { status: 202 }))]);
    const queue = new TimeSortedQueue<string, { n: number }>({ lingerMs: 0 });
    const dispatcher = new Dispatcher({
      source: queue,
      endpoint: `${origin}/hook`,
      dispatcher: agent,
      serialize: (values) => values.map((v) => JSON.stringify(v)).join('\n'),
      contentType: 'application/x-ndjson',
      isAck: (response) => response.statusCode === 202 && JSON.parse(response.body).accepted === true,
    });
    queue.publish('acme', { n: 1 });
    queue.publish('acme', { n: 2 });
    await dispatcher.flush();
    expect(await agent.requests[0]?.text()).toBe('{"n":1}\n{"n":2}');
    expect(agent.requests[0]?.headers.get('content-type')).toBe('application/x-ndjson');
    expect((await dispatcher.stats()).sentValues).toBe(2);
    await dispatcher.close();
  });

  it('dead-letters a value that cannot be serialized instead of throwing inside a timer', async () => {
    const queue = new TimeSortedQueue<string, unknown>({ lingerMs: 0 });
    const dispatcher = new Dispatcher<string, unknown>({ source: queue, endpoint: `${origin}/hook`, dispatcher: okAgent() });
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    queue.publish('acme', cyclic);
    queue.publish('other', 1n);
    await dispatcher.flush();
    expect(dispatcher.deadLetters.list().map((l) => l.reason.code)).toEqual(['serialize', 'serialize']);
    expect(dispatcher.deadLetters.list()[0]?.reason.error).toMatchObject({ code: 'ERR_SERIALIZE' });
    await dispatcher.close();
  });

  it('createPushClient wires a queue and a started dispatcher; replayDeadLetters republishes', async () => {
    let reject = true;
    const agent = new MswDispatcher([http.post(`${origin}/hook`, () => new HttpResponse(null, { status: reject ? 400 : 200 }))]);
    const client = createPushClient<string, number>({ endpoint: `${origin}/hook`, dispatcher: agent, lingerMs: 0 });
    client.publish('acme', 1);
    await client.flush();
    expect(client.dispatcher.deadLetters.size).toBe(1);
    reject = false;
    expect(await client.replayDeadLetters()).toBe(1);
    await client.flush();
    expect((await client.stats()).sentValues).toBe(1);
    await client.close();
    expect(() => client.publish('acme', 2)).toThrow(expect.objectContaining({ code: 'ERR_QUEUE_CLOSED' }));
  });
});

describe('an idle client never holds the process open', () => {
  const run = promisify(execFile);
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const script = `
    import { createPushClient } from './src/index.ts';
    const client = createPushClient({ endpoint: 'http://127.0.0.1:9/never', lingerMs: 1000 });
    globalThis.client = client;
  `;

  it('exits on its own with a started client and nothing pending', async () => {
    const started = Date.now();
    await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, timeout: 15_000 });
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
