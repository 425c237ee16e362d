/**
 * What every scenario sets up and tears down: the heap sampler, the chaos receiver, the backend's
 * push client, the demo's producers (publishing through the record marker and the refusal log),
 * the dead-letter tally, the backend's fault injections and the progress line; at the end, close
 * (everything pending goes out or is dead-lettered) and the report.
 */
import { randomBytes } from 'node:crypto';
import { startProducers, type Producers } from '../../src/cli/producers.js';
import { startProgress, type Progress, type ProgressSnapshot, type ProgressStream } from '../../src/cli/progress.js';
import { startBackendFaults, type BackendFaultInjector } from './backend-faults.js';
import { startChaosReceiver, type ChaosReceiver } from './chaos-receiver.js';
import { createChaosClient, type ChaosBackend, type ChaosClient, type ChaosRetry } from './client.js';
import { DeadLetterTally } from './dead-letter-tally.js';
import type { FaultRates } from './faults.js';
import { startHeapSampler, type HeapSampler } from './heap-sampler.js';
import { randomStream } from './random.js';
import { markingPublisher, type MarkingPublisher, type RecordMarks } from './records.js';
import { RefusalLog } from './refusals.js';
import { buildReport, type ChaosReport, type Check, type RunSettings } from './report.js';

/** Where a run writes while it runs. */
export interface ChaosIO {
  /** Progress lines and dispatcher errors; nothing is written without it. */
  stderr?: ProgressStream;
}

/** How a scenario wants its session. */
export interface SessionConfig {
  settings: RunSettings;
  faults: FaultRates;
  marks: RecordMarks;
  retry: ChaosRetry;
  /** How long the producers publish unless stopped earlier. */
  publishMs: number;
  io: ChaosIO;
  /** Redis only: the server to use; `undefined` starts one of the run's own. */
  redisUrl?: string | undefined;
  /** The wait before each backend fault is uniform in [min, max) ms. @default [2_000, 8_000] */
  backendFaultEveryMs?: readonly [min: number, max: number] | undefined;
}

/** A running session. */
export interface Session {
  readonly receiver: ChaosReceiver;
  readonly client: ChaosClient;
  readonly producers: Producers;
  /**
   * Waits for the producers to finish, closes the client (what is pending is delivered, what
   * cannot be within the close timeout is dead-lettered as `shutdown`), frees everything, and
   * reports. `scenarioChecks` is called once all is settled.
   */
  finish(scenarioChecks?: () => Check[]): Promise<ChaosReport>;
}

// The longest the final delivery may take; what is left after it is dead-lettered as `shutdown`.
const CLOSE_TIMEOUT_MS = 30_000;
const PRODUCER_LOOPS = 4;
// A slow accept answers within 50-300 ms, below the 500 ms headers timeout even on a busy machine.
const SLOW_MS: readonly [number, number] = [50, 300];
const BACKEND_FAULT_EVERY_MS: readonly [number, number] = [2_000, 8_000];

/** Starts everything; on a failure half-way, frees what was started and rethrows. */
export async function openSession(config: SessionConfig): Promise<Session> {
  const { settings } = config;
  const heap = startHeapSampler();
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const refusals = new RefusalLog();
  const receiver = await startChaosReceiver({
    secret,
    faults: config.faults,
    random: randomStream(settings.seed, 'receiver'),
    slowMs: SLOW_MS,
    retryAfterSeconds: 1,
    onBooked: (records) => refusals.arrived(records),
  });
  let backend: ChaosBackend;
  try {
    backend = await createChaosClient({
      backend: settings.backend,
      hooksUrl: `${receiver.url}/hooks/`,
      secret,
      lingerMs: settings.lingerMs,
      maxPending: settings.maxPending,
      retry: config.retry,
      seed: settings.seed,
      random: randomStream(settings.seed, 'retry'),
      redisUrl: config.redisUrl,
      log: (line) => void config.io.stderr?.write(`chaos: ${line}\n`),
    });
  } catch (error) {
    heap.stop();
    await receiver.close();
    throw error;
  }
  return new RunningSession(config, heap, receiver, backend, refusals);
}

