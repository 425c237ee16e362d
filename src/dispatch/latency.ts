/**
 * Delivery latency percentiles in bounded memory: a log-scaled histogram (about 3% relative
 * error) instead of keeping every sample.
 */

/** Buckets per doubling: 24 gives bucket bounds about 3% apart. */
const STEPS = 24;
/** Up to 2^40 ms (about 35 years): more than any latency. */
const BUCKETS = STEPS * 40 + 1;

/** Latency percentiles in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** A histogram of millisecond samples. */
export class LatencyHistogram {
  readonly #counts = new Float64Array(BUCKETS);
  #count = 0;
  #max = 0;

  /** Adds one sample (negative samples count as 0). */
  record(ms: number): void {
    const value = Math.max(0, ms);
    this.#counts[bucketOf(value)]! += 1;
    this.#count++;
    if (value > this.#max) this.#max = value;
  }

  /** The sample value below which a share `q` (0..1) of the samples fall (upper bound of its bucket). */
  quantile(q: number): number {
    if (this.#count === 0) return 0;
    const rank = Math.ceil(q * this.#count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.#counts[i] ?? 0;
      if (seen >= rank) return Math.min(upperBound(i), this.#max);
    }
    return this.#max;
  }

  summary(): LatencySummary {
    return { count: this.#count, p50: this.quantile(0.5), p90: this.quantile(0.9), p99: this.quantile(0.99), max: this.#max };
  }
}

function bucketOf(ms: number): number {
  if (ms < 1) return 0;
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log2(ms) * STEPS));
}

function upperBound(bucket: number): number {
  return bucket === 0 ? 1 : 2 ** (bucket / STEPS);
}
