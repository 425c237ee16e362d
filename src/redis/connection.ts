/** Connections the queue opens besides the main one, and key-space sweeps. */
import { Cluster } from 'ioredis';
import type { Redis } from 'ioredis';
import { scanPattern } from './keyspace.js';
import type { RedisClient } from './redis-queue-options.js';
import { toStoreError } from './script-runner.js';

/**
 * A new connection with `client`'s settings (for the wake subscription, which puts its connection
 * in subscriber mode). Its errors are kept off the console: they reach callers through commands.
 */
export function ownConnection(client: RedisClient): RedisClient {
  const copy = client.duplicate();
  copy.on('error', () => {
    // Reported by the commands that fail.
  });
  return copy;
}

/** Every node that may hold keys: the masters of a cluster, or the client itself. */
function nodesOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/** Deletes every key of shard `tag`: SCAN MATCH on each node, UNLINK in groups (one slot per shard, so one node). */
export async function clearShard(client: RedisClient, tag: string): Promise<void> {
  const pattern = scanPattern(tag);
  try {
    for (const node of nodesOf(client)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await node.unlink(...keys);
      } while (cursor !== '0');
    }
  } catch (cause) {
    throw toStoreError(`clearing ${tag} failed`, cause);
  }
}

/** Every key of shard `tag`, for inspection and tests. */
export async function scanShard(client: RedisClient, tag: string): Promise<string[]> {
  const pattern = scanPattern(tag);
  const found: string[] = [];
  for (const node of nodesOf(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}
