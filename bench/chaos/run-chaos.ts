/**
 * The chaos scenario: producers publish to many customers at a steady rate for the duration,
 * the receiver fails about one request in ten in every way it knows (see `faults.ts`), a few
 * records are poison (refused with 400) or cannot be serialized; then the client closes and the
 * report counts what was published, delivered, delivered twice, dead-lettered and lost.
 */
import type { ChaosRetry, BackendName } from './client.js';
import { DEFAULT_FAULT_RATES, type FaultRates } from './faults.js';
import type { RecordMarks } from './records.js';
import type { ChaosReport } from './report.js';
import { openSession, type ChaosIO } from './session.js';

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  backend: BackendName;
  seed: number;
  durationSeconds: number;
  customers: number;
  /** Records per second, over all producers. */
  rate: number;
  lingerMs: number;
  /** @default DEFAULT_FAULT_RATES */
  faults?: FaultRates;
  /** @default CHAOS_MARKS */
  marks?: RecordMarks;
  /** Redis: the server to use; `undefined` (the default) starts a redis-server of the run's own, which the run may restart and pause. */
  redisUrl?: string | undefined;
  /** The wait before each backend fault (Redis), uniform in [min, max) ms. @default [2_000, 8_000] */
  backendFaultEveryMs?: readonly [min: number, max: number] | undefined;
}

/** One record in a thousand is poison, one in two thousand cannot be serialized. */
export const CHAOS_MARKS: RecordMarks = { poisonRate: 0.001, unserializableRate: 0.0005, padBytes: 0 };

/**
 * Backoff from 100 ms up to 2 s (a 429's `Retry-After: 1` is honoured within that), 8 attempts:
 * with about 8% of requests failing (slow accepts succeed), a batch exhausts its attempts about
 * once in 10^9, so `exhausted` dead letters are rare but possible.
 */
export const CHAOS_RETRY: ChaosRetry = { maxAttempts: 8, minDelayMs: 100, maxDelayMs: 2_000 };

// Far above what the run holds (about rate × (linger + backoff)): the chaos run is not about a full queue.
const CHAOS_MAX_PENDING = 1_000_000;

/** Runs the chaos scenario and reports. */
export async function runChaos(options: ChaosOptions, io: ChaosIO = {}): Promise<ChaosReport> {
  const session = await openSession({
    settings: { scenario: 'chaos', maxPending: CHAOS_MAX_PENDING, ...pickSettings(options) },
    faults: options.faults ?? DEFAULT_FAULT_RATES,
    marks: options.marks ?? CHAOS_MARKS,
    retry: CHAOS_RETRY,
    publishMs: options.durationSeconds * 1000,
    io,
    redisUrl: options.redisUrl,
    backendFaultEveryMs: options.backendFaultEveryMs,
  });
  return session.finish();
}

function pickSettings(o: ChaosOptions): Pick<ChaosOptions, 'backend' | 'seed' | 'durationSeconds' | 'customers' | 'rate' | 'lingerMs'> {
  const { backend, seed, durationSeconds, customers, rate, lingerMs } = o;
  return { backend, seed, durationSeconds, customers, rate, lingerMs };
}
