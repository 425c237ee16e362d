/**
 * Claimed batches: their ids, tokens and leases. A {@link ClaimRecord} lives from the claim
 * that creates it until it is acked (or pulled after coming back); while it is back in the
 * queue (nacked, or its lease expired) it keeps its id, so the next claim redelivers it whole.
 */
import { randomBytes } from 'node:crypto';
import { BTree } from './btree.js';
import type { ClaimedBatch } from './batch.js';

/** How a claim ended without an ack. */
export type ReturnReason = 'nack' | 'expired';

/** One batch handed out by `claim`, with the place its key had when it was claimed. */
export class ClaimRecord<S, K, V> {
  token = '';
  attempt = 0;
  leaseExpiresAt = 0;
  /** Tie-break of the lease index: leases expiring in the same millisecond stay distinct. */
  leaseSeq = 0;
  status: 'claimed' | 'returned' = 'claimed';
  returnedBy: ReturnReason | undefined = undefined;
  /** Tokens of this batch's claims whose lease ran out, so a late settle is told `LEASE_EXPIRED`. */
  expiredTokens: string[] | undefined = undefined;

  constructor(
    readonly id: string,
    readonly key: K,
    public values: V[],
    /** The key's place when the batch was claimed: where it goes back to. */
    readonly sortKey: S,
    readonly seq: number,
    readonly enqueuedAt: number,
    /** Position among the key's batches, so batches that come back line up in value order. */
    readonly order: number,
    /** Room in `order` below the next batch, shared out to the parts when the batch is split or cut. */
    public span: number,
  ) {}

  /** The public view of this claim. */
  toBatch(): ClaimedBatch<K, V> {
    return {
      id: this.id,
      key: this.key,
      values: this.values,
      token: this.token,
      attempt: this.attempt,
      leaseExpiresAt: this.leaseExpiresAt,
      enqueuedAt: this.enqueuedAt,
    };
  }
}

type AnyRecord = ClaimRecord<unknown, unknown, unknown>;

function compareLeases(a: AnyRecord, b: AnyRecord): number {
  return a.leaseExpiresAt - b.leaseExpiresAt || a.leaseSeq - b.leaseSeq;
}

/** Every known batch id, and the leases of the claimed ones in expiry order. */
export class ClaimTable<S, K, V> {
  readonly #records = new Map<string, ClaimRecord<S, K, V>>();
  readonly #leases = new BTree<ClaimRecord<S, K, V>, undefined>(undefined, compareLeases);
  /** Random per queue, so ids of another queue's batches are unknown here. */
  readonly #prefix = randomBytes(6).toString('hex');
  #nextId = 0;
  #nextToken = 0;
  #nextLeaseSeq = 0;
  #nextOrder = 0;

  /** A new, unique batch id. */
  newId(): string {
    return `${this.#prefix}-${(this.#nextId++).toString(36)}`;
  }

  /** Position for a new batch after every earlier one. */
  newOrder(): number {
    return this.#nextOrder++;
  }

  get(id: string): ClaimRecord<S, K, V> | undefined {
    return this.#records.get(id);
  }

  /** Hands `record` out under a new token and lease. */
  activate(record: ClaimRecord<S, K, V>, leaseExpiresAt: number): void {
    record.status = 'claimed';
    record.returnedBy = undefined;
    record.token = (this.#nextToken++).toString(36);
    record.attempt++;
    this.#records.set(record.id, record);
    this.#setLease(record, leaseExpiresAt);
  }

  /**
   * Cuts a returned record to its first `count` values and files the rest as a new returned
   * record, right behind it in value order, under a new id. Returns the rest.
   */
  remainder(record: ClaimRecord<S, K, V>, count: number): ClaimRecord<S, K, V> {
    const rest = new ClaimRecord<S, K, V>(
      this.newId(), record.key, record.values.slice(count), record.sortKey, record.seq,
      record.enqueuedAt, record.order + record.span / 2, record.span / 2,
    );
    rest.status = 'returned';
    rest.returnedBy = 'nack';
    this.#records.set(rest.id, rest);
    record.values = record.values.slice(0, count);
    // The head keeps the lower half of the room: parts it is split into stay before the rest.
    record.span /= 2;
    return rest;
  }

  /** Moves the lease of a claimed record. */
  extend(record: ClaimRecord<S, K, V>, leaseExpiresAt: number): void {
    this.#leases.delete(record);
    this.#setLease(record, leaseExpiresAt);
  }

  /** Marks a claimed record as back in the queue; it keeps its id. */
  release(record: ClaimRecord<S, K, V>, reason: ReturnReason): void {
    this.#leases.delete(record);
    record.status = 'returned';
    record.returnedBy = reason;
    if (reason === 'expired') (record.expiredTokens ??= []).push(record.token);
  }

  /** Forgets a record: its id becomes unknown. */
  delete(record: ClaimRecord<S, K, V>): void {
    if (record.status === 'claimed') this.#leases.delete(record);
    this.#records.delete(record.id);
  }

  /** Claimed records whose lease ran out by `now`, soonest first. */
  expired(now: number): ClaimRecord<S, K, V>[] {
    const out: ClaimRecord<S, K, V>[] = [];
    // The common case, nothing expired, costs one descent and no iterator.
    if ((this.nextExpiry() ?? Infinity) > now) return out;
    for (const record of this.#leases.keys()) {
      if (record.leaseExpiresAt > now) break;
      out.push(record);
    }
    return out;
  }

  /** The earliest lease expiry, or `undefined` with nothing claimed. */
  nextExpiry(): number | undefined {
    return this.#leases.minKey()?.leaseExpiresAt;
  }

  /** Number of claimed (not returned) batches. */
  get claimedBatches(): number {
    return this.#leases.size;
  }

  /** Every record, claimed or returned. */
  records(): IterableIterator<ClaimRecord<S, K, V>> {
    return this.#records.values();
  }

  clear(): void {
    this.#records.clear();
    this.#leases.clear();
  }

  /** Throws when the lease index and the records disagree. */
  checkInvariants(): void {
    this.#leases.checkValid();
    let claimed = 0;
    for (const record of this.#records.values()) {
      if (record.status === 'claimed') {
        claimed++;
        if (!this.#leases.has(record)) throw new Error(`claimed batch ${record.id} has no lease`);
      }
    }
    if (claimed !== this.#leases.size) throw new Error(`lease index holds ${this.#leases.size}, ${claimed} claimed`);
  }

  #setLease(record: ClaimRecord<S, K, V>, leaseExpiresAt: number): void {
    record.leaseExpiresAt = leaseExpiresAt;
    record.leaseSeq = this.#nextLeaseSeq++;
    this.#leases.set(record, undefined);
  }
}
