/**
 * The demo's final summary: what was published and what arrived, the requests made against
 * one request per record, the delivery latency, and the checks that decide the exit code.
 * One object, printed as text or (`--json`) as JSON with the same fields.
 */
import type { DispatcherStats } from '../dispatch/dispatcher-events.js';
import type { DemoArgs } from './args.js';
import { formatCount as count } from './format.js';
import { LATENCY_BUCKETS_MS, type LatencyBucket, type LatencyReport } from './latency.js';
import type { ProducerCounts } from './producers.js';
import type { InjectedFailures, ReceiverCounts } from './receiver.js';

/** What the summary is computed from, all read after the client closed. */
export interface SummaryInputs {
  args: DemoArgs;
  elapsedMs: number;
  producers: ProducerCounts;
  receiver: ReceiverCounts;
  latency: LatencyReport;
  stats: DispatcherStats;
  /** Dead-lettered records the receiver had accepted anyway (every response to them was lost). */
  deadLetteredButDelivered: number;
}

/** The summary's figures; also the `--json` output. */
export interface DemoSummary {
  backend: 'memory' | 'redis';
  settings: Omit<DemoArgs, 'json' | 'redisUrl'>;
  elapsedMs: number;
  /** Records the queue accepted. */
  published: number;
  /** Publishes refused because the queue was full: never published, so not lost either. */
  queueFull: number;
  /** Unique records the receiver accepted. */
  delivered: number;
  /** Records delivered again (same webhook-id) and ignored by the receiver. */
  duplicates: number;
  duplicateRequests: number;
  /** Records handed to the dead-letter path, to replay later. */
  deadLettered: number;
  /** Of those, records the receiver had accepted anyway. */
  deadLetteredButDelivered: number;
  /** Records still queued or claimed after close: 0 unless close timed out. */
  pending: number;
  /** Published records neither delivered nor dead-lettered. */
  lost: number;
  /** HTTP requests made, retries included. */
  requests: number;
  recordsPerRequest: number;
  /** `published / requests`: how many times fewer requests than one per record. */
  requestReduction: number;
  retries: number;
  injectedFailures: InjectedFailures;
  latencyMs: LatencyReport;
  signatureFailures: number;
  orderViolations: number;
  misrouted: number;
  customersReached: number;
  /** No record lost, none out of order or misrouted, every signature valid: exit code 0. */
  ok: boolean;
}

/** Computes the summary. */
export function buildSummary(input: SummaryInputs): DemoSummary {
  const { args, producers, receiver, stats } = input;
  const { published } = producers;
  const undeliveredDeadLetters = stats.deadLetteredValues - input.deadLetteredButDelivered;
  const lost = published - receiver.delivered - undeliveredDeadLetters;
  return {
    backend: args.redisUrl === undefined ? 'memory' : 'redis',
    settings: settingsOf(args),
    elapsedMs: Math.round(input.elapsedMs),
    published,
    queueFull: producers.queueFull,
    delivered: receiver.delivered,
    duplicates: receiver.duplicates,
    duplicateRequests: receiver.duplicateRequests,
    deadLettered: stats.deadLetteredValues,
    deadLetteredButDelivered: input.deadLetteredButDelivered,
    pending: stats.pending + stats.claimed,
    lost,
    requests: stats.requests,
    recordsPerRequest: ratio(receiver.delivered, stats.requests),
    requestReduction: ratio(published, stats.requests),
    retries: stats.retries,
    injectedFailures: receiver.injected,
    latencyMs: input.latency,
    signatureFailures: receiver.signatureFailures,
    orderViolations: receiver.orderViolations,
    misrouted: receiver.misrouted,
    customersReached: receiver.customers,
    ok: lost === 0 && receiver.orderViolations === 0 && receiver.signatureFailures === 0 && receiver.misrouted === 0,
  };
}

function settingsOf(args: DemoArgs): DemoSummary['settings'] {
  const { customers, rate, lingerMs, durationSeconds, failRate, producers } = args;
  return { customers, rate, lingerMs, durationSeconds, failRate, producers };
}

function ratio(a: number, b: number): number {
  return b === 0 ? 0 : Math.round((a / b) * 10) / 10;
}

/** The summary as text for people. */
export function formatSummary(s: DemoSummary): string {
  return [...header(s), '', ...records(s), '', ...requests(s), '', ...latency(s.latencyMs), '', ...checks(s), '', verdict(s), ''].join('\n');
}

