/**
 * The Dispatcher: wakes when the queue's next batch is due, claims due batches, POSTs each as
 * one request (or several, to respect `maxBodyBytes`), acks what the endpoint accepted, nacks
 * what must be retried with a backoff, and hands what cannot be delivered to the dead-letter path.
 */
import { EventEmitter, setMaxListeners } from 'node:events';
import pLimit, { type LimitFunction } from 'p-limit';
import { describeValue, InvalidEndpointError, QueueClosedError, QueueFullError } from '../errors.js';
import type { ClaimedBatch } from '../queue/batch.js';
import type { BatchSource, QueueCounts } from '../queue/batch-source.js';
import { setLongTimeout, type LongTimeout } from '../time.js';
import * as check from '../validate.js';
import { encodeBody, splitCounts } from './body.js';
import { KeyCircuit } from './circuit.js';
import { DeadLetterList, type DeadLetter, type DeadLetterReason } from './dead-letters.js';
import { attempt, requestHeaders } from './delivery.js';
import type { CloseOptions, DispatcherEvents, DispatcherStats, RetryEvent } from './dispatcher-events.js';
import { resolveDispatcherOptions, type DispatcherOptions, type ResolvedDispatcherOptions } from './dispatcher-options.js';
import { LatencyHistogram } from './latency.js';
import type { DeliveryFailure } from './retry.js';
import { Transport } from './transport.js';

/** What came of sending one part: settled (acked or dead-lettered), or to be retried after `delayMs`. */
type Outcome<K, V> = { kind: 'done' } | { kind: 'retry'; delayMs: number; event: RetryEvent<K, V>; paused: boolean };

const shutdownReason: DeadLetterReason = { code: 'shutdown', message: 'the dispatcher closed before the batch was delivered' };

/** Sends a queue's due batches over HTTP. See the README for the semantics. */
export class Dispatcher<K, V> extends EventEmitter<DispatcherEvents<K, V>> {
  readonly #o: ResolvedDispatcherOptions<K, V>;
  readonly #source: BatchSource<K, V>;
  readonly #transport: Transport;
  readonly #limit: LimitFunction;
  readonly #latency = new LatencyHistogram();
  readonly #deadLetters: DeadLetterList<K, V>;
  readonly #circuit: KeyCircuit<K> | undefined;
  /** Aborted at the close deadline: every request carries its signal (one controller, not one per request). */
  readonly #stopRequests = new AbortController();
  readonly #idleWaiters = new Set<() => void>();
  readonly #counters = { sentBatches: 0, sentValues: 0, requests: 0, retries: 0, deadLetteredBatches: 0, deadLetteredValues: 0 };
  #state: 'new' | 'running' | 'closing' | 'closed' = 'new';
  #active = 0;
  #forcing = 0;
  /** Past the close deadline: nothing more is sent. */
  #stopping = false;
  #timer: LongTimeout | undefined;
  #timerAt = Infinity;
  #pumping = false;
  #pumpAgain = false;
  #pumpQueued = false;
  #closed: Promise<void> | undefined;
  #unsubscribe: (() => void) | undefined;
  #lastCounts: QueueCounts = { pending: 0, claimed: 0, keys: 0 };

