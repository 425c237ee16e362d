/**
 * Injects the backend's own failures (see `BackendFault`) now and then during a run: one at a
 * time, each after a seeded wait, never two overlapping. They come in rounds: every kind once
 * per round, in a seeded order, so that a short run meets each kind as soon as it has had as
 * many faults as there are kinds. In memory there are none and this does nothing.
 */
import type { BackendFault } from './client.js';
import type { Random } from './random.js';

/** Options of {@link startBackendFaults}. */
export interface BackendFaultOptions {
  faults: readonly BackendFault[];
  random: Random;
  /** The wait before each fault is uniform in [min, max) ms. */
  everyMs: readonly [min: number, max: number];
  /** Told about a fault that failed to inject; the run goes on. */
  onError(error: unknown): void;
}

/** Running injections. */
export interface BackendFaultInjector {
  /** Stops injecting, waits for a fault in progress to finish, and returns how many of each were injected. */
  stop(): Promise<Record<string, number>>;
}

/** Starts injecting. */
export function startBackendFaults(options: BackendFaultOptions): BackendFaultInjector {
  const counts: Record<string, number> = {};
  let stopped = options.faults.length === 0;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let round: BackendFault[] = [];
  const draw = (): BackendFault | undefined => {
    if (round.length === 0) round = shuffled(options.faults, options.random);
    return round.pop();
  };
  const next = (): void => {
    if (stopped) return;
    const [min, max] = options.everyMs;
    timer = setTimeout(() => {
      const fault = draw();
      if (fault === undefined || stopped) return;
      current = fault
        .inject()
        .then(() => void (counts[fault.name] = (counts[fault.name] ?? 0) + 1), options.onError)
        .finally(next);
    }, min + options.random() * (max - min));
  };
  next();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
      return { ...counts };
    },
  };
}

/** A copy of `items` in a random order (Fisher-Yates). */
function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
