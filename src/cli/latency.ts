/**
 * Delivery latency of the demo's records, publish to receipt: percentiles from the library's
 * bounded log histogram, plus counts in a few coarse buckets for the summary's text histogram.
 */
import { LatencyHistogram } from '../dispatch/latency.js';

/** Upper bounds (ms) of the summary's buckets; a last bucket takes everything above. */
export const LATENCY_BUCKETS_MS: readonly number[] = [50, 100, 250, 500, 1000, 2500];

/** Records delivered within one bucket; `upToMs` is null for the last, open bucket. */
export interface LatencyBucket {
  upToMs: number | null;
  count: number;
}

/** Percentiles (ms, rounded) and the coarse buckets. */
export interface LatencyReport {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  buckets: LatencyBucket[];
}

/** Collects latencies in bounded memory, however many records the demo runs. */
export class DeliveryLatency {
  readonly #histogram = new LatencyHistogram();
  readonly #buckets = new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0);

  record(ms: number): void {
    this.#histogram.record(ms);
    const index = LATENCY_BUCKETS_MS.findIndex((bound) => ms <= bound);
    this.#buckets[index === -1 ? LATENCY_BUCKETS_MS.length : index]! += 1;
  }

  p99(): number {
    return Math.round(this.#histogram.quantile(0.99));
  }

  report(): LatencyReport {
    const { count, p50, p90, p99, max } = this.#histogram.summary();
    return {
      count,
      p50: Math.round(p50),
      p90: Math.round(p90),
      p99: Math.round(p99),
      max: Math.round(max),
      buckets: this.#buckets.map((n, i) => ({ upToMs: LATENCY_BUCKETS_MS[i] ?? null, count: n })),
    };
  }
}
