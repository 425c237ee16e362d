/**
 * The chaos receiver: a real HTTP server on 127.0.0.1 playing every customer's endpoint
 * (`/hooks/<customer>`), misbehaving on purpose. One seeded draw per request picks its fault:
 * 500, 503, 429 with `Retry-After`, a hang past the sender's headers timeout, a reset mid-body,
 * or a slow accept. A batch holding a poison record is always refused with 400. Accepted
 * records are booked in the demo's {@link DeliveryLedger}, which dedupes on `webhook-id` and
 * checks each customer's order. The load scenario switches the receiver down (503 to all) and up.
 *
 * A hang and a slow accept book the records before they (fail to) answer: the sender cannot
 * tell whether they arrived and sends them again, the case receivers dedupe for. A reset comes
 * before the body is read, so nothing is booked.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answer, customerOf, listen, readBody } from '../../src/cli/http-receiving.js';
import { DeliveryLedger, type LedgerCounts } from '../../src/cli/ledger.js';
import { verifySignature } from '../../src/dispatch/signature.js';
import { pickFault, zeroFaultCounts, type FaultCounts, type FaultRates } from './faults.js';
import type { Random } from './random.js';
import { parseChaosRecords, type ChaosRecord } from './records.js';

/** Options of {@link startChaosReceiver}. */
export interface ChaosReceiverOptions {
  /** The `whsec_` secret the requests must be signed with. */
  secret: string;
  faults: FaultRates;
  /** Picks each request's fault and each slow accept's delay. */
  random: Random;
  /** A slow accept answers after a delay uniform in [min, max) ms: keep it below the sender's headers timeout. */
  slowMs: readonly [min: number, max: number];
  /** The `Retry-After` of a 429, in seconds. */
  retryAfterSeconds: number;
  /** Told about the records of each request booked the first time its `webhook-id` came. */
  onBooked?: (records: readonly ChaosRecord[]) => void;
}

/** What the receiver counted. */
export interface ChaosReceiverCounts extends LedgerCounts {
  /** Requests that reached the receiver, failed ones included. */
  requests: number;
  /** Refused with 401: missing or wrong signature. */
  signatureFailures: number;
  /** Refused with 400: not a JSON array of records, or no such endpoint. Poison is counted in `faults`. */
  malformed: number;
  faults: FaultCounts;
}

/** A started receiver. */
export interface ChaosReceiver {
  /** Base URL; a customer's endpoint is `${url}/hooks/<customer>`. */
  readonly url: string;
  readonly ledger: DeliveryLedger;
  counts(): ChaosReceiverCounts;
  /** Down: every request is answered 503 and nothing is booked. */
  setDown(down: boolean): void;
  /** Stops listening, cancels slow answers and cuts every connection (hanging ones too). */
  close(): Promise<void>;
}

/** Starts a chaos receiver on a free port of 127.0.0.1. */
export async function startChaosReceiver(options: ChaosReceiverOptions): Promise<ChaosReceiver> {
  const ledger = new DeliveryLedger();
  const counts = { requests: 0, signatureFailures: 0, malformed: 0, faults: zeroFaultCounts() };
  const slowTimers = new Set<NodeJS.Timeout>();
  let down = false;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    counts.requests++;
    if (down) {
      counts.faults.outage++;
      await readBody(req);
      return answer(res, 503);
    }
    const fault = pickFault(options.faults, options.random);
    if (fault === 'reset') {
      counts.faults.reset++;
      return resetMidBody(req);
    }
    const body = await readBody(req);
    const customer = customerOf(req);
    if (!verifySignature({ secret: options.secret, headers: req.headers, body })) {
      counts.signatureFailures++;
      return answer(res, 401);
    }
    const records = parseChaosRecords(body);
    if (customer === undefined || records === undefined) {
      counts.malformed++;
      return answer(res, 400);
    }
    if (records.some((record) => record.poison === true)) {
      counts.faults.poison++;
      return answer(res, 400);
    }
    if (fault === 'status500' || fault === 'status503' || fault === 'status429') {
      counts.faults[fault]++;
      return answer(res, Number(fault.slice(6)), fault === 'status429' ? { 'retry-after': String(options.retryAfterSeconds) } : {});
    }
    const id = String(req.headers['webhook-id']);
    if (!ledger.hasAccepted(id)) options.onBooked?.(records);
    ledger.accept(id, customer, records, Date.now());
    if (fault === 'hang') {
      counts.faults.hang++;
      return; // never answered: the sender's headers timeout ends it
    }
    if (fault === 'slow') {
      counts.faults.slow++;
      const [min, max] = options.slowMs;
      const timer = setTimeout(() => {
        slowTimers.delete(timer);
        answer(res, 200);
      }, min + options.random() * (max - min));
      slowTimers.add(timer);
      return;
    }
    answer(res, 200);
  };

  const server = await listen(handle);
  return {
    url: server.url,
    ledger,
    counts: () => ({ ...ledger.counts(), ...counts, faults: { ...counts.faults } }),
    setDown(value) {
      down = value;
    },
    async close() {
      for (const timer of slowTimers) clearTimeout(timer);
      slowTimers.clear();
      await server.close();
    },
  };
}

/** Cuts the connection once part of the body has arrived (or the body ended, if it came whole). */
function resetMidBody(req: IncomingMessage): void {
  const reset = (): void => void req.socket.destroy();
  req.once('data', reset);
  req.once('end', reset);
}