function header(s: DemoSummary): string[] {
  const t = s.settings;
  const backend = s.backend === 'memory' ? 'in-memory queue' : 'Redis queue';
  return [
    `duebatch demo: ${count(t.customers)} customers, ${count(t.rate)} records/s for ${count(t.durationSeconds, 1)} s ` +
      `from ${t.producers} producers, linger ${count(t.lingerMs)} ms, fail rate ${count(t.failRate * 100, 1)}%, ${backend}`,
    `finished in ${count(s.elapsedMs / 1000, 1)} s`,
  ];
}

function records(s: DemoSummary): string[] {
  const butDelivered = s.deadLetteredButDelivered > 0 ? `${count(s.deadLetteredButDelivered)} of them had arrived anyway` : '';
  return [
    'Records',
    row('published', s.published, s.queueFull > 0 ? `(${count(s.queueFull)} more refused: queue full)` : ''),
    row('delivered', s.delivered, `to ${count(s.customersReached)} customers, each counted once`),
    row('duplicates', s.duplicates, 'redelivered after a lost response, ignored by webhook-id'),
    row('dead-lettered', s.deadLettered, butDelivered),
    ...(s.pending > 0 ? [row('still pending', s.pending, 'close timed out')] : []),
    row('lost', s.lost, 'neither delivered nor dead-lettered'),
  ];
}

function requests(s: DemoSummary): string[] {
  const f = s.injectedFailures;
  const injected = f.serverErrors + f.rateLimited + f.resets;
  return [
    'Requests',
    row('made', s.requests, `retries included: ${count(s.requestReduction, 1)}× fewer than one request per record`),
    row('one per record', s.published, 'what sending each record on its own would have made'),
    row('records/request', count(s.recordsPerRequest, 1), ''),
    row('retries', s.retries, injected > 0 ? `after ${count(f.serverErrors)} × 500, ${count(f.rateLimited)} × 429, ${count(f.resets)} resets` : ''),
  ];
}

const BAR_WIDTH = 30;

function latency(l: LatencyReport): string[] {
  const widest = Math.max(1, ...l.buckets.map((b) => b.count));
  const bars = l.buckets.map((b) => {
    const bar = '█'.repeat(b.count === 0 ? 0 : Math.max(1, Math.round((b.count / widest) * BAR_WIDTH)));
    const share = l.count === 0 ? 0 : (b.count / l.count) * 100;
    return `  ${bucketLabel(b).padStart(7)}  ${bar.padEnd(BAR_WIDTH)}  ${share.toFixed(1).padStart(5)}%  ${count(b.count)}`;
  });
  return [
    `Delivery latency, publish to receipt (${count(l.count)} records)`,
    `  p50 ${count(l.p50)} ms   p90 ${count(l.p90)} ms   p99 ${count(l.p99)} ms   max ${count(l.max)} ms`,
    ...bars,
  ];
}

function bucketLabel(b: LatencyBucket): string {
  return b.upToMs === null ? `>${msLabel(LATENCY_BUCKETS_MS.at(-1) ?? 0)}` : `≤${msLabel(b.upToMs)}`;
}

function msLabel(ms: number): string {
  return ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`;
}

function checks(s: DemoSummary): string[] {
  const mark = (n: number): string => (n === 0 ? '✓' : '✗');
  return [
    'Checks',
    row('lost', s.lost, mark(s.lost)),
    row('order violations', s.orderViolations, mark(s.orderViolations)),
    row('signature failures', s.signatureFailures, mark(s.signatureFailures)),
    row('misrouted', s.misrouted, mark(s.misrouted)),
  ];
}

function verdict(s: DemoSummary): string {
  if (!s.ok) return 'FAILED: see the checks above.';
  const forReplay = s.deadLettered - s.deadLetteredButDelivered;
  const deadLettered = forReplay > 0 ? `, ${count(forReplay)} are dead-lettered for replay` : '';
  return `OK: ${count(s.delivered)} of ${count(s.published)} records arrived${deadLettered}; none lost, each customer's in order, all signed.`;
}

function row(label: string, value: number | string, note: string): string {
  const text = typeof value === 'number' ? count(value) : value;
  return `  ${label.padEnd(19)}${text.padStart(10)}${note === '' ? '' : `   ${note}`}`;
}
