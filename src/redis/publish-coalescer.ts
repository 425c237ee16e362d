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
 * are waiting, then hands them to `flush` in one call. Flushes are not serialized: on one
 * connection Redis runs them in the order they were sent.
 */
export class Coalescer<E, R> {
  readonly #flush: FlushFn<E, R>;
  readonly #maxEntries: number;
  #waiting: Pending<E, R>[] = [];
  #scheduled: NodeJS.Immediate | undefined;
  readonly #inFlight = new Set<Promise<void>>();

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

  /** Sends what is waiting now, without waiting for the end of the tick. */
  flushNow(): void {
    if (this.#scheduled !== undefined) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    const group = this.#waiting;
    if (group.length === 0) return;
    this.#waiting = [];
    const done = this.#send(group);
    this.#inFlight.add(done);
    void done.finally(() => this.#inFlight.delete(done));
  }

  /** Sends what is waiting and resolves once every flush sent so far has settled. */
  async drain(): Promise<void> {
    this.flushNow();
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
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
