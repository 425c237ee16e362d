/**
 * The Redis queue's invariant checker: reads every key of a shard and throws on the first
 * inconsistency between counters, indexes, key states and batch records. For tests, with no
 * other writer running; O(keys + values).
 */
import type { RedisClient } from './redis-queue-options.js';
import { scanShard } from './connection.js';

type Hash = Record<string, string>;

interface Shard {
  meta: Hash;
  ready: Map<string, number>;
  defer: Map<string, number>;
  lease: Map<string, number>;
  states: Map<string, Hash>;
  fresh: Map<string, number>;
  returned: Map<string, string[]>;
  batches: Map<string, Hash>;
}

async function readShard(client: RedisClient, tag: string): Promise<Shard> {
  const names = await scanShard(client, tag);
  const at = `${tag}:`;
  const shard: Shard = {
    meta: await client.hgetall(`${at}meta`),
    ready: await zset(client, `${at}ready`),
    defer: await zset(client, `${at}defer`),
    lease: await zset(client, `${at}lease`),
    states: new Map(),
    fresh: new Map(),
    returned: new Map(),
    batches: new Map(),
  };
  for (const name of names) {
    const kind = name.slice(at.length, at.length + 2);
    const rest = name.slice(at.length + 2);
    if (kind === 's:') shard.states.set(rest, await client.hgetall(name));
    else if (kind === 'v:') shard.fresh.set(rest, await client.llen(name));
    else if (kind === 'r:') shard.returned.set(rest, await client.zrange(name, 0, -1));
    else if (kind === 'b:') shard.batches.set(rest, await client.hgetall(name));
    else if (!['meta', 'ready', 'defer', 'lease'].includes(name.slice(at.length))) throw new Error(`unexpected key ${name}`);
  }
  return shard;
}

async function zset(client: RedisClient, name: string): Promise<Map<string, number>> {
  const flat = await client.zrange(name, 0, -1, 'WITHSCORES');
  const map = new Map<string, number>();
  for (let i = 0; i < flat.length; i += 2) map.set(flat[i] as string, score(flat[i + 1]));
  return map;
}

function score(text: string | undefined): number {
  if (text === 'inf') return Infinity;
  if (text === '-inf') return -Infinity;
  return Number(text);
}

function member(seq: number, key: string): string {
  return seq.toString(16).padStart(14, '0') + key;
}

/** Throws an `Error` describing the first broken invariant of shard `tag`. */
export async function checkRedisInvariants(client: RedisClient, tag: string, perKeyOrder: boolean): Promise<void> {
  const shard = await readShard(client, tag);
  let pending = 0;
  let claimed = 0;
  let keys = 0;
  const claimsOf = new Map<string, number>();
  for (const [id, batch] of shard.batches) {
    const n = Number(batch['n']);
    if (!(n > 0)) throw new Error(`batch ${id} has ${batch['n']} values`);
    if (batch['st'] === 'c') {
      claimed += n;
      claimsOf.set(batch['key'] as string, (claimsOf.get(batch['key'] as string) ?? 0) + 1);
      if (shard.lease.get(id) !== score(batch['lease'])) throw new Error(`claimed batch ${id} has no lease at ${batch['lease']}`);
    } else if (batch['st'] === 'r') {
      if (shard.lease.has(id)) throw new Error(`returned batch ${id} holds a lease`);
      if (!(shard.returned.get(batch['key'] as string) ?? []).includes(id)) throw new Error(`returned batch ${id} not filed under its key`);
    } else {
      throw new Error(`batch ${id} has status ${batch['st']}`);
    }
  }
  for (const id of shard.lease.keys()) if (shard.batches.get(id)?.['st'] !== 'c') throw new Error(`lease of unknown batch ${id}`);
  for (const [key, ids] of shard.returned) if (!shard.states.has(key)) throw new Error(`returned batches ${ids.join()} of unknown key ${key}`);
  for (const key of shard.fresh.keys()) if (!shard.states.has(key)) throw new Error(`values of unknown key ${key}`);
  for (const [key, state] of shard.states) {
    const n = shard.fresh.get(key) ?? 0;
    const ids = shard.returned.get(key) ?? [];
    let rc = 0;
    let place: [number, number] | undefined = n > 0 ? [score(state['fk']), Number(state['fs'])] : undefined;
    for (const id of ids) {
      const batch = shard.batches.get(id);
      if (batch?.['st'] !== 'r') throw new Error(`key ${key} lists batch ${id} as returned`);
      rc += Number(batch['n']);
      const p: [number, number] = [score(batch['sk']), Number(batch['sq'])];
      if (place === undefined || p[0] < place[0] || (p[0] === place[0] && p[1] < place[1])) place = p;
    }
    const c = Number(state['c']);
    const w = Number(state['w']);
    if (rc !== Number(state['rc'])) throw new Error(`key ${key}: rc ${state['rc']}, counted ${rc}`);
    if (c !== (claimsOf.get(key) ?? 0)) throw new Error(`key ${key}: c ${c}, counted ${claimsOf.get(key) ?? 0}`);
    if (n + rc === 0 && c === 0) throw new Error(`empty key ${key} kept`);
    pending += n + rc;
    if (n + rc > 0) keys++;
    if (place !== undefined && (score(state['pk']) !== place[0] || Number(state['ps']) !== place[1])) {
      throw new Error(`key ${key} placed at ${state['pk']}/${state['ps']}, expected ${place.join('/')}`);
    }
    const inReady = shard.ready.get(member(Number(state['ps']), key)) === score(state['pk']);
    const inDefer = shard.defer.get(key) === Number(state['nb']);
    if ((w === 1) !== inReady) throw new Error(`key ${key}: w ${w}, in ready ${inReady}`);
    if ((w === 2) !== inDefer) throw new Error(`key ${key}: w ${w}, in defer ${inDefer}`);
    if (n + rc === 0 && w !== 0) throw new Error(`key ${key} indexed with nothing pending`);
    if (n + rc > 0 && w === 0 && !(perKeyOrder && c > 0)) throw new Error(`key ${key} has pending values but no place`);
  }
  if (shard.ready.size + shard.defer.size > shard.states.size) throw new Error('index holds unknown keys');
  const meta = (field: string): number => Number(shard.meta[field] ?? 0);
  if (meta('pending') !== pending) throw new Error(`meta pending ${meta('pending')}, counted ${pending}`);
  if (meta('claimed') !== claimed) throw new Error(`meta claimed ${meta('claimed')}, counted ${claimed}`);
  if (meta('keys') !== keys) throw new Error(`meta keys ${meta('keys')}, counted ${keys}`);
}
