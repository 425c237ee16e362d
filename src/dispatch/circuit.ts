/**
 * A per-key circuit: after `failureThreshold` consecutive failed attempts a key is paused for
 * `pauseMs`, so one broken customer endpoint costs the others nothing. The first attempt after
 * the pause is a probe: success closes the circuit, failure pauses the key again.
 */

/** Options of the per-key circuit. */
export interface CircuitOptions {
  /** Consecutive failed attempts that pause a key. */
  failureThreshold: number;
  /** How long a paused key rests before a probe. */
  pauseMs: number;
}

/** Consecutive failures per key, and which keys are paused. Memory: one entry per failing key. */
export class KeyCircuit<K> {
  readonly #failures = new Map<K, number>();
  readonly #paused = new Map<K, number>();

  constructor(readonly options: CircuitOptions) {}

  /** Records a failed attempt; true when it pauses the key (the caller delays the key by `pauseMs`). */
  failure(key: K, now: number): boolean {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    if (failures < this.options.failureThreshold) return false;
    this.#paused.set(key, now + this.options.pauseMs);
    return true;
  }

  /** Records a delivered batch: the key's circuit closes. */
  success(key: K): void {
    this.#failures.delete(key);
    this.#paused.delete(key);
  }

  /** Keys paused now, with when their probe is due. */
  paused(now: number): { key: K; until: number }[] {
    const out: { key: K; until: number }[] = [];
    for (const [key, until] of this.#paused) if (until > now) out.push({ key, until });
    return out;
  }

  /** Forgets a key's failures and pause; whether it was paused. */
  resume(key: K): boolean {
    this.#failures.delete(key);
    return this.#paused.delete(key);
  }
}
