/**
 * The load & memory scenario. Producers publish padded records at a steady rate for the
 * duration; after a fifth of it the receiver goes down (503 to everything) for two fifths, so
 * the queue fills up to `maxPending` and further publishes fail with `QueueFullError` (counted,
 * not lost); then it comes back and the backlog must drain (to a quarter of `maxPending`) while
 * the producers go on. The report adds three checks: the queue filled to exactly `maxPending`
 * and refused publishes, the backlog drained, and the live heap at the end of the outage (the
 * queue full longest) stayed within the bound of `memory-bound.ts`.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { formatCount as count } from '../../src/cli/format.js';
import { watchBacklog } from './backlog-watch.js';
import type { BackendName, ChaosRetry } from './client.js';
import { NO_FAULTS } from './faults.js';
import { formatMegabytes } from './heap-sampler.js';
import { liveHeapBytes } from './live-heap.js';
import { heapBound } from './memory-bound.js';
import type { ChaosReport, Check } from './report.js';
import { openSession, type ChaosIO } from './session.js';

/** Options of {@link runLoad}. */
export interface LoadOptions {
  backend: BackendName;
  seed: number;
  /** The receiver is up for the first fifth, down for the next two fifths, up for the rest. The outage must see more than `maxPending` publishes. */
  durationSeconds: number;
  customers: number;
  rate: number;
  lingerMs: number;
  maxPending: number;
  /** Padding per record, in bytes. */
  recordBytes: number;
}

/**
 * No attempt limit worth the name: a batch waits out the outage instead of being dead-lettered,
 * retrying at least once a second, so it goes out within a second of the receiver's return.
 */
export const LOAD_RETRY: ChaosRetry = { maxAttempts: 1_000_000, minDelayMs: 100, maxDelayMs: 1_000 };

/** The receiver goes down at this share of the duration… */
export const DOWN_FROM = 0.2;
/** …for this share of it. */
export const OUTAGE_SHARE = 0.4;
// Once the receiver is back, the backlog must fall under this share of maxPending.
const DRAINED_SHARE = 0.25;
// How long past the end of the duration the backlog may take to drain before the check fails.
const DRAIN_GRACE_MS = 30_000;

/** Runs the load & memory scenario and reports. */
export async function runLoad(options: LoadOptions, io: ChaosIO = {}): Promise<ChaosReport> {
  const durationMs = options.durationSeconds * 1000;
  const { backend, seed, durationSeconds, customers, rate, lingerMs, maxPending } = options;
  const liveBaselineBytes = liveHeapBytes();
  const session = await openSession({
    settings: { scenario: 'load', backend, seed, durationSeconds, customers, rate, lingerMs, maxPending },
    faults: NO_FAULTS,
    marks: { poisonRate: 0, unserializableRate: 0, padBytes: options.recordBytes },
    retry: LOAD_RETRY,
    publishMs: durationMs,
    io,
  });
  const watch = watchBacklog(session.client);
  let drainedInMs: number | undefined;
  let liveAtFullBytes = 0;
  try {
    await delay(durationMs * DOWN_FROM);
    session.receiver.setDown(true);
    await delay(durationMs * OUTAGE_SHARE);
    liveAtFullBytes = liveHeapBytes();
    session.receiver.setDown(false);
    const rest = durationMs * (1 - DOWN_FROM - OUTAGE_SHARE);
    drainedInMs = await watch.waitUntilAtMost(maxPending * DRAINED_SHARE, rest + DRAIN_GRACE_MS);
  } catch (error) {
    // Still close and free everything; the first error is the one to see.
    session.producers.stop();
    await session.finish().catch(() => undefined);
    throw error;
  } finally {
    watch.stop();
  }
  // The producers go on to the end of the duration: the backlog drained while they published.
  return session.finish(() => [
    filledCheck(options.maxPending, watch.highWater, session.producers.counts().queueFull),
    drainedCheck(options.maxPending, drainedInMs),
    heapCheck(options, liveBaselineBytes, liveAtFullBytes),
  ]);
}

function filledCheck(maxPending: number, highWater: number, queueFull: number): Check {
  return {
    name: 'filled to maxPending',
    ok: highWater === maxPending && queueFull > 0,
    value: count(highWater),
    detail: `most held, of maxPending ${count(maxPending)}; then ${count(queueFull)} publishes refused`,
  };
}

function drainedCheck(maxPending: number, drainedInMs: number | undefined): Check {
  const limit = count(maxPending * DRAINED_SHARE);
  return {
    name: 'backlog drained',
    ok: drainedInMs !== undefined,
    value: drainedInMs === undefined ? 'never' : `${count(drainedInMs)} ms`,
    detail: `after the receiver returned, to ${limit} held or fewer`,
  };
}

function heapCheck(o: LoadOptions, baselineBytes: number, liveAtFullBytes: number): Check {
  const bound = heapBound({ baselineBytes, maxPending: o.maxPending, recordBytes: o.recordBytes });
  return {
    name: 'live heap within bound',
    ok: liveAtFullBytes <= bound,
    value: formatMegabytes(liveAtFullBytes),
    detail: `queue full, after a full GC; bound ${formatMegabytes(bound)} = ${formatMegabytes(baselineBytes)} before the run + maxPending × record × factor (memory-bound.ts)`,
  };
}
