/** How values become Redis strings and back. */
import { DuebatchError, ErrorCode } from '../errors.js';

/** Turns values into strings for Redis and back. `decode(encode(v))` must give `v` back. */
export interface Codec<V> {
  /** The value as a string. Must not throw for values the queue accepts (a throw fails the publish). */
  encode(value: V): string;
  /** The value a string of `encode` stands for. */
  decode(text: string): V;
}

/** The default codec: `JSON.stringify` / `JSON.parse`. */
export const jsonCodec: Codec<unknown> = {
  encode: (value) => JSON.stringify(value),
  decode: (text) => JSON.parse(text) as unknown,
};

/**
 * The codec failed: `encode` threw or returned something other than a string (nothing was
 * written), or `decode` threw on a value read from Redis. `cause` holds the codec's error.
 */
export class CodecError extends DuebatchError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.SERIALIZE, message, options);
  }
}

/** `codec.encode(value)`, as a string, or a {@link CodecError}. */
export function encodeValue<V>(codec: Codec<V>, value: V): string {
  let text: unknown;
  try {
    text = codec.encode(value);
  } catch (cause) {
    throw new CodecError('codec.encode threw', { cause });
  }
  if (typeof text !== 'string') throw new CodecError(`codec.encode returned ${typeof text}, not a string`);
  return text;
}

/** `codec.decode(text)`, or a {@link CodecError}. */
export function decodeValue<V>(codec: Codec<V>, text: string): V {
  try {
    return codec.decode(text);
  } catch (cause) {
    throw new CodecError('codec.decode threw on a value read from Redis', { cause });
  }
}
