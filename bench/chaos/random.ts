/**
 * Seeded randomness for the chaos harness, so that a run is repeatable in its decisions: the
 * same `--seed` makes the receiver pick the same faults, the producers the same customers and
 * the dispatcher the same retry jitter, in the same order. (Which request meets which decision
 * still depends on timing: the decisions repeat, the interleaving need not.)
 */
import { randomBytes } from 'node:crypto';

/** Uniform in [0, 1), like `Math.random`. */
export type Random = () => number;

/** mulberry32: a 32-bit state PRNG, small and good enough to pick faults. */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * An independent stream per consumer of randomness, derived from the run's seed and the
 * consumer's name: more draws in one stream (say, a new fault kind in the receiver) do not
 * shift the decisions of the others.
 */
export function randomStream(seed: number, name: string): Random {
  // FNV-1a of the name, mixed into the seed.
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return mulberry32((seed ^ hash) >>> 0);
}

/** A fresh seed for a run that was given none (printed, so the run can be repeated). */
export function randomSeed(): number {
  return randomBytes(4).readUInt32LE(0);
}
