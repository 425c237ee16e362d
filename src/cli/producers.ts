/**
 * The demo's producers: timer loops that share the publish rate, each publishing records to
 * random customers, every customer's records numbered in publish order.
 */
import { QueueFullError } from '../errors.js';

/** One record: its customer, its place in the customer's sequence, and when it was published. */
export interface DemoRecord {
  customer: string;
  /** 0, 1, 2, … per customer, over all producers: the receiver checks they arrive in this order. */
  seq: number;
  /** `Date.now()` at publish: the receiver's latency is its own `Date.now()` minus this. */
  at: number;
}

/** Options of {@link startProducers}. */
export interface ProducerOptions {
  /** Publishes one record; a Redis queue returns a promise. */
  publish(customer: string, record: DemoRecord): void | Promise<void>;
  /** Producer loops sharing the rate. */
  producers: number;
  /** Records per second, over all producers. */
  rate: number;
  /** Customers `customer-0` … `customer-<n-1>`. */
  customers: number;
  durationMs: number;
  /** How often each loop publishes what is due. @default 10 */
  tickMs?: number;
  /** Uniform in [0, 1). @default Math.random */
  random?: () => number;
}

/** What the producers counted. */
export interface ProducerCounts {
  /** Records the queue accepted. */
  published: number;
  /** Publishes refused with `QueueFullError` (the queue is bounded): not published, not lost. */
  queueFull: number;
}

/** Running producers. */
export interface Producers {
  counts(): ProducerCounts;
  /**
   * Resolves once every loop has stopped (the duration is over, or `stop()`) and every publish
   * has settled. Rejects with the first publish error other than `QueueFullError`.
   */
  readonly finished: Promise<void>;
  /** Stops publishing now (Ctrl-C). */
  stop(): void;
}

/** Starts the producer loops. */
export function startProducers(options: ProducerOptions): Producers {
  return new ProducerGroup(options).start();
}

class ProducerGroup implements Producers {
  readonly finished: Promise<void>;
  readonly #o: Required<ProducerOptions>;
  readonly #nextSeq = new Map<string, number>();
  readonly #counts: ProducerCounts = { published: 0, queueFull: 0 };
  /** Publishes of a Redis queue still on their way. */
  readonly #pending = new Set<Promise<void>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #failure: { error: unknown } | undefined;
  #markStopped!: () => void;

  constructor(options: ProducerOptions) {
    this.#o = { tickMs: 10, random: Math.random, ...options };
    const stopped = new Promise<void>((resolve) => (this.#markStopped = resolve));
    this.finished = stopped.then(async () => {
      await Promise.all(this.#pending);
      if (this.#failure !== undefined) throw this.#failure.error;
    });
  }

  start(): this {
    const started = performance.now();
    const perLoop = this.#o.rate / this.#o.producers;
    for (let i = 0; i < this.#o.producers; i++) this.#startLoop(started, perLoop);
    return this;
  }

  counts(): ProducerCounts {
    return { ...this.#counts };
  }

  stop(): void {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers.clear();
    this.#markStopped();
  }

  #startLoop(started: number, perLoop: number): void {
    const { durationMs, tickMs } = this.#o;
    let sent = 0;
    const timer = setInterval(() => {
      // What is due follows from the time elapsed, not from the ticks counted, so a late timer
      // catches up and the rate holds.
      const elapsed = Math.min(performance.now() - started, durationMs);
      const due = Math.floor((perLoop * elapsed) / 1000);
      for (; sent < due && this.#timers.has(timer); sent++) this.#publishOne();
      if (elapsed < durationMs) return;
      clearInterval(timer);
      this.#timers.delete(timer);
      if (this.#timers.size === 0) this.#markStopped();
    }, tickMs);
    this.#timers.add(timer);
  }

  #publishOne(): void {
    const customer = `customer-${Math.floor(this.#o.random() * this.#o.customers)}`;
    const seq = this.#nextSeq.get(customer) ?? 0;
    this.#nextSeq.set(customer, seq + 1);
    try {
      const result = this.#o.publish(customer, { customer, seq, at: Date.now() });
      if (!(result instanceof Promise)) this.#counts.published++;
      else this.#track(result.then(() => void this.#counts.published++, (error: unknown) => this.#failed(error)));
    } catch (error) {
      this.#failed(error);
    }
  }

  #failed(error: unknown): void {
    if (error instanceof QueueFullError) {
      this.#counts.queueFull++;
      return;
    }
    this.#failure ??= { error };
    this.stop();
  }

  #track(promise: Promise<void>): void {
    const tracked = promise.finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }
}
