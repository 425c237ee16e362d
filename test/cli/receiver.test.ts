import { afterEach, describe, expect, it } from 'vitest';
import type { DemoRecord } from '../../src/cli/producers.js';
import { startReceiver, type DemoReceiver, type ReceiverOptions } from '../../src/cli/receiver.js';
import { webhookHeaders } from '../../src/dispatch/signature.js';

const secret = `whsec_${Buffer.from('demo receiver test key, 32 bytes').toString('base64')}`;
const otherSecret = `whsec_${Buffer.from('some other key, also 32 bytes!!').toString('base64')}`;

let receiver: DemoReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function start(options: Partial<ReceiverOptions> = {}): Promise<DemoReceiver> {
  receiver = await startReceiver({ secret, failRate: 0, ...options });
  return receiver;
}

function records(customer: string, seqs: number[], at = Date.now()): DemoRecord[] {
  return seqs.map((seq) => ({ customer, seq, at }));
}

/** POSTs a signed batch the way the dispatcher does. */
function post(r: DemoReceiver, customer: string, values: DemoRecord[], id = `msg_${Math.random()}`, key = secret): Promise<Response> {
  const body = JSON.stringify(values);
  const headers = webhookHeaders({ id, timestamp: Math.floor(Date.now() / 1000), body, secrets: [key] });
  return fetch(`${r.url}/hooks/${customer}`, { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } });
}

describe('the demo receiver', () => {
  it('accepts a signed batch and counts its records for the customer', async () => {
    const r = await start();
    const response = await post(r, 'customer-1', records('customer-1', [0, 1, 2]));
    expect(response.status).toBe(200);
    expect(r.counts()).toMatchObject({ requests: 1, delivered: 3, customers: 1, duplicates: 0, orderViolations: 0, misrouted: 0 });
  });

  it('refuses a request signed with another secret with 401, and counts it', async () => {
    const r = await start();
    const response = await post(r, 'customer-1', records('customer-1', [0]), 'msg_1', otherSecret);
    expect(response.status).toBe(401);
    expect(r.counts()).toMatchObject({ signatureFailures: 1, delivered: 0 });
  });

  it('answers a redelivered webhook-id with 200 but counts its records as duplicates, not again', async () => {
    const r = await start();
    const batch = records('customer-1', [0, 1]);
    await post(r, 'customer-1', batch, 'msg_same');
    const again = await post(r, 'customer-1', batch, 'msg_same');
    expect(again.status).toBe(200);
    expect(r.counts()).toMatchObject({ delivered: 2, duplicates: 2, duplicateRequests: 1, orderViolations: 0 });
  });

  it("counts a record whose seq is not above its customer's last one as an order violation", async () => {
    const r = await start();
    await post(r, 'customer-1', records('customer-1', [0, 2]));
    await post(r, 'customer-1', records('customer-1', [1, 3]));
    await post(r, 'customer-2', records('customer-2', [0]));
    expect(r.counts()).toMatchObject({ delivered: 5, orderViolations: 1 });
  });

  it("counts a record sent to another customer's endpoint as misrouted", async () => {
    const r = await start();
    await post(r, 'customer-1', records('customer-2', [0]));
    expect(r.counts().misrouted).toBe(1);
  });

  it('times each record from its publish timestamp to receipt', async () => {
    const r = await start();
    await post(r, 'customer-1', records('customer-1', [0], Date.now() - 400));
    const latency = r.ledger.latency.report();
    expect(latency.count).toBe(1);
    expect(latency.max).toBeGreaterThanOrEqual(400);
    expect(latency.buckets.find((b) => b.upToMs === 500)?.count).toBe(1);
  });

  describe('failing a share of the requests on purpose', () => {
    // The receiver draws once for "fail?" and once for which failure.
    const scripted = (...draws: number[]) => () => draws.shift() ?? 0;

    it('a 500, without booking the records', async () => {
      const r = await start({ failRate: 1, random: scripted(0, 0) });
      expect((await post(r, 'customer-1', records('customer-1', [0]))).status).toBe(500);
      expect(r.counts()).toMatchObject({ delivered: 0, injected: { serverErrors: 1, rateLimited: 0, resets: 0 } });
    });

    it('a 429 with Retry-After: 1, without booking the records', async () => {
      const r = await start({ failRate: 1, random: scripted(0, 0.5) });
      const response = await post(r, 'customer-1', records('customer-1', [0]));
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(r.counts()).toMatchObject({ delivered: 0, injected: { rateLimited: 1 } });
    });

    it('a reset socket after booking the records: a lost response, so the retry is a duplicate', async () => {
      const r = await start({ failRate: 0.5, random: scripted(0, 0.9, 0.99) });
      const batch = records('customer-1', [0]);
      await expect(post(r, 'customer-1', batch, 'msg_reset')).rejects.toThrow();
      expect(r.counts()).toMatchObject({ delivered: 1, injected: { resets: 1 } });
      const retry = await post(r, 'customer-1', batch, 'msg_reset');
      expect(retry.status).toBe(200);
      expect(r.counts()).toMatchObject({ delivered: 1, duplicates: 1 });
    });

    it('never with a fail rate of 0', async () => {
      const r = await start({ failRate: 0, random: () => 0 });
      expect((await post(r, 'customer-1', records('customer-1', [0]))).status).toBe(200);
    });
  });

  it('answers 404 outside /hooks/<customer>', async () => {
    const r = await start();
    expect((await fetch(`${r.url}/elsewhere`, { method: 'POST', body: '[]' })).status).toBe(404);
  });

  it('closes promptly even with a kept-alive connection open', async () => {
    const r = await start();
    await post(r, 'customer-1', records('customer-1', [0]));
    await r.close();
    receiver = undefined;
    await expect(fetch(`${r.url}/hooks/customer-1`, { method: 'POST', body: '[]' })).rejects.toThrow();
  });
});
