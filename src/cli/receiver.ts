/**
 * The demo's embedded receiver: a real HTTP server on 127.0.0.1 playing every customer's
 * endpoint (`/hooks/<customer>`). It verifies each request's signature, fails a share of the
 * requests on purpose, and books the rest in a {@link DeliveryLedger}.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { verifySignature } from '../dispatch/signature.js';
import { answer, customerOf, listen, readBody } from './http-receiving.js';
import { DeliveryLedger, type LedgerCounts } from './ledger.js';
import type { DemoRecord } from './producers.js';

/** Options of {@link startReceiver}. */
export interface ReceiverOptions {
  /** The `whsec_` secret the requests must be signed with. */
  secret: string;
  /** Share of requests (0 to 1) to fail on purpose. */
  failRate: number;
  /** Uniform in [0, 1). @default Math.random */
  random?: () => number;
}

/** Failures the receiver made on purpose. */
export interface InjectedFailures {
  /** Answered 500. */
  serverErrors: number;
  /** Answered 429 with `Retry-After: 1`. */
  rateLimited: number;
  /** Accepted, then the socket reset before the response: the sender cannot know it arrived. */
  resets: number;
}

/** What the receiver counted. */
export interface ReceiverCounts extends LedgerCounts {
  /** Requests that reached the receiver, failed ones included. */
  requests: number;
  /** Requests refused with 401: a missing or wrong signature, or a stale timestamp. */
  signatureFailures: number;
  injected: InjectedFailures;
}

/** A started receiver. */
export interface DemoReceiver {
  /** Base URL, e.g. `http://127.0.0.1:41234`; a customer's endpoint is `${url}/hooks/<customer>`. */
  readonly url: string;
  readonly ledger: DeliveryLedger;
  counts(): ReceiverCounts;
  /** Stops listening and cuts the kept-alive connections, so the process can exit. */
  close(): Promise<void>;
}

type Fault = keyof InjectedFailures;
const FAULTS: readonly Fault[] = ['serverErrors', 'rateLimited', 'resets'];

/** Starts a receiver on a free port of 127.0.0.1. */
export async function startReceiver(options: ReceiverOptions): Promise<DemoReceiver> {
  const random = options.random ?? Math.random;
  const ledger = new DeliveryLedger();
  const counts = { requests: 0, signatureFailures: 0, injected: { serverErrors: 0, rateLimited: 0, resets: 0 } };
  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    counts.requests++;
    const customer = customerOf(req);
    if (customer === undefined) return answer(res, 404);
    if (!verifySignature({ secret: options.secret, headers: req.headers, body })) {
      counts.signatureFailures++;
      return answer(res, 401);
    }
    const fault = random() < options.failRate ? FAULTS[Math.floor(random() * FAULTS.length)] : undefined;
    if (fault !== undefined) counts.injected[fault]++;
    if (fault === 'serverErrors') return answer(res, 500);
    if (fault === 'rateLimited') return answer(res, 429, { 'retry-after': '1' });
    const records = parseRecords(body);
    if (records === undefined) return answer(res, 400);
    ledger.accept(String(req.headers['webhook-id']), customer, records, Date.now());
    // The reset comes after the records are booked: a lost response, the case that makes
    // senders retry what already arrived, and receivers dedupe on webhook-id.
    if (fault === 'resets') return void req.socket.destroy();
    answer(res, 200);
  };
  const server = await listen(handler);
  return {
    url: server.url,
    ledger,
    counts: () => ({ ...ledger.counts(), ...counts, injected: { ...counts.injected } }),
    close: () => server.close(),
  };
}



/** The records of a body, or undefined when it is not a JSON array of demo records. */
function parseRecords(body: Buffer): DemoRecord[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) && parsed.every(isDemoRecord) ? parsed : undefined;
}

function isDemoRecord(value: unknown): value is DemoRecord {
  const r = value as Partial<DemoRecord> | null;
  return typeof r === 'object' && r !== null && typeof r.customer === 'string' && Number.isInteger(r.seq) && Number.isFinite(r.at);
}

