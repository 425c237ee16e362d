/**
 * What the chaos harness and its dispatcher processes (`dispatcher-process.ts`) agree on: the
 * configuration a child reads from its environment, and the JSON lines it prints on stdout.
 */
import type { DeadLetterCode } from '../../src/dispatch/dead-letters.js';
import type { ChaosRetry } from './client.js';
import type { ChaosRecord } from './records.js';
import type { DispatcherStats } from '../../src/dispatch/dispatcher-events.js';

/** The environment variable holding a child's {@link DispatcherProcessConfig} as JSON. */
export const CONFIG_ENV = 'DUEBATCH_CHAOS_DISPATCHER';

/** How a dispatcher process is set up. */
export interface DispatcherProcessConfig {
  /** `dispatcher-1`, `dispatcher-2`, …: new ones for the replacements of killed ones. */
  name: string;
  redisUrl: string;
  prefix: string;
  /** The receiver's endpoints: a customer's is this plus the customer, URI-encoded. */
  hooksUrl: string;
  /** The `whsec_` secret the receiver verifies. */
  secret: string;
  lingerMs: number;
  maxPending: number;
  retry: ChaosRetry;
  /** The run's seed; the child's retry jitter is a stream of it named after the child. */
  seed: number;
  /** How often the child reports its counters. */
  statsEveryMs: number;
}

/** A dispatcher's counters (the figures of `Dispatcher.stats()` a harness can add up over processes). */
export type DispatcherCounters = Pick<
  DispatcherStats,
  'sentBatches' | 'sentValues' | 'requests' | 'retries' | 'deadLetteredBatches' | 'deadLetteredValues'
>;

/** A dead letter as it crosses the process boundary (the reason's `error` object stays behind). */
export interface WireDeadLetter {
  id: string;
  key: string;
  values: ChaosRecord[];
  attempts: number;
  reason: { code: DeadLetterCode; message: string; statusCode?: number };
  at: number;
}

/** A line a child prints, one JSON object per line. */
export type DispatcherMessage =
  /** Running and subscribed to the queue's wake announcements. */
  | { ready: string }
  /** A batch was handed to the dead-letter handler; the ack follows (and may fail: then it comes again, same id). */
  | { deadLetter: WireDeadLetter }
  /** A dead-lettered batch was acked: the dispatcher's `deadLetter` event, after which it counts it. */
  | { deadLettered: { id: string; values: number } }
  /** The counters, now and then. */
  | { counters: DispatcherCounters }
  /** An `error` event of the dispatcher (the store failing, typically). */
  | { error: string }
  /** Closed after SIGTERM: the final counters; the process exits next. */
  | { closed: DispatcherCounters };

/** The config from the environment; throws when it is missing. */
export function configFromEnv(): DispatcherProcessConfig {
  const text = process.env[CONFIG_ENV];
  if (text === undefined || text === '') throw new Error(`${CONFIG_ENV} is not set: this script is started by the chaos harness`);
  return JSON.parse(text) as DispatcherProcessConfig;
}

/** Reads one line a child printed; `undefined` for a line that is not a message (a stray log line). */
export function parseMessage(line: string): DispatcherMessage | undefined {
  try {
    const message = JSON.parse(line) as unknown;
    return typeof message === 'object' && message !== null ? (message as DispatcherMessage) : undefined;
  } catch {
    return undefined;
  }
}
