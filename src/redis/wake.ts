/**
 * Waking idle consumers without polling. Scripts that give a key a new or earlier due time
 * (publish, nack, ack freeing a key, claim starting a lease) `PUBLISH` the milliseconds until
 * it on the queue's channel; a consumer sleeps until the due time it last read and re-arms when
 * a message names an earlier one. A reconnect of the subscriber counts as "something may be due
 * now" (messages sent while it was away are lost), so a Redis restart never leaves consumers
 * asleep over due records.
 */
import { monotonicClock, setLongTimeout, type Clock, type LongTimeout } from '../time.js';
import { AbortedError } from '../errors.js';
import type { RedisClient } from './redis-queue-options.js';
import { toStoreError } from './script-runner.js';

/** Listener of due-time announcements: milliseconds until something may be claimable. */
export type WakeListener = (dueInMs: number) => void;

/** One subscriber connection per queue instance, shared by every listener, opened on first use. */
export class WakeChannel {
  readonly #open: () => RedisClient;
  readonly #channel: string;
  readonly #listeners = new Set<WakeListener>();
  #subscriber: RedisClient | undefined;
  #subscribed: Promise<void> | undefined;
  #wasReady = false;

  /** `open` makes the subscriber connection (it goes into subscriber mode, so it is not shared). */
  constructor(open: () => RedisClient, channel: string) {
    this.#open = open;
    this.#channel = channel;
  }

  /** Adds a listener; the first one opens the subscription. Returns the unsubscribe function. */
  add(listener: WakeListener): () => void {
    this.#listeners.add(listener);
    void this.ready().catch(() => {
      // Reported to whoever awaits ready(); a listener alone has no one to report to.
    });
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Resolves once the subscription is active: announcements made from then on are heard. */
  ready(): Promise<void> {
    if (this.#subscribed === undefined) {
      const subscriber = this.#open();
      this.#subscriber = subscriber;
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === this.#channel) this.#emit(Math.max(0, Number(message) || 0));
      });
      subscriber.on('ready', () => {
        if (this.#wasReady) this.#emit(0);
        this.#wasReady = true;
      });
      this.#subscribed = subscriber.subscribe(this.#channel).then(
        () => undefined,
        (cause: unknown) => {
          this.#subscribed = undefined;
          this.#subscriber = undefined;
          subscriber.disconnect();
          throw toStoreError('subscribing to the wake channel failed', cause);
        },
      );
    }
    return this.#subscribed;
  }

  /** Closes the subscriber connection. */
  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    this.#subscribed = undefined;
    this.#listeners.clear();
    if (subscriber !== undefined) subscriber.disconnect();
  }

  #emit(dueInMs: number): void {
    for (const listener of this.#listeners) listener(dueInMs);
  }
}

/** What {@link waitUntilDue} needs of a queue. */
export interface DueSource {
  /** Milliseconds until something is claimable (0: now), `undefined` when nothing is held. */
  nextDueIn(): Promise<number | undefined>;
  /** Announcements of new due times; returns the unsubscribe function. */
  onWake(listener: WakeListener): () => void;
  /** Resolves once announcements are heard (so none is missed between reading and sleeping). */
  wakeReady?(): Promise<void>;
}

/** Options of {@link waitUntilDue}. */
export interface WaitOptions {
  /** Cuts the wait short with `AbortedError`. */
  signal?: AbortSignal;
  /**
   * Local clock the sleep is timed on. Only durations are taken from Redis, so a local clock
   * that is off by minutes changes nothing. @default monotonicClock
   */
  clock?: Clock;
  /** Longest sleep, as a safety net. @default no bound (the wake channel and reconnects suffice) */
  maxWaitMs?: number;
}

/**
 * Resolves when something in `source` may be claimable: at once if something is due, else when
 * the due time read from Redis comes, or earlier when an announcement names an earlier time.
 * Issues one read of the due time and no command after that while it sleeps.
 */
export async function waitUntilDue(source: DueSource, options: WaitOptions = {}): Promise<void> {
  const clock = options.clock ?? monotonicClock;
  const { signal } = options;
  if (signal?.aborted === true) throw new AbortedError('wait aborted', { cause: signal.reason });
  let timer: LongTimeout | undefined;
  let dueAt = Infinity;
  let finish: (() => void) | undefined;
  let fail: ((error: unknown) => void) | undefined;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  // Awaited below; until then a rejection (an abort) must not count as unhandled.
  done.catch(() => undefined);
  const arm = (dueInMs: number): void => {
    const at = clock.now() + dueInMs;
    if (at >= dueAt) return;
    dueAt = at;
    timer?.cancel();
    if (dueInMs <= 0) finish?.();
    else timer = setLongTimeout(() => finish?.(), at, { clock });
  };
  const onAbort = (): void => fail?.(new AbortedError('wait aborted', { cause: signal?.reason }));
  const unsubscribe = source.onWake(arm);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await source.wakeReady?.();
    if (options.maxWaitMs !== undefined) arm(options.maxWaitMs);
    const dueIn = await source.nextDueIn();
    if (dueIn !== undefined) arm(dueIn);
    await done;
  } finally {
    unsubscribe();
    timer?.cancel();
    signal?.removeEventListener('abort', onAbort);
  }
}
