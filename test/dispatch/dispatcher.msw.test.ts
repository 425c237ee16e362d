/**
 * Dispatcher behaviour against customer endpoints described as msw handlers, served to undici
 * through MswDispatcher (msw's getResponse behind an undici Dispatcher).
 */
import { createHmac } from 'node:crypto';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { Dispatcher, TimeSortedQueue, verifySignature, type DeadLetter, type RetryEvent } from '../../src/index.js';
import { MswDispatcher } from '../support/msw-dispatcher.js';

const origin = 'http://customers.test';
const fast = { minDelayMs: 1, maxDelayMs: 5 };

/** A queue, a dispatcher over msw handlers, and what it sent. */
function setup(handlers: Parameters<typeof http.post>[1][], options: Partial<ConstructorParameters<typeof Dispatcher<string, number>>[0]> = {}) {
  const queue = new TimeSortedQueue<string, number>({ lingerMs: 0 });
  let call = 0;
  const agent = new MswDispatcher([
    http.post(`${origin}/:customer`, (info) => {
      const handler = handlers[Math.min(call, handlers.length - 1)] as Parameters<typeof http.post>[1];
      call++;
      return handler(info);
    }),
  ]);
  const dispatcher = new Dispatcher<string, number>({
    source: queue,
    endpoint: (key) => `${origin}/${key}`,
    dispatcher: agent,
    ...fast,
    ...options,
  });
  const retries: RetryEvent<string, number>[] = [];
  dispatcher.on('retry', (event) => retries.push(event));
  return { queue, dispatcher, agent, retries };
}