  /** @throws InvalidArgumentError for a bad option (no endpoint, concurrency < 1, minDelayMs > maxDelayMs, …). */
  constructor(options: DispatcherOptions<K, V>) {
    super();
    this.#o = resolveDispatcherOptions(options);
    this.#source = this.#o.source;
    this.#transport = new Transport(this.#o);
    this.#limit = pLimit(this.#o.concurrency);
    this.#deadLetters = new DeadLetterList(this.#o.maxDeadLetters);
    this.#circuit = this.#o.circuit === undefined ? undefined : new KeyCircuit(this.#o.circuit);
    // Every request in flight listens to this one signal: more than Node's default ten is expected.
    setMaxListeners(0, this.#stopRequests.signal);
    this.#o.signal?.addEventListener('abort', () => void this.close({ timeoutMs: 0 }), { once: true });
  }

  /** Starts sending: from now on the dispatcher wakes whenever a batch is due. Returns `this`. */
  start(): this {
    if (this.#state === 'closed' || this.#state === 'closing') throw new QueueClosedError();
    if (this.#state === 'running') return this;
    this.#state = 'running';
    this.#unsubscribe = this.#source.onWake((dueInMs) => this.#arm(dueInMs));
    this.#schedulePump();
    if (this.#o.signal?.aborted === true) void this.close({ timeoutMs: 0 });
    return this;
  }

  /** Batches that could not be delivered, kept here when no `onDeadLetter` handler is given. */
  get deadLetters(): DeadLetterList<K, V> {
    return this.#deadLetters;
  }

  /**
   * Sends everything pending now, linger or not, and resolves once all of it is acked or
   * dead-lettered (batches in a retry backoff keep their backoff). Starts the dispatcher if needed.
   */
  async flush(): Promise<void> {
    if (this.#state === 'new') this.start();
    if (this.#state === 'closed') return;
    await this.#forceUntilIdle();
  }

  /**
   * Stops accepting publishes, sends what is pending (retries go at once instead of after
   * their backoff), waits for requests in flight, and after `timeoutMs` aborts what is left and
   * hands it to the dead-letter path with reason `shutdown`. On a queue shared with other
   * dispatchers (Redis), it only finishes or returns its own claims. Idempotent.
   */
  close(options?: CloseOptions): Promise<void> {
    if (this.#closed === undefined) {
      const timeoutMs = options?.timeoutMs ?? 30_000;
      if (timeoutMs !== Infinity) check.nonNegativeNumber('options.timeoutMs', timeoutMs);
      this.#closed = this.#shutdown(timeoutMs);
    }
    return this.#closed;
  }

  /** Keys paused by the circuit, with when their next probe is due (dispatcher clock). */
  pausedKeys(): { key: K; until: number }[] {
    return this.#circuit?.paused(this.#o.clock.now()) ?? [];
  }

  /** Ends a key's pause now; its batches are sent at once. Whether the key was paused. */
  async resume(key: K): Promise<boolean> {
    const wasPaused = this.#circuit?.resume(key) ?? false;
    const wasDeferred = await this.#source.resume(key);
    this.#schedulePump();
    return wasPaused || wasDeferred;
  }

  /**
   * Counters, gauges and latency percentiles. Synchronous: the queue's counts are read now from
   * an in-memory queue, and for a remote one (Redis) are those read at the loop's last pass.
   */
  stats(): DispatcherStats {
    const counts = this.#counts();
    return {
      pending: counts.pending,
      pendingKeys: counts.keys,
      claimed: counts.claimed,
      inFlight: this.#active,
      ...this.#counters,
      pausedKeys: this.pausedKeys().length,
      latency: this.#latency.summary(),
    };
  }

  #counts(): QueueCounts {
    const counts = this.#source.counts();
    if (!(counts instanceof Promise)) return (this.#lastCounts = counts);
    counts.then((fresh) => (this.#lastCounts = fresh)).catch((error: unknown) => this.#emitError(error));
    return this.#lastCounts;
  }

  // --- the loop -------------------------------------------------------------------------------

  #schedulePump(): void {
    if (this.#pumpQueued || this.#state === 'new' || this.#state === 'closed') return;
    this.#pumpQueued = true;
    setImmediate(() => {
      this.#pumpQueued = false;
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#pumpAgain = false;
        await this.#fill();
      } while (this.#pumpAgain);
      await this.#checkIdle();
      await this.#armForNext();
    } catch (error) {
      // The store failed (Redis down, say): report it and try again shortly.
      this.#emitError(error);
      this.#arm(1000);
    } finally {
      this.#pumping = false;
      // A pass asked for while the last steps awaited the store (a flush or close, a finished delivery) runs now.
      if (this.#pumpAgain) this.#schedulePump();
    }
  }

  /** Claims as many due batches as there are free slots, and launches them. */
  async #fill(): Promise<void> {
    const sharedClosing = this.#state === 'closing' && this.#source.shared === true;
    while (!sharedClosing && (this.#state === 'running' || this.#state === 'closing')) {
      const free = this.#o.concurrency - this.#active;
      if (free <= 0) return;
      const batches = await this.#source.claim(this.#o.maxMessages, {
        leaseMs: this.#o.leaseMs,
        maxBatches: free,
        force: this.#forcing > 0,
        includeDeferred: this.#state === 'closing',
      });
      if (batches.length === 0) return;
      for (const batch of batches) this.#launch(batch);
    }
  }

  async #armForNext(): Promise<void> {
    if (this.#active >= this.#o.concurrency) return; // a finishing delivery pumps again
    const dueIn = await this.#source.nextDueIn();
    if (dueIn === undefined) this.#disarm();
    else this.#arm(Math.max(1, dueIn));
  }

  /** Wakes the loop in `dueInMs`, unless it is already due to wake sooner. */
  #arm(dueInMs: number): void {
    if (this.#state !== 'running' && this.#state !== 'closing') return;
    if (dueInMs <= 0) {
      this.#schedulePump();
      return;
    }
    const at = this.#o.clock.now() + dueInMs;
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    this.#timer?.cancel();
    this.#timerAt = at;
    // Ref'd: pending records keep the process alive until sent. It is cleared once nothing is pending.
    this.#timer = setLongTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#schedulePump();
    }, at, { clock: this.#o.clock, ref: true });
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #launch(batch: ClaimedBatch<K, V>): void {
    this.#active++;
    this.#limit(() => (this.#stopping ? this.#giveUp(batch) : this.#deliver(batch)))
      .catch((error: unknown) => this.#emitError(error))
      .finally(() => {
        this.#active--;
        this.#schedulePump();
      });
  }

  // --- one batch ------------------------------------------------------------------------------

  async #deliver(batch: ClaimedBatch<K, V>): Promise<void> {
    let url: URL;
    let extra: Record<string, string> | undefined;
    let body: Uint8Array;
    try {
      [url, extra] = await this.#target(batch.key);
      body = encodeBody(this.#o.serialize, batch.values);
    } catch (error) {
      const code = error instanceof InvalidEndpointError ? 'invalid-endpoint' : 'serialize';
      await this.#deadLetter(batch, { code, message: (error as Error).message, error: error as Error });
      return;
    }
    const parts = await this.#split(batch, body);
    for (const [i, [part, partBody]] of parts.entries()) {
      // Each part may take the full request timeouts: renew the lease the parts share.
      if (i > 0) await this.#source.extendLease(part, { leaseMs: this.#o.leaseMs });
      const outcome = await this.#sendPart(url, extra, part, partBody);
      if (outcome.kind === 'retry') {
        // Later parts go back too, behind this one, so the key's order holds.
        for (const [rest] of parts.slice(i)) await this.#source.nack(rest, { delayMs: outcome.delayMs });
        // Told only now that the key is back in the queue, so a listener's resume(key) finds it deferred.
        this.emit('retry', outcome.event);
        if (outcome.paused) this.emit('paused', { key: part.key, until: this.#o.clock.now() + outcome.delayMs });
        return;
      }
    }
  }

  /** Splits a batch whose body exceeds `maxBodyBytes` into parts that fit, each with its own id. */
  async #split(batch: ClaimedBatch<K, V>, body: Uint8Array): Promise<[ClaimedBatch<K, V>, Uint8Array][]> {
    if (body.byteLength <= this.#o.maxBodyBytes) return [[batch, body]];
    const encode = (values: V[]): Uint8Array => encodeBody(this.#o.serialize, values);
    const counts = splitCounts(batch.values, encode, this.#o.maxBodyBytes);
    const parts = counts.length === 1 ? [batch] : await this.#source.split(batch, counts);
    return parts.map((part) => [part, encode(part.values)]);
  }

  async #sendPart(url: URL, extra: Record<string, string> | undefined, part: ClaimedBatch<K, V>, body: Uint8Array): Promise<Outcome<K, V>> {
    if (body.byteLength > this.#o.maxBodyBytes) {
      await this.#deadLetter(part, { code: 'too-large', message: `one value serializes to ${body.byteLength} bytes, over maxBodyBytes (${this.#o.maxBodyBytes})` });
      return { kind: 'done' };
    }
    this.#counters.requests++;
    const result = await attempt(this.#o, this.#transport, url, requestHeaders(this.#o, part, body, extra), body, this.#stopRequests.signal);
    if (result.ok) {
      await this.#source.ack(part);
      this.#acked(part, result.response.statusCode);
      return { kind: 'done' };
    }
    if (result.aborted && this.#stopping) {
      await this.#giveUp(part);
      return { kind: 'done' };
    }
    return this.#failed(part, result.failure, result.error);
  }

  #acked(part: ClaimedBatch<K, V>, statusCode: number): void {
    this.#circuit?.success(part.key);
    const latencyMs = this.#o.clock.now() - part.enqueuedAt;
    this.#latency.record(latencyMs);
    this.#counters.sentBatches++;
    this.#counters.sentValues += part.values.length;
    this.emit('sent', { batch: part, statusCode, latencyMs });
  }

  async #failed(part: ClaimedBatch<K, V>, failure: DeliveryFailure, error: Error): Promise<Outcome<K, V>> {
    let delayMs = this.#o.retryPolicy(failure, part.attempt);
    if (delayMs === undefined) {
      const rejected = failure.kind === 'status' && !this.#o.retryStatuses.includes(failure.statusCode);
      const reason: DeadLetterReason = {
        code: rejected ? 'rejected' : 'exhausted',
        message: rejected ? `endpoint rejected the batch: ${error.message}` : `gave up after ${part.attempt} attempts: ${error.message}`,
        error,
        ...(failure.kind === 'status' ? { statusCode: failure.statusCode } : {}),
      };
      await this.#deadLetter(part, reason);
      return { kind: 'done' };
    }
    const paused = this.#circuit?.failure(part.key, this.#o.clock.now()) === true;
    if (paused) delayMs = Math.max(delayMs, this.#o.circuit?.pauseMs ?? 0);
    this.#counters.retries++;
    return { kind: 'retry', delayMs, paused, event: { batch: part, attempt: part.attempt, delayMs, failure, error } };
  }

  /** Past the close deadline: dead-letter as `shutdown`, or on a shared queue give the batch back. */
  async #giveUp(batch: ClaimedBatch<K, V>): Promise<void> {
    if (this.#source.shared === true) await this.#source.nack(batch, { delayMs: 0 });
    else await this.#deadLetter(batch, shutdownReason);
  }

  /** Hands a batch to `onDeadLetter` (or the bounded list), then acks it. Never drops it. */
  async #deadLetter(batch: ClaimedBatch<K, V>, reason: DeadLetterReason): Promise<void> {
    const letter: DeadLetter<K, V> = { id: batch.id, key: batch.key, values: batch.values, attempts: batch.attempt, reason, at: Date.now() };
    let kept: boolean;
    if (this.#o.onDeadLetter === undefined) {
      kept = this.#deadLetters.add(letter);
      if (!kept) this.#emitError(new QueueFullError(this.#deadLetters.limit));
    } else {
      try {
        await this.#o.onDeadLetter(letter, reason);
        kept = true;
      } catch (error) {
        this.#emitError(error);
        kept = this.#deadLetters.add(letter);
      }
    }
    if (!kept) {
      // Nowhere to put it: the batch stays queued (and counts against maxPending) rather than vanish.
      await this.#source.nack(batch, { delayMs: 60_000 });
      return;
    }
    await this.#source.ack(batch);
    this.#counters.deadLetteredBatches++;
    this.#counters.deadLetteredValues += batch.values.length;
    this.emit('deadLetter', letter);
  }

  /** The key's URL and extra headers; a failure of either is an {@link InvalidEndpointError}. */
  async #target(key: K): Promise<[URL, Record<string, string> | undefined]> {
    let target: string | URL;
    let headers: Record<string, string> | undefined;
    try {
      target = await this.#o.endpoint(key);
      headers = await this.#o.headers?.(key);
    } catch (error) {
      throw new InvalidEndpointError(`endpoint or headers of key ${describeValue(key)} threw: ${(error as Error).message}`, { cause: error });
    }
    const url = URL.canParse(String(target)) ? new URL(target) : undefined;
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new InvalidEndpointError(`endpoint(${describeValue(key)}) gave ${target instanceof URL ? target.href : describeValue(target)}, not an http(s) URL`);
    }
    return [url, headers];
  }

  // --- idle, close, errors --------------------------------------------------------------------

  #whenIdle(): Promise<void> {
    return new Promise((resolve) => {
      this.#idleWaiters.add(resolve);
      this.#schedulePump();
    });
  }

  /**
   * Resolves the idle waiters once nothing is in flight and the queue is empty; closing on a
   * shared queue, once this dispatcher's own work is done (without asking the store, which may
   * be the thing that is down).
   */
  async #checkIdle(): Promise<void> {
    if (this.#idleWaiters.size === 0 || this.#active > 0) return;
    if (this.#source.shared !== true || this.#state !== 'closing') {
      const counts = (this.#lastCounts = await this.#source.counts());
      if (this.#active > 0 || counts.pending > 0 || counts.claimed > 0) return;
    }
    for (const resolve of this.#idleWaiters) resolve();
    this.#idleWaiters.clear();
  }

  async #shutdown(timeoutMs: number): Promise<void> {
    if (this.#state === 'new') this.#state = 'running';
    this.#state = 'closing';
    try {
      await this.#source.close();
    } catch (error) {
      this.#emitError(error);
    }
    // A zero timeout (an aborted signal) stops at once: nothing more is sent, all is dead-lettered.
    if (timeoutMs === 0) this.#stop();
    const deadline = timeoutMs === Infinity ? undefined : setTimeout(() => this.#stop(), timeoutMs);
    try {
      await this.#forceUntilIdle();
    } finally {
      clearTimeout(deadline);
      this.#state = 'closed';
      this.#disarm();
      this.#unsubscribe?.();
      await this.#transport.close();
    }
  }

  /** Runs the loop in force mode (linger ignored) until the queue (or, closing a shared queue, this dispatcher) is idle. */
  async #forceUntilIdle(): Promise<void> {
    this.#forcing++;
    try {
      this.#schedulePump();
      await this.#whenIdle();
    } finally {
      this.#forcing--;
    }
  }

  /** The close deadline passed: abort requests; what is left is given up. */
  #stop(): void {
    this.#stopping = true;
    this.#stopRequests.abort();
    this.#schedulePump();
  }

  #emitError(error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }
}

