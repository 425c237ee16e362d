/**
 * Watches what the queue holds (pending plus claimed) during the load scenario: its high-water
 * mark, and the moment it falls back under a low-water mark once the receiver is up again.
 */
import type { ChaosClient } from './client.js';

/** A running watch. */
export interface BacklogWatch {
  /** The most values the queue was seen holding. */
  readonly highWater: number;
  /**
   * Resolves once the queue holds at most `limit` values, with the milliseconds that took; or
   * `undefined` when `timeoutMs` passed first.
   */
  waitUntilAtMost(limit: number, timeoutMs: number): Promise<number | undefined>;
  stop(): void;
}

/** Samples `client.stats()` every `intervalMs` (a sample in progress is never doubled up). */
export function watchBacklog(client: ChaosClient, intervalMs = 100): BacklogWatch {
  let highWater = 0;
  let held = 0;
  let sampling = false;
  const listeners = new Set<() => void>();
  const timer = setInterval(() => {
    if (sampling) return;
    sampling = true;
    // stats() is synchronous in memory; written to take a promise too.
    void Promise.resolve()
      .then(() => client.stats())
      .then((stats) => {
        held = stats.pending + stats.claimed;
        highWater = Math.max(highWater, held);
        for (const listener of listeners) listener();
      })
      .catch(() => undefined) // a failed sample (a Redis blip) only costs this one
      .finally(() => (sampling = false));
  }, intervalMs);
  return {
    get highWater() {
      return highWater;
    },
    waitUntilAtMost(limit, timeoutMs) {
      const started = performance.now();
      return new Promise((resolve) => {
        const done = (result: number | undefined): void => {
          listeners.delete(check);
          clearTimeout(deadline);
          resolve(result);
        };
        const check = (): void => {
          if (held <= limit) done(performance.now() - started);
        };
        const deadline = setTimeout(() => done(undefined), timeoutMs);
        listeners.add(check);
      });
    },
    stop() {
      clearInterval(timer);
    },
  };
}
