/**
 * The demo's progress while it runs: on a terminal one live line, redrawn in place; otherwise
 * (a pipe, a CI log) a plain line every two seconds.
 */
import { formatCount as count } from './format.js';

/** The figures one progress line shows. */
export interface ProgressSnapshot {
  phase: 'publishing' | 'delivering';
  elapsedMs: number;
  published: number;
  /** Unique records the receiver accepted. */
  delivered: number;
  /** Requests made, retries included. */
  requests: number;
  retries: number;
  /** p99 delivery latency so far, publish to receipt. */
  p99Ms: number;
}

/** Where the progress goes (stderr). */
export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Options of {@link startProgress}. */
export interface ProgressOptions {
  stream: ProgressStream;
  sample(): Promise<ProgressSnapshot>;
  /** @default 250 on a terminal, 2000 otherwise */
  intervalMs?: number;
}

/** Running progress output. */
export interface Progress {
  /** Stops, and on a terminal clears the live line so the summary starts on a clean one. */
  stop(): void;
}

const CLEAR_LINE = '\r\x1b[2K';

/** Starts writing progress. */
export function startProgress(options: ProgressOptions): Progress {
  const tty = options.stream.isTTY === true;
  let stopped = false;
  let sampling = false;
  const tick = async (): Promise<void> => {
    // stats() of a Redis queue is a round trip: skip a tick rather than pile samples up.
    if (sampling) return;
    sampling = true;
    try {
      const line = formatProgress(await options.sample());
      if (stopped) return;
      if (tty) options.stream.write(CLEAR_LINE + fitToWidth(line, options.stream.columns));
      else options.stream.write(`${line}\n`);
    } catch {
      // A failed sample only costs this line; the dispatcher reports store errors itself.
    } finally {
      sampling = false;
    }
  };
  const timer = setInterval(() => void tick(), options.intervalMs ?? (tty ? 250 : 2000));
  timer.unref();
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (tty) options.stream.write(CLEAR_LINE);
    },
  };
}

/** One progress line. */
export function formatProgress(s: ProgressSnapshot): string {
  const perRequest = s.requests === 0 ? '-' : (s.delivered / s.requests).toFixed(1);
  return [
    `${s.phase} ${(s.elapsedMs / 1000).toFixed(1)}s`,
    `published ${count(s.published)}`,
    `delivered ${count(s.delivered)}`,
    `requests ${count(s.requests)} (${perRequest} rec/req)`,
    `retries ${count(s.retries)}`,
    `p99 ${count(s.p99Ms)} ms`,
  ].join(' | ');
}

function fitToWidth(line: string, columns: number | undefined): string {
  // A line wider than the terminal wraps, and "\r" then redraws only its last row.
  // A terminal of unknown size (0 columns) gets the whole line.
  return columns !== undefined && columns > 0 && line.length >= columns ? line.slice(0, columns - 1) : line;
}
