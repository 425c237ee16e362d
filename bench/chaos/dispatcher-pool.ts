/**
 * The dispatcher processes of a chaos run on Redis: a fixed number running, one killed with
 * SIGKILL now and then (the fault) and replaced, and one that dies on its own replaced too (and
 * reported). Their messages are gathered here: dead letters (once per batch id, whichever process
 * reported it, since a batch whose ack failed is dead-lettered again under the same id by the
 * next process to claim it) and the counters, summed over every process the run started.
 */
import { DispatcherChild } from './dispatcher-child.js';
import type { DispatcherCounters, DispatcherMessage, DispatcherProcessConfig, WireDeadLetter } from './dispatcher-protocol.js';
import type { Random } from './random.js';

/** Options of {@link DispatcherPool.start}. */
export interface DispatcherPoolOptions {
  /** Processes kept running. */
  size: number;
  /** The config of every process; each gets its own name. */
  config: Omit<DispatcherProcessConfig, 'name'>;
  /** How long a process may take to start (tsx compiles on the fly; a loaded machine is slow). */
  readyTimeoutMs: number;
  /** Told about an `error` event of a process, and about a process that died on its own. */
  onError(message: string): void;
}

/** Running dispatcher processes. */
export class DispatcherPool {
  readonly #o: DispatcherPoolOptions;
  /** Every process started, in order: the counters of the dead ones still count. */
  readonly #all: DispatcherChild[] = [];
  /** Dead letters handed to a handler, by batch id (the first report). */
  readonly #letters = new Map<string, WireDeadLetter>();
  /** Dead letters acked, by batch id: their values. */
  readonly #acked = new Map<string, number>();
  #closing = false;

  private constructor(options: DispatcherPoolOptions) {
    this.#o = options;
  }

  /** Starts `size` processes and waits until each is ready; on a failure stops those started and rethrows. */
  static async start(options: DispatcherPoolOptions): Promise<DispatcherPool> {
    const pool = new DispatcherPool(options);
    try {
      await Promise.all(Array.from({ length: options.size }, () => pool.#spawn()));
    } catch (error) {
      await pool.stop(0);
      throw error;
    }
    return pool;
  }

  /** The processes running now. */
  get running(): DispatcherChild[] {
    return this.#all.filter((child) => child.running && !child.endedOnPurpose);
  }

  /** SIGKILLs a running process (picked with `random`), waits `downMs`, and starts its replacement. Returns the victim's name. */
  async killOne(random: Random, downMs: number): Promise<string> {
    const running = this.running;
    const victim = running[Math.floor(random() * running.length)];
    if (victim === undefined) throw new Error('no dispatcher process is running');
    victim.kill('SIGKILL');
    await victim.exited;
    await new Promise((resolve) => setTimeout(resolve, downMs));
    if (!this.#closing) await this.#spawn();
    return victim.name;
  }

  /** Counters summed over every process started; the dead-letter ones count each acked batch id once. */
  counters(): DispatcherCounters {
    const sum: DispatcherCounters = { sentBatches: 0, sentValues: 0, requests: 0, retries: 0, deadLetteredBatches: 0, deadLetteredValues: 0 };
    for (const { counters } of this.#all) {
      sum.sentBatches += counters.sentBatches;
      sum.sentValues += counters.sentValues;
      sum.requests += counters.requests;
      sum.retries += counters.retries;
    }
    sum.deadLetteredBatches = this.#acked.size;
    for (const values of this.#acked.values()) sum.deadLetteredValues += values;
    return sum;
  }

  /** Every dead letter reported, one per batch id, in the order first reported. */
  deadLetters(): WireDeadLetter[] {
    return [...this.#letters.values()];
  }

  /** Processes started in all (replacements included). */
  get started(): number {
    return this.#all.length;
  }

  /**
   * Stops every process: SIGTERM (each closes and prints its final counters), and SIGKILL for
   * those still running after `timeoutMs`. No replacement is started from now on.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.#closing = true;
    const running = this.#all.filter((child) => child.running);
    for (const child of running) child.kill('SIGTERM');
    const timer = setTimeout(() => running.forEach((child) => child.kill('SIGKILL')), timeoutMs);
    try {
      await Promise.all(running.map((child) => child.exited));
    } finally {
      clearTimeout(timer);
    }
  }

  async #spawn(): Promise<void> {
    const config: DispatcherProcessConfig = { ...this.#o.config, name: `dispatcher-${this.#all.length + 1}` };
    const child = new DispatcherChild(config, (from, message) => this.#hear(from, message));
    this.#all.push(child);
    void child.exited.then((exit) => {
      if (child.endedOnPurpose || this.#closing) return;
      this.#o.onError(`${child.name} exited on its own (code ${exit.code}, signal ${exit.signal}); starting another. stderr:\n${child.stderr}`);
      this.#spawn().catch((error: unknown) => this.#o.onError(String(error)));
    });
    await child.ready(this.#o.readyTimeoutMs);
  }

  #hear(from: DispatcherChild, message: DispatcherMessage): void {
    if ('deadLetter' in message) {
      if (!this.#letters.has(message.deadLetter.id)) this.#letters.set(message.deadLetter.id, message.deadLetter);
    } else if ('deadLettered' in message) {
      this.#acked.set(message.deadLettered.id, message.deadLettered.values);
    } else if ('error' in message) {
      this.#o.onError(`${from.name}: ${message.error}`);
    }
  }
}
