/** Turning a batch's values into request bodies: serialize, and split to fit `maxBodyBytes`. */
import { SerializeError } from '../errors.js';

/** Turns a batch's values into a request body. */
export type Serializer<V> = (values: V[]) => string | Uint8Array;

/** The default body: a JSON array of the values. */
export function serializeJson<V>(values: V[]): string {
  return JSON.stringify(values);
}

/** Serializes with `serialize`, wrapping any failure (a cycle, a BigInt) in {@link SerializeError}. */
export function encodeBody<V>(serialize: Serializer<V>, values: V[]): Uint8Array {
  let body: string | Uint8Array;
  try {
    body = serialize(values);
  } catch (error) {
    throw new SerializeError(`could not serialize the batch: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  throw new SerializeError(`serialize must return a string or a Uint8Array, returned ${typeof body}`);
}

/**
 * Counts of consecutive values whose bodies each fit in `maxBytes`, found by halving: a part
 * that does not fit is cut in two until it does or holds a single value (which the caller then
 * dead-letters as too large). Deterministic, so a retried batch splits the same way.
 */
export function splitCounts<V>(values: V[], encode: (values: V[]) => Uint8Array, maxBytes: number): number[] {
  const counts: number[] = [];
  const visit = (start: number, end: number): void => {
    if (end - start === 1 || encode(values.slice(start, end)).byteLength <= maxBytes) {
      counts.push(end - start);
      return;
    }
    const middle = (start + end) >>> 1;
    visit(start, middle);
    visit(middle, end);
  };
  visit(0, values.length);
  return counts;
}
