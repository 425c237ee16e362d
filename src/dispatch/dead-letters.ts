/** Batches that could not be delivered, and why. */

/** Why a batch was dead-lettered. */
export type DeadLetterCode =
  /** The endpoint answered a status that is not retried (e.g. 400, 401, 404, 422). */
  | 'rejected'
  /** Retryable failures until the retry policy gave up (`maxAttempts`). */
  | 'exhausted'
  /** `endpoint(key)` failed or gave no http(s) URL. */
  | 'invalid-endpoint'
  /** The values could not be serialized. */
  | 'serialize'
  /** A single value is larger than `maxBodyBytes`. */
  | 'too-large'
  /** `close()` ran out of time before the batch could be delivered. */
  | 'shutdown';

/** Why a batch was dead-lettered, with what is known of the last failure. */
export interface DeadLetterReason {
  code: DeadLetterCode;
  /** Human-readable detail. */
  message: string;
  /** Status of the last response, when there was one. */
  statusCode?: number;
  /** The last error (a duebatch error with its own `code`), when there was one. */
  error?: Error;
}

/** A batch handed to the dead-letter path. */
export interface DeadLetter<K, V> {
  /** The batch id (the `webhook-id` it was sent with). */
  id: string;
  key: K;
  values: V[];
  /** Delivery attempts made. */
  attempts: number;
  reason: DeadLetterReason;
  /** Wall-clock time of the decision (ms since the epoch). */
  at: number;
}

/** Dead letters kept in memory when no `onDeadLetter` handler is given, up to a bound. */
export class DeadLetterList<K, V> {
  readonly #letters: DeadLetter<K, V>[] = [];

  constructor(readonly limit: number) {}

  /** Keeps `letter`; false when the list is full (the caller must then keep the batch queued). */
  add(letter: DeadLetter<K, V>): boolean {
    if (this.#letters.length >= this.limit) return false;
    this.#letters.push(letter);
    return true;
  }

  /** The kept letters, oldest first (a copy). */
  list(): DeadLetter<K, V>[] {
    return [...this.#letters];
  }

  /** Removes and returns the kept letters, oldest first (to replay or store them elsewhere). */
  take(): DeadLetter<K, V>[] {
    return this.#letters.splice(0, this.#letters.length);
  }

  get size(): number {
    return this.#letters.length;
  }
}
