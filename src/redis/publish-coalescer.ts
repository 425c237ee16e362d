/**
 * Coalescing: calls made in one tick are collected and sent as one script call (per shard),
 * with variadic arguments, instead of one round trip each. Each caller still gets its own
 * promise: the script answers per entry, and a call that fails as a whole (connection lost,
 * script error) rejects every entry it carried. One script call is atomic, so a failed flush
 * wrote nothing, and a successful one wrote exactly the entries it reports as done.
 */

interface Pending<E, R> {
  entry: E;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/** Sends a group of entries; resolves with one result per entry, in order. */
export type FlushFn<E, R> = (entries: E[]) => Promise<R[]>;

/**
 * Collects entries until the end of the current tick (`setImmediate`), or until `maxEntries`
 * are waiting, then hands them to `flush` in one call.
 *
 * One flush is in flight at a time; entries that arrive meanwhile go out, `maxEntries` at a
 * time, as soon as it settles. Why: with several calls in flight, one that must be sent again
 * (`EVAL` after `NOSCRIPT`, when a Redis restart emptied the script cache) runs after calls sent
 * later, and a key's values would be stored out of publish order. Throughput does not suffer:
 * while a flush is out, the next group grows.
 */
export class Coalescer<E, R> {
  readonly #flush: FlushFn<E, R>;
  readonly #maxEntries: number;
  #waiting: Pending<E, R>[] = [];
  #scheduled: NodeJS.Immediate | undefined;
  #sending: Promise<void> | undefined;

  constructor(flush: FlushFn<E, R>, maxEntries: number) {
    this.#flush = flush;
    this.#maxEntries = maxEntries;
  }

  /** Queues `entry` for the next flush; resolves with its result. */
  add(entry: E): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ entry, resolve, reject });
      if (this.#waiting.length >= this.#maxEntries) this.flushNow();
      else this.#scheduled ??= setImmediate(() => this.flushNow());
    });
  }

  /** Sends what is waiting now (after the flush in flight, if any), without waiting for the end of the tick. */
  flushNow(): void {
    if (this.#scheduled !== undefined) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    if (this.#sending !== undefined || this.#waiting.length === 0) return;
    const group = this.#waiting.splice(0, this.#maxEntries);
    this.#sending = this.#send(group).finally(() => {
      this.#sending = undefined;
      this.flushNow();
    });
  }

  /** Sends what is waiting and resolves once all of it has settled. */
  async drain(): Promise<void> {
    this.flushNow();
    while (this.#sending !== undefined) await this.#sending;
  }

  async #send(group: Pending<E, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.#flush(group.map((p) => p.entry));
    } catch (error) {
      for (const p of group) p.reject(error);
      return;
    }
    group.forEach((p, i) => p.resolve(results[i] as R));
  }
}
