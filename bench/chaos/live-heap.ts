/**
 * The live heap: bytes in use right after a full collection, so garbage not yet collected does
 * not count. The load scenario's memory check uses it, because `heapUsed` sampled at any moment
 * is mostly garbage whose size depends on when V8 chooses to collect (in a 60 s load run, the
 * sampled high-water swings by tens of MB between runs while the live heap stays put).
 *
 * Node exposes `gc()` only with `--expose-gc`. Like Jest's leak detector, the flag is turned on
 * at run time and `gc` taken from a fresh V8 context, so neither `npm run chaos` nor vitest need
 * the flag on their command line.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/** Runs a full collection and returns `heapUsed` after it. Costs a few ms to a few tens of ms. */
export function liveHeapBytes(): number {
  collect ??= exposeGc();
  collect();
  return process.memoryUsage().heapUsed;
}

function exposeGc(): () => void {
  const global = (globalThis as { gc?: () => void }).gc;
  if (global !== undefined) return global;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