class RunningSession implements Session {
  readonly producers: Producers;
  readonly #config: SessionConfig;
  readonly #heap: HeapSampler;
  readonly #backend: ChaosBackend;
  readonly #tally: DeadLetterTally;
  readonly #marker: MarkingPublisher;
  readonly #refusals: RefusalLog;
  readonly #injector: BackendFaultInjector;
  readonly #progress: Progress | undefined;
  readonly #started = performance.now();
  #dispatcherErrors = 0;
  #phase: ProgressSnapshot['phase'] = 'publishing';

  constructor(config: SessionConfig, heap: HeapSampler, readonly receiver: ChaosReceiver, backend: ChaosBackend, refusals: RefusalLog) {
    const { settings, io } = config;
    this.#config = config;
    this.#heap = heap;
    this.#backend = backend;
    this.#refusals = refusals;
    this.#tally = new DeadLetterTally((id) => receiver.ledger.hasAccepted(id));
    this.client.on('deadLetter', (letter) => {
      this.#tally.add(letter);
      if (!receiver.ledger.hasAccepted(letter.id)) refusals.arrived(letter.values);
    });
    this.client.on('error', (error) => {
      this.#dispatcherErrors++;
      io.stderr?.write(`chaos: dispatcher error: ${error.message}\n`);
    });
    const client = this.client;
    this.#marker = markingPublisher((customer, record) => client.publish(customer, record), config.marks, randomStream(settings.seed, 'marks'));
    this.producers = startProducers({
      publish: refusals.wrap(this.#marker.publish),
      producers: PRODUCER_LOOPS,
      rate: settings.rate,
      customers: settings.customers,
      durationMs: config.publishMs,
      random: randomStream(settings.seed, 'producers'),
    });
    this.#injector = startBackendFaults({
      faults: backend.faults,
      random: randomStream(settings.seed, 'backend-faults'),
      everyMs: config.backendFaultEveryMs ?? BACKEND_FAULT_EVERY_MS,
      onError: (error) => io.stderr?.write(`chaos: backend fault failed: ${String(error)}\n`),
    });
    this.#progress = io.stderr === undefined ? undefined : startProgress({ stream: io.stderr, sample: () => this.#sample() });
  }

  get client(): ChaosClient {
    return this.#backend.client;
  }

  async finish(scenarioChecks: () => Check[] = () => []): Promise<ChaosReport> {
    try {
      let backendFaults: Record<string, number> = {};
      try {
        await this.producers.finished;
        this.#phase = 'delivering';
      } finally {
        this.producers.stop();
        backendFaults = await this.#injector.stop();
        await this.client.close({ timeoutMs: CLOSE_TIMEOUT_MS });
      }
      const stats = await this.client.stats();
      return buildReport({
        settings: this.#config.settings,
        backendDescription: this.#backend.description,
        elapsedMs: performance.now() - this.#started,
        producers: this.producers.counts(),
        marks: this.#marker.counts(),
        receiver: this.receiver.counts(),
        latency: this.receiver.ledger.latency.report(),
        deadLetters: this.#tally.counts(),
        stats,
        heap: this.#heap.stop(),
        backendFaults,
        dispatcherErrors: this.#dispatcherErrors,
        refusals: this.#refusals.counts(),
        scenarioChecks: scenarioChecks(),
      });
    } finally {
      this.#progress?.stop();
      this.#heap.stop();
      await this.#backend.dispose();
      await this.receiver.close();
    }
  }

  async #sample(): Promise<ProgressSnapshot> {
    const stats = await this.client.stats();
    return {
      phase: this.#phase,
      elapsedMs: performance.now() - this.#started,
      // The producers count a refused publish as published; the refusal log knows better.
      published: this.producers.counts().published - this.#refusals.total,
      delivered: this.receiver.counts().delivered,
      requests: stats.requests,
      retries: stats.retries,
      p99Ms: this.receiver.ledger.latency.p99(),
    };
  }
}
