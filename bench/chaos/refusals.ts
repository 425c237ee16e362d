/**
 * Publishes the Redis queue refused, which are neither published nor lost: `ERR_STORE` (Redis
 * down or unreachable: the run kills it on purpose) and `ERR_SERIALIZE` (the codec cannot encode
 * the record: the unserializable marks, which in memory reach the dispatcher instead).
 *
 * A publish rejected with `ERR_STORE` may have been stored all the same: the script ran (and with
 * `appendfsync always` reached the AOF) and then the connection died before the reply came. Such
 * a record is delivered (or dead-lettered) like any other, yet the producer counted it refused.
 * The log remembers every record refused that way and counts those that show up anyway, so that
 * the lost formula can take them back out of delivered and dead-lettered:
 *
 *   lost = published − delivered − dead-lettered − pending + arrived though refused
 */
import type { DemoRecord } from '../../src/cli/producers.js';

/** What the log counted, in records. */
export interface RefusalCounts {
  /** Rejected with `ERR_STORE`. */
  storeDown: number;
  /** Rejected with `ERR_SERIALIZE`: nothing was sent. */
  cannotEncode: number;
  /** Of the `storeDown` ones, those that reached the receiver or the dead-letter path anyway. */
  arrivedAnyway: number;
}

/** No refusals: the in-memory queue refuses nothing but a full queue. */
export const NO_REFUSALS: RefusalCounts = { storeDown: 0, cannotEncode: 0, arrivedAnyway: 0 };

/** The duebatch error codes a refusal is counted for. */
const REFUSAL_CODES = { ERR_STORE: 'storeDown', ERR_SERIALIZE: 'cannotEncode' } as const;

const recordId = (record: DemoRecord): string => `${record.customer}#${record.seq}`;

/** Counts refused publishes, and the refused records that arrive anyway. */
export class RefusalLog {
  readonly #counts = { ...NO_REFUSALS };
  /** Records refused with ERR_STORE that have not shown up (yet). */
  readonly #refused = new Set<string>();

  /**
   * Wraps `publish`: a rejection with one of the refusal codes is counted and swallowed (the
   * publish resolves), any other result passes through. The producers count a swallowed one as
   * published, so the report takes {@link RefusalCounts} back off their count.
   */
  wrap<R extends DemoRecord>(publish: (customer: string, record: R) => void | Promise<void>): (customer: string, record: R) => void | Promise<void> {
    return (customer, record) => {
      const result = publish(customer, record);
      if (!(result instanceof Promise)) return result;
      return result.catch((error: unknown) => {
        const code = (error as { code?: unknown } | null)?.code;
        const kind = typeof code === 'string' ? REFUSAL_CODES[code as keyof typeof REFUSAL_CODES] : undefined;
        if (kind === undefined) throw error;
        this.#counts[kind]++;
        if (kind === 'storeDown') this.#refused.add(recordId(record));
      });
    };
  }

  /** Records that reached the receiver (first time their request came) or the dead-letter path unaccepted. */
  arrived(records: readonly DemoRecord[]): void {
    if (this.#refused.size === 0) return;
    for (const record of records) if (this.#refused.delete(recordId(record))) this.#counts.arrivedAnyway++;
  }

  /** Refused publishes in all. */
  get total(): number {
    return this.#counts.storeDown + this.#counts.cannotEncode;
  }

  counts(): RefusalCounts {
    return { ...this.#counts };
  }
}
