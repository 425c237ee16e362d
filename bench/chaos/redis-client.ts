/**
 * The chaos run's client on Redis: the harness publishes to the Redis queue itself, and the
 * dispatcher processes deliver from it. `stats()` adds the processes' counters to the queue's
 * counts (read from Redis every `COUNTS_EVERY_MS`). `close()` refuses further publishes, waits
 * until the queue holds nothing (pending and claimed 0, read from Redis; bounded by the close
 * timeout), stops the processes, and reads the final counts.
 *
 * The dead letters the processes reported are emitted once, per batch id, at the end of
 * `close()`: by then the receiver's books are final, so a letter is checked against everything
 * the receiver accepted (a batch can be dead-lettered by one process, lose its ack to a Redis
 * outage, and come back to another).
 */
import { EventEmitter } from 'node:events';
import type { CloseOptions, DispatcherStats } from '../../src/dispatch/dispatcher-events.js';
import type { DeadLetter } from '../../src/dispatch/dead-letters.js';
import type { QueueCounts } from '../../src/queue/batch-source.js';
import type { RedisTimeSortedQueue } from '../../src/redis/redis-time-sorted-queue.js';
import type { ChaosClient, ChaosEvents } from './client.js';
import type { DispatcherPool } from './dispatcher-pool.js';
import type { WireDeadLetter } from './dispatcher-protocol.js';
import type { ChaosRecord } from './records.js';

const COUNTS_EVERY_MS = 250;
const DRAIN_POLL_MS = 100;
// How long the processes get to close after SIGTERM before they are killed.
const STOP_TIMEOUT_MS = 10_000;
const NO_LATENCY = { count: 0, p50: 0, p90: 0, p99: 0, max: 0 };

/** A {@link ChaosClient} over a Redis queue and the dispatcher processes delivering from it. */
export class RedisChaosClient implements ChaosClient {
  readonly #queue: RedisTimeSortedQueue<string, ChaosRecord>;
  readonly #pool: DispatcherPool;
  readonly #events = new EventEmitter<ChaosEvents>();
  readonly #poller: NodeJS.Timeout;
  #counts: QueueCounts = { pending: 0, claimed: 0, keys: 0 };
  #polling = false;
  /** The final counts are read: a sample still on its way must not overwrite them. */
  #final = false;
  #closed: Promise<void> | undefined;

  constructor(queue: RedisTimeSortedQueue<string, ChaosRecord>, pool: DispatcherPool) {
    this.#queue = queue;
    this.#pool = pool;
    this.#poller = setInterval(() => void this.#poll(), COUNTS_EVERY_MS);
  }

  publish(customer: string, record: ChaosRecord): Promise<void> {
    return this.#queue.publish(customer, record);
  }

  on<E extends keyof ChaosEvents>(event: E, listener: (...args: ChaosEvents[E]) => void): this {
    this.#events.on(event, listener as never);
    return this;
  }

  /** Reports an error of the backend (a process's `error` event, a process that died) to the `error` listeners. */
  reportError(message: string): void {
    if (this.#events.listenerCount('error') > 0) this.#events.emit('error', new Error(message));
  }

  stats(): DispatcherStats {
    const { pending, claimed, keys } = this.#counts;
    return { pending, pendingKeys: keys, claimed, inFlight: 0, ...this.#pool.counters(), pausedKeys: 0, latency: NO_LATENCY };
  }

  close(options: CloseOptions = {}): Promise<void> {
    this.#closed ??= this.#close(options.timeoutMs ?? 30_000);
    return this.#closed;
  }

  async #close(timeoutMs: number): Promise<void> {
    await this.#queue.close();
    await this.#drain(timeoutMs);
    clearInterval(this.#poller);
    await this.#pool.stop(STOP_TIMEOUT_MS);
    this.#final = true;
    this.#counts = await this.#queue.counts();
    for (const letter of this.#pool.deadLetters()) this.#events.emit('deadLetter', toDeadLetter(letter));
  }

  /** Waits until Redis holds nothing of the queue, or `timeoutMs` passed (what is left is reported as pending). */
  async #drain(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      try {
        this.#counts = await this.#queue.counts();
        if (this.#counts.pending + this.#counts.claimed === 0) return;
      } catch {
        // Redis unreachable for a moment: ask again.
      }
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const counts = await this.#queue.counts();
      if (!this.#final) this.#counts = counts;
    } catch {
      // Redis down (on purpose): the last counts stand.
    } finally {
      this.#polling = false;
    }
  }
}

function toDeadLetter(letter: WireDeadLetter): DeadLetter<string, ChaosRecord> {
  return { ...letter, reason: { ...letter.reason } };
}
