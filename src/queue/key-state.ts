/**
 * What the queue knows of one key. Kept lean: the fields every key needs sit on the object,
 * the ones only some keys need (claims, returned batches, deferral, byte sizes) in `extra`,
 * allocated on first use, because per-key overhead is most of the queue's memory.
 */
import type { ClaimRecord } from './claims.js';

/** Where a key with pending values is indexed. */
export const Location = {
  /** In no index: no pending values, or (with per-key order) a claim of it is outstanding. */
  NONE: 0,
  /** In the ready index, ordered by its place. */
  READY: 1,
  /** In the deferred index until `notBefore` (a nack asked for a delay). */
  DEFERRED: 2,
} as const;
export type Location = (typeof Location)[keyof typeof Location];

/** The rarer parts of a key's state. */
export interface KeyExtra<S, K, V> {
  /** Batches back from a nack or an expired lease, in value order; claimed again before fresh values. */
  returned: ClaimRecord<S, K, V>[];
  /** Number of values in `returned`. */
  returnedCount: number;
  /** The fresh values' place while `returned` is not empty (the key's place is then the smaller of all). */
  freshSortKey: S | undefined;
  freshSeq: number;
  /** Claimable again no earlier than this (0: no deferral). */
  notBefore: number;
  /** Claims of this key outstanding. */
  claims: number;
  /** Sizes of the fresh values, parallel to `values`, when the queue has `sizeOf`. */
  sizes: number[] | undefined;
  /** Sum of `sizes`. */
  bytes: number;
}

/** One key's pending values and place. The index orders these objects by `(sortKey, seq)`. */
export class KeyState<S, K, V> {
  where: Location = Location.NONE;
  extra: KeyExtra<S, K, V> | undefined = undefined;

  constructor(
    readonly key: K,
    /** Fresh pending values, in publish order. */
    public values: V[],
    /** The key's place: the smallest sort key among its pending values, kept while it has any. */
    public sortKey: S,
    /** Publish sequence number of the value that set the place: ties between keys stay FIFO. */
    public seq: number,
    /** When the oldest fresh value was published: whole milliseconds since the queue was made. */
    public since: number,
  ) {}

  /** Pending values: returned batches plus fresh values. */
  get pending(): number {
    return this.values.length + (this.extra?.returnedCount ?? 0);
  }

  /** Outstanding claims of this key. */
  get claims(): number {
    return this.extra?.claims ?? 0;
  }

  /** The `extra` part, created on first use. */
  more(): KeyExtra<S, K, V> {
    return (this.extra ??= {
      returned: [],
      returnedCount: 0,
      freshSortKey: undefined,
      freshSeq: 0,
      notBefore: 0,
      claims: 0,
      sizes: undefined,
      bytes: 0,
    });
  }

  /** Whether batches came back and wait in front of the fresh values. */
  get hasReturned(): boolean {
    return (this.extra?.returned.length ?? 0) > 0;
  }
}