describe('Dispatcher with msw-described endpoints', () => {
  it('acks a batch the endpoint answers 2xx: one request carries all of a key\'s values', async () => {
    const { queue, dispatcher, agent } = setup([() => new HttpResponse(null, { status: 204 })]);
    for (let i = 0; i < 5; i++) queue.publish('acme', i);
    await dispatcher.flush();
    expect(agent.requests).toHaveLength(1);
    const [request] = agent.requests;
    expect(await request?.json()).toEqual([0, 1, 2, 3, 4]);
    expect(request?.headers.get('content-type')).toBe('application/json');
    expect(request?.headers.get('user-agent')).toMatch(/^duebatch\//);
    expect(request?.headers.get('webhook-id')).toBeTruthy();
    expect(Number(request?.headers.get('webhook-timestamp'))).toBeCloseTo(Date.now() / 1000, -1);
    expect(queue.size + queue.claimedCount).toBe(0);
    expect((await dispatcher.stats()).sentValues).toBe(5);
    await dispatcher.close();
  });

  it('retries a 500 and resends the same batch under the same webhook-id', async () => {
    const { queue, dispatcher, agent, retries } = setup([
      () => new HttpResponse('boom', { status: 500 }),
      () => new HttpResponse(null, { status: 200 }),
    ]);
    queue.publish('acme', 1);
    queue.publish('acme', 2);
    await dispatcher.flush();
    expect(agent.requests).toHaveLength(2);
    const [first, second] = agent.requests;
    expect(second?.headers.get('webhook-id')).toBe(first?.headers.get('webhook-id'));
    expect(await second?.json()).toEqual([1, 2]);
    expect(retries).toHaveLength(1);
    expect(retries[0]?.failure).toMatchObject({ kind: 'status', statusCode: 500 });
    expect(retries[0]?.error).toMatchObject({ code: 'ERR_HTTP_STATUS', statusCode: 500 });
    await dispatcher.close();
  });

  it('honours Retry-After on a 429, capped at maxDelayMs', async () => {
    const { queue, dispatcher, retries } = setup(
      [() => new HttpResponse(null, { status: 429, headers: { 'retry-after': '3' } }), () => new HttpResponse(null, { status: 200 })],
      { minDelayMs: 1, maxDelayMs: 60_000 },
    );
    queue.publish('acme', 1);
    dispatcher.start();
    await new Promise<void>((resolve) => dispatcher.once('retry', () => resolve()));
    expect(retries[0]?.delayMs).toBe(3000);
    expect(retries[0]?.failure).toMatchObject({ kind: 'status', statusCode: 429, retryAfterMs: 3000 });
    // The key waits out its backoff; close() cuts it short and the batch still arrives.
    await dispatcher.close();
    expect((await dispatcher.stats()).sentValues).toBe(1);

    const capped = setup([() => new HttpResponse(null, { status: 503, headers: { 'retry-after': '3600' } }), () => new HttpResponse(null)], { minDelayMs: 1, maxDelayMs: 50 });
    capped.queue.publish('acme', 1);
    await capped.dispatcher.flush();
    expect(capped.retries[0]?.delayMs).toBe(50);
    await capped.dispatcher.close();
  });

  it('dead-letters a 400 without a retry', async () => {
    const letters: DeadLetter<string, number>[] = [];
    const { queue, dispatcher, agent, retries } = setup([() => new HttpResponse('bad record', { status: 400 })], {
      onDeadLetter: (letter) => {
        letters.push(letter);
      },
    });
    queue.publish('acme', 7);
    await dispatcher.flush();
    expect(agent.requests).toHaveLength(1);
    expect(retries).toHaveLength(0);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ key: 'acme', values: [7], attempts: 1, reason: { code: 'rejected', statusCode: 400 } });
    expect(queue.size + queue.claimedCount).toBe(0);
    await dispatcher.close();
  });

  it('keeps dead letters in a bounded list when there is no handler, and dead-letters exhausted retries', async () => {
    const { queue, dispatcher, agent } = setup([() => new HttpResponse(null, { status: 503 })], { maxAttempts: 3 });
    queue.publish('acme', 1);
    await dispatcher.flush();
    expect(agent.requests).toHaveLength(3);
    expect(dispatcher.deadLetters.list()).toEqual([
      expect.objectContaining({ values: [1], attempts: 3, reason: expect.objectContaining({ code: 'exhausted', statusCode: 503 }) }),
    ]);
    await dispatcher.close();
  });

  it('retries a reset connection (HttpResponse.error) as a network failure', async () => {
    const { queue, dispatcher, agent, retries } = setup([() => HttpResponse.error(), () => new HttpResponse(null)]);
    queue.publish('acme', 1);
    await dispatcher.flush();
    expect(agent.requests).toHaveLength(2);
    expect(retries[0]?.failure).toMatchObject({ kind: 'network', code: 'UND_ERR_SOCKET' });
    await dispatcher.close();
  });

  it('signs every request so an independent HMAC and verifySignature both check it', async () => {
    const key = Buffer.from('a secret key of thirty-two bytes');
    const secret = `whsec_${key.toString('base64')}`;
    const { queue, dispatcher, agent } = setup([() => new HttpResponse(null)], { signingSecret: secret });
    queue.publish('acme', 42);
    await dispatcher.flush();
    const [request] = agent.requests;
    const body = await request!.clone().text();
    const id = request!.headers.get('webhook-id');
    const timestamp = request!.headers.get('webhook-timestamp');
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
    expect(request!.headers.get('webhook-signature')).toBe(`v1,${expected}`);
    expect(verifySignature({ secret, headers: request!.headers, body })).toBe(true);
    await dispatcher.close();
  });

  it('keeps each key\'s order across retries: a failed batch goes out before the key\'s newer values', async () => {
    let failures = 2;
    const { queue, dispatcher, agent } = setup([
      () => (failures-- > 0 ? new HttpResponse(null, { status: 502 }) : new HttpResponse(null)),
    ]);
    queue.publish('acme', 1);
    dispatcher.start();
    await new Promise<void>((resolve) => dispatcher.once('retry', () => resolve()));
    queue.publish('acme', 2);
    queue.publish('acme', 3);
    await dispatcher.flush();
    const delivered: number[] = [];
    for (const request of agent.requests.slice(2)) delivered.push(...((await request.json()) as number[]));
    expect(delivered).toEqual([1, 2, 3]);
    await dispatcher.close();
  });

  it('dead-letters the batch of a key whose endpoint is not a URL, and goes on with the others', async () => {
    const queue = new TimeSortedQueue<string, number>({ lingerMs: 0 });
    const agent = new MswDispatcher([http.post(`${origin}/:customer`, () => new HttpResponse(null))]);
    const dispatcher = new Dispatcher<string, number>({
      source: queue,
      endpoint: (key) => (key === 'broken' ? 'not a url' : `${origin}/${key}`),
      dispatcher: agent,
    });
    queue.publish('broken', 1);
    queue.publish('fine', 2);
    await dispatcher.flush();
    expect(agent.requests.map((r) => new URL(r.url).pathname)).toEqual(['/fine']);
    expect(dispatcher.deadLetters.list()).toEqual([
      expect.objectContaining({ key: 'broken', reason: expect.objectContaining({ code: 'invalid-endpoint' }) }),
    ]);
    await dispatcher.close();
  });
});
