/**
 * createPushClient from `duebatch/redis`: publishes reach a real receiver on 127.0.0.1, close()
 * releases what the queue opened (and only that), and records published by a client that closed
 * without flushing are delivered by the next client on the prefix, as another process would.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { ErrorCode, verifySignature } from '../../src/index.js';
import { createPushClient, type RedisPushClient } from '../../src/redis/index.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { cleanup, describeRedis, redisUrl, testClient, uniquePrefix } from './redis-helper.js';

type Client = RedisPushClient<string, number>;

describeRedis('Redis createPushClient', () => {
  const admin = testClient();
  const prefixes: string[] = [];
  const open: Client[] = [];
  let receiver: Receiver | undefined;

  afterEach(async () => {
    for (const client of open.splice(0)) await client.close({ timeoutMs: 0 });
    await receiver?.close();
    receiver = undefined;
  });
  afterAll(async () => {
    for (const prefix of prefixes) await cleanup(admin, prefix);
    await admin.quit();
  });

  function prefixFor(name: string): string {
    const prefix = uniquePrefix(name);
    prefixes.push(prefix);
    return prefix;
  }

  /** The values the receiver got, per customer, in arrival order. */
  function received(): Map<string, number[]> {
    const byCustomer = new Map<string, number[]>();
    for (const request of receiver?.requests ?? []) {
      const customer = request.path.split('/').pop() ?? '?';
      byCustomer.set(customer, [...(byCustomer.get(customer) ?? []), ...(JSON.parse(request.body.toString()) as number[])]);
    }
    return byCustomer;
  }

  function client(prefix: string, options: { lingerMs?: number; secret?: string } = {}): Client {
    const url = receiver?.url ?? '';
    const made = createPushClient<string, number>({
      redis: redisUrl,
      prefix,
      endpoint: (customer) => `${url}/hooks/${customer}`,
      lingerMs: options.lingerMs ?? 50,
      ...(options.secret === undefined ? {} : { signingSecret: options.secret }),
    });
    open.push(made);
    return made;
  }

  it('delivers published records to the endpoint, one signed request per customer, in order', async () => {
    receiver = await startReceiver(() => ({ status: 204 }));
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const pushClient = client(prefixFor('push-client'), { lingerMs: 1000, secret }); // flush() sends at once, whatever the linger
    const published: Promise<void>[] = [];
    for (let n = 0; n < 30; n++) published.push(pushClient.publish(`customer-${n % 3}`, n));
    await Promise.all(published);
    await pushClient.flush();
    expect(received()).toEqual(
      new Map([
        ['customer-0', [0, 3, 6, 9, 12, 15, 18, 21, 24, 27]],
        ['customer-1', [1, 4, 7, 10, 13, 16, 19, 22, 25, 28]],
        ['customer-2', [2, 5, 8, 11, 14, 17, 20, 23, 26, 29]],
      ]),
    );
    expect(receiver.requests).toHaveLength(3);
    for (const request of receiver.requests) expect(verifySignature({ secret, headers: request.headers, body: request.body.toString() })).toBe(true);
    expect(pushClient.stats()).toMatchObject({ sentValues: 30, sentBatches: 3, pending: 0 });
  });

  it('close() resolves, closes the queue and the connection it opened from the URL, and refuses later publishes', async () => {
    receiver = await startReceiver(() => ({ status: 200 }));
    const pushClient = client(prefixFor('push-client-close'));
    await pushClient.publish('a', 1);
    await pushClient.flush();
    await expect(pushClient.close()).resolves.toBeUndefined();
    expect(pushClient.queue.closed).toBe(true);
    // quit() resolves on Redis's reply to QUIT; the socket closes right after.
    await vi.waitFor(() => expect(pushClient.queue.client.status).toBe('end'), { timeout: 1000, interval: 10 });
    await expect(pushClient.publish('a', 2)).rejects.toMatchObject({ code: ErrorCode.QUEUE_CLOSED });
    await expect(pushClient.close()).resolves.toBeUndefined(); // idempotent
    expect(pushClient.stats()).toMatchObject({ sentValues: 1, pending: 0, claimed: 0 });
  });

  it('close() leaves a client passed in open: it is the caller’s to close', async () => {
    receiver = await startReceiver(() => ({ status: 200 }));
    const redis = testClient();
    const url = receiver.url;
    const pushClient = createPushClient<string, number>({ redis, prefix: prefixFor('push-client-own'), endpoint: `${url}/hooks/x`, lingerMs: 0 });
    try {
      await pushClient.publish('a', 1);
      await pushClient.flush();
      await pushClient.close();
      expect(pushClient.queue.closed).toBe(true);
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
  });

  it('records published by a client that closed without flushing are delivered by the next client on the prefix', async () => {
    receiver = await startReceiver(() => ({ status: 200 }));
    const prefix = prefixFor('push-client-handover');
    const first = client(prefix, { lingerMs: 300 });
    await Promise.all([first.publish('a', 1), first.publish('b', 2), first.publish('a', 3)]);
    await first.close(); // on a shared queue: returns its own claims, leaves the pending records in Redis
    expect(receiver.requests).toHaveLength(0);
    expect(first.stats()).toMatchObject({ pending: 3, pendingKeys: 2, sentValues: 0 });

    // "Another process": its own client and connections, started once nothing else runs.
    const second = client(prefix, { lingerMs: 300 });
    await vi.waitFor(() => expect(second.stats()).toMatchObject({ sentValues: 3, sentBatches: 2 }), { timeout: 5000, interval: 20 });
    expect(received()).toEqual(new Map([['a', [1, 3]], ['b', [2]]]));
  });

  it('rejects bad options with ERR_INVALID_ARGUMENT naming the option', () => {
    expect(() => createPushClient({ endpoint: 'http://127.0.0.1:1/' } as never)).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument: 'options.prefix' }));
    expect(() => createPushClient({ prefix: prefixFor('push-client-bad') } as never)).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT, argument: 'options.endpoint' }));
  });
});
