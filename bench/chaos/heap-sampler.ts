/**
 * The heap's high-water mark during a run: `process.memoryUsage().heapUsed` sampled every
 * 250 ms. Garbage not yet collected counts too, so the figure is an upper bound of what the run
 * kept alive, and a peak between two samples can be missed.
 */

/** What the sampler saw. */
export interface HeapReport {
  /** Heap in use when sampling started. */
  baselineBytes: number;
  /** The largest sample. */
  highWaterBytes: number;
  samples: number;
}

/** A running sampler. */
export interface HeapSampler {
  /** Takes a last sample, stops, and reports (the same report on later calls). */
  stop(): HeapReport;
}

/** Starts sampling; the timer does not keep the process alive. */
export function startHeapSampler(intervalMs = 250): HeapSampler {
  const baselineBytes = process.memoryUsage().heapUsed;
  let highWaterBytes = baselineBytes;
  let samples = 1;
  const sample = (): void => {
    highWaterBytes = Math.max(highWaterBytes, process.memoryUsage().heapUsed);
    samples++;
  };
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  let report: HeapReport | undefined;
  return {
    stop() {
      if (report === undefined) {
        clearInterval(timer);
        sample();
        report = { baselineBytes, highWaterBytes, samples };
      }
      return report;
    },
  };
}

/** Bytes as megabytes for people: `12.3 MB`. */
export function formatMegabytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}
