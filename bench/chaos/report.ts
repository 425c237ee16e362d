/**
 * A run's figures and the checks that decide its exit code. The central one:
 *
 *   lost = published − delivered − dead-lettered − still pending (+ arrived though refused)
 *
 * where `delivered` counts each record once (the receiver dedupes on `webhook-id`) and
 * `dead-lettered` leaves out the records the receiver had accepted anyway, so that no record is
 * subtracted twice. On Redis, `published` leaves out the publishes refused with `ERR_STORE`
 * (Redis down) or `ERR_SERIALIZE` (cannot encode): never stored, so not lost either. A publish
 * refused with `ERR_STORE` may have been stored anyway (the reply was lost, not the write): such
 * a record is delivered or dead-lettered though not in `published`, and is added back (see
 * `refusals.ts`). Anything but 0 fails the run: above 0 records vanished, below 0 a record was
 * counted twice (and shows as an order violation too).
 */
import type { LatencyReport } from '../../src/cli/latency.js';
import type { ProducerCounts } from '../../src/cli/producers.js';
import type { DispatcherStats } from '../../src/dispatch/dispatcher-events.js';
import type { ChaosReceiverCounts } from './chaos-receiver.js';
import type { BackendName } from './client.js';
import type { DeadLetterCounts } from './dead-letter-tally.js';
import type { FaultCounts } from './faults.js';
import type { HeapReport } from './heap-sampler.js';
import type { MarkCounts } from './records.js';
import { NO_REFUSALS, type RefusalCounts } from './refusals.js';

/** Which run. */
export type ScenarioName = 'chaos' | 'load';

/** The settings a report shows in its header. */
export interface RunSettings {
  scenario: ScenarioName;
  backend: BackendName;
  seed: number;
  durationSeconds: number;
  customers: number;
  rate: number;
  lingerMs: number;
  maxPending: number;
}

/** One pass/fail line of the report. */
export interface Check {
  name: string;
  ok: boolean;
  /** The figure checked, short: `0`, `38.2 MB`. */
  value: string;
  /** What it was checked against, or why it failed; may be empty. */
  detail: string;
}

/** What a report is computed from, read after the client closed. */
export interface ReportInputs {
  settings: RunSettings;
  /** The backend as the header names it. @default `in-memory queue` or `Redis queue` */
  backendDescription?: string;
  elapsedMs: number;
  producers: ProducerCounts;
  marks: MarkCounts;
  receiver: ChaosReceiverCounts;
  latency: LatencyReport;
  deadLetters: DeadLetterCounts;
  stats: DispatcherStats;
  heap: HeapReport;
  /** Backend faults injected, by name (none in memory). */
  backendFaults: Record<string, number>;
  /** `error` events of the dispatcher (store failures, a failing dead-letter handler). */
  dispatcherErrors: number;
  /** Publishes the Redis queue refused (and refused ones that arrived anyway). @default none */
  refusals?: RefusalCounts;
  /** The scenario's own checks (load: the queue filled, the backlog drained, the heap bound). */
  scenarioChecks: Check[];
}

/** A run's report; also what the tests assert on. */
export interface ChaosReport {
  settings: RunSettings;
  backendDescription: string;
  elapsedMs: number;
  /** Records the queue accepted. */
  published: number;
  /** Publishes refused with `QueueFullError`: never published, so not lost either. */
  queueFull: number;
  /** Publishes refused with `ERR_STORE` (Redis down): not published, not lost. */
  refusedStoreDown: number;
  /** Publishes refused with `ERR_SERIALIZE` (the Redis codec cannot encode the record). */
  refusedCannotEncode: number;
  /** Records refused with `ERR_STORE` that were stored all the same (the reply was lost) and arrived. */
  arrivedThoughRefused: number;
  /** Records published marked poison / unserializable. */
  poisonPublished: number;
  unserializablePublished: number;
  /** Unique records the receiver accepted. */
  delivered: number;
  /** Records that arrived again under a `webhook-id` already accepted, and the requests that carried them. */
  deliveredTwice: number;
  deliveredTwiceRequests: number;
  /** Records dead-lettered, by reason. */
  deadLettered: number;
  deadLetterReasons: DeadLetterCounts['byReason'];
  /** Of those, records the receiver had accepted anyway. */
  deadLetteredButDelivered: number;
  /** Records still queued or claimed after close. */
  pending: number;
  lost: number;
  /** Requests that reached the receiver, and those made by the dispatcher (retries included). */
  receiverRequests: number;
  dispatcherRequests: number;
  retries: number;
  faults: FaultCounts;
  backendFaults: Record<string, number>;
  dispatcherErrors: number;
  orderViolations: number;
  misrouted: number;
  signatureFailures: number;
  customersReached: number;
  heap: HeapReport;
  /** Publish to receipt, per record, on the receiver's clock. */
  latencyMs: LatencyReport;
  checks: Check[];
  /** Every check passed: exit code 0. */
  ok: boolean;
}

/** Computes the report. */
export function buildReport(input: ReportInputs): ChaosReport {
  const { producers, receiver, deadLetters, stats } = input;
  const refusals = input.refusals ?? NO_REFUSALS;
  // The producers count a refused publish as published (the refusal log swallowed its rejection).
  const published = producers.published - refusals.storeDown - refusals.cannotEncode;
  const pending = stats.pending + stats.claimed;
  const lost = published - receiver.delivered - (deadLetters.values - deadLetters.deliveredAnyway) - pending + refusals.arrivedAnyway;
  const checks: Check[] = [
    zero('lost', lost),
    zero('order violations', receiver.orderViolations),
    zero('misrouted records', receiver.misrouted),
    zero('signature failures', receiver.signatureFailures),
    {
      name: 'dead letters agree',
      ok: deadLetters.values === stats.deadLetteredValues,
      value: String(deadLetters.values),
      detail: `deadLetter events; the dispatcher's stats say ${stats.deadLetteredValues}`,
    },
    ...input.scenarioChecks,
  ];
  return {
    settings: input.settings,
    backendDescription: input.backendDescription ?? (input.settings.backend === 'memory' ? 'in-memory queue' : 'Redis queue'),
    elapsedMs: Math.round(input.elapsedMs),
    published,
    queueFull: producers.queueFull,
    refusedStoreDown: refusals.storeDown,
    refusedCannotEncode: refusals.cannotEncode,
    arrivedThoughRefused: refusals.arrivedAnyway,
    poisonPublished: input.marks.poison,
    unserializablePublished: input.marks.unserializable,
    delivered: receiver.delivered,
    deliveredTwice: receiver.duplicates,
    deliveredTwiceRequests: receiver.duplicateRequests,
    deadLettered: deadLetters.values,
    deadLetterReasons: deadLetters.byReason,
    deadLetteredButDelivered: deadLetters.deliveredAnyway,
    pending,
    lost,
    receiverRequests: receiver.requests,
    dispatcherRequests: stats.requests,
    retries: stats.retries,
    faults: receiver.faults,
    backendFaults: input.backendFaults,
    dispatcherErrors: input.dispatcherErrors,
    orderViolations: receiver.orderViolations,
    misrouted: receiver.misrouted,
    signatureFailures: receiver.signatureFailures,
    customersReached: receiver.customers,
    heap: input.heap,
    latencyMs: input.latency,
    checks,
    ok: checks.every((check) => check.ok),
  };
}

function zero(name: string, value: number): Check {
  return { name, ok: value === 0, value: String(value), detail: '' };
}
