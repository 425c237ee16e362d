/** Script replies turned into the shapes the queue hands out, and numbers turned into script arguments. */
import { LeaseExpiredError, StoreError, UnknownBatchError } from '../errors.js';
import type { Batch, ClaimedBatch, QueueEntry } from '../queue/batch.js';
import { decodeValue, type Codec } from './codec.js';

/** A number as a script argument: Lua's `tonumber` reads `inf` and `-inf`, and `String()` round-trips every double. */
export function numberArg(value: number): string {
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return String(value);
}

/** A number from a reply (`%.17g`, or Redis' `inf` / `-inf`). */
export function parseNumber(text: unknown): number {
  if (typeof text === 'number') return text;
  if (text === 'inf' || text === '+inf') return Infinity;
  if (text === '-inf') return -Infinity;
  const value = Number(text);
  if (typeof text !== 'string' || text === '' || Number.isNaN(value)) throw malformed(`a number, got ${String(text)}`);
  return value;
}

/** Decodes a list of encoded values. */
export function decodeValues<V>(codec: Codec<V>, raw: unknown): V[] {
  if (!Array.isArray(raw)) throw malformed('a list of values');
  return raw.map((text) => decodeValue(codec, String(text)));
}

/** `{id, key, token, attempt, leaseExpiresAt, enqueuedAt, {values}}` as a claimed batch. */
export function toClaimedBatch<K extends string, V>(codec: Codec<V>, raw: unknown): ClaimedBatch<K, V> {
  if (!Array.isArray(raw) || raw.length !== 7) throw malformed('a claimed batch');
  const [id, key, token, attempt, lease, enqueued, values] = raw as unknown[];
  return {
    id: String(id),
    key: String(key) as K,
    values: decodeValues(codec, values),
    token: String(token),
    attempt: parseNumber(attempt),
    leaseExpiresAt: parseNumber(lease),
    enqueuedAt: parseNumber(enqueued),
  };
}

/** `{key, {values}}` as a pulled batch. */
export function toBatch<K extends string, V>(codec: Codec<V>, raw: unknown): Batch<K, V> {
  if (!Array.isArray(raw) || raw.length !== 2) throw malformed('a batch');
  return { key: String(raw[0]) as K, values: decodeValues(codec, raw[1]) };
}

/** An entry of ENTRIES with its seq, for merging shards. */
export interface RawEntry<K, V> extends QueueEntry<number, K, V> {
  readonly seq: number;
}

/** `{key, sortKey, seq, {values}}` as an entry. */
export function toEntry<K extends string, V>(codec: Codec<V>, raw: unknown): RawEntry<K, V> {
  if (!Array.isArray(raw) || raw.length !== 4) throw malformed('an entry');
  return { key: String(raw[0]) as K, sortKey: parseNumber(raw[1]), seq: parseNumber(raw[2]), values: decodeValues(codec, raw[3]) };
}

/** Throws the error a settle script's code stands for; returns on 'ok'. */
export function checkSettleCode(code: unknown, id: string): void {
  if (code === 'ok') return;
  if (code === 'unknown') throw new UnknownBatchError(id);
  if (code === 'expired') throw new LeaseExpiredError(id);
  throw malformed(`a settle code, got ${String(code)}`);
}

function malformed(what: string): StoreError {
  return new StoreError(`unexpected reply from a duebatch Redis script: expected ${what}`);
}
