/**
 * Webhook push: records for many customers, one signed request per customer per window.
 * The receiver verifies each request's Standard Webhooks signature and dedupes on webhook-id,
 * as a real customer endpoint should.
 *
 *   npm run example -- webhook-push
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createPushClient, verifySignature } from 'duebatch';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const seen = new Set<string>();
const received = new Map<string, number>();

// The customer's side: verify, dedupe, count.
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    if (!verifySignature({ secret, headers: req.headers, body })) {
      res.writeHead(401).end();
      return;
    }
    const id = String(req.headers['webhook-id']);
    if (!seen.has(id)) {
      seen.add(id);
      const customer = req.url?.split('/').pop() ?? '?';
      received.set(customer, (received.get(customer) ?? 0) + (JSON.parse(body) as unknown[]).length);
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const { port } = receiver.address() as AddressInfo;

// Our side: publish records as they happen; the client batches them per customer.
const client = createPushClient<string, { event: string; n: number }>({
  endpoint: (customer) => `http://127.0.0.1:${port}/hooks/${customer}`,
  signingSecret: secret,
  lingerMs: 200,
});
let requests = 0;
client.on('sent', () => requests++);

const customers = ['acme', 'globex', 'initech'];
for (let n = 0; n < 300; n++) client.publish(customers[n % customers.length] as string, { event: 'order.updated', n });

await client.close();
receiver.close();
console.log(`published 300 records in ${requests} requests`);
for (const [customer, count] of received) console.log(`  ${customer}: ${count} records, signature verified`);
