/**
 * What the multi-process test and its child processes agree on: the record a producer
 * publishes, the environment a child reads, and the JSON lines a child prints on stdout.
 */

/** One published record. `(producer, seq)` names it; `customer` is the key it went to. */
export interface TestRecord {
  producer: number;
  seq: number;
  customer: string;
}

/** A line a child prints on stdout, one JSON object per line. */
export type ChildMessage =
  /** A dispatcher is running and subscribed to the queue's wake announcements. */
  | { ready: string }
  /** A producer has stored every record it published (each publish promise resolved). */
  | { published: number }
  /** A dispatcher closed (after SIGTERM or the end of its stdin); its counters. */
  | { stats: { sentBatches: number; sentValues: number; requests: number; retries: number; deadLetteredValues: number } };

/** The environment variable holding the queue's key prefix. */
export const PREFIX_ENV = 'DUEBATCH_TEST_PREFIX';

/** The queue's key prefix, from the environment. */
export function prefixFromEnv(): string {
  const prefix = process.env[PREFIX_ENV];
  if (prefix === undefined || prefix === '') throw new Error(`${PREFIX_ENV} is not set`);
  return prefix;
}

/** Prints one message as a JSON line on stdout. */
export function tell(message: ChildMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}
