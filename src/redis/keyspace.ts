/**
 * Where a queue's data lives in Redis. Every key of one shard starts with the shard's hash tag,
 * `{prefix}` (one shard) or `{prefix/i}`, so a shard's keys share a cluster slot and one Lua
 * script may touch them all. Per shard:
 *
 * | key               | type   | holds                                                                 |
 * |-------------------|--------|-----------------------------------------------------------------------|
 * | `T:meta`          | hash   | counters: pending, claimed, keys; seq, order, id, token; id epoch; longest linger |
 * | `T:ready`         | zset   | claimable keys: score = sort key of the key's place, member = seq + key |
 * | `T:defer`         | zset   | keys deferred by a nack: score = notBefore, member = key              |
 * | `T:lease`         | zset   | claimed batches: score = lease expiry, member = batch id              |
 * | `T:s:<key>`       | hash   | one key's state: claims, place, fresh place, returned count, notBefore |
 * | `T:v:<key>`       | list   | one key's fresh values, encoded, oldest first                         |
 * | `T:r:<key>`       | zset   | one key's returned batches: score = order, member = batch id          |
 * | `T:b:<id>`        | hash   | one batch: key, place, values (MessagePack), token, attempt, lease    |
 */

/** The hash tags of a queue's shards, in shard order. */
export function shardTags(prefix: string, shards: number): string[] {
  if (shards === 1) return [`{${prefix}}`];
  return Array.from({ length: shards }, (_, i) => `{${prefix}/${i}}`);
}

/** The four fixed keys a script of shard `tag` declares, in KEYS order. */
export function shardKeys(tag: string): [string, string, string, string] {
  return [`${tag}:meta`, `${tag}:ready`, `${tag}:defer`, `${tag}:lease`];
}

/** The pub/sub channel publishes announce new due times on. One per queue, whatever the shards. */
export function wakeChannel(prefix: string): string {
  return `duebatch:wake:${prefix}`;
}

/**
 * The shard of `key`: FNV-1a (32 bits) of its UTF-16 code units, modulo `shards`. The same in
 * every process, so all of a key's values meet in one shard.
 */
export function shardOfKey(key: string, shards: number): number {
  if (shards === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/**
 * The shard a batch id names, or `undefined` for an id no shard of this queue could have made.
 * Ids read `<shard>-<epoch>-<n>` (base 36), parts of a split add `.<i>`.
 */
export function shardOfBatch(id: string, shards: number): number | undefined {
  const dash = id.indexOf('-');
  if (dash < 1 || dash > 6) return undefined;
  const shard = Number(id.slice(0, dash));
  return Number.isInteger(shard) && shard >= 0 && shard < shards ? shard : undefined;
}

/** A SCAN pattern for every key of shard `tag` (glob characters of the prefix escaped). */
export function scanPattern(tag: string): string {
  return `${tag.replace(/[*?[\]\\]/g, '\\$&')}:*`;
}
