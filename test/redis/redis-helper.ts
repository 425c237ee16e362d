/**
 * Shared by the Redis suites: whether Redis answers (the suites skip with a one-line notice when
 * it does not, and fail instead under DUEBATCH_REQUIRE_REDIS=1), unique key prefixes so suites
 * run in parallel on one server, and cleanup of what a test wrote.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { describe } from 'vitest';
import { defaultRedisUrl } from '../../src/redis/index.js';

export const redisUrl = defaultRedisUrl();

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** Whether the Redis at {@link redisUrl} answers. */
export const redisAvailable = await answers(redisUrl);

if (!redisAvailable) {
  const notice = `Redis not reachable at ${redisUrl}: set REDIS_URL or start redis-server; set DUEBATCH_REQUIRE_REDIS=1 to fail instead`;
  if (process.env['DUEBATCH_REQUIRE_REDIS'] === '1') throw new Error(notice);
  if (firstInRun()) console.warn(`[duebatch] skipping the Redis tests. ${notice}`);
}

/** Whether this test file is the first of the vitest run to ask (so the notice prints once, not per file). */
function firstInRun(): boolean {
  // Test files run in worker threads (same pid) or child processes (parent pid) of the vitest process.
  const runner = isMainThread ? process.ppid : process.pid;
  try {
    closeSync(openSync(join(tmpdir(), `duebatch-redis-notice-${runner}`), 'wx'));
    return true;
  } catch {
    return false;
  }
}

/** `describe`, skipped when Redis does not answer. */
export function describeRedis(name: string, body: () => void): void {
  describe.skipIf(!redisAvailable)(name, body);
}

let counter = 0;

/** A key prefix no other test (in this run or a parallel one) uses. */
export function uniquePrefix(name: string): string {
  return `duebatch-test:${name}:${process.pid}-${counter++}-${randomBytes(3).toString('hex')}`;
}

/** A client for tests, with failures fast and quiet. */
export function testClient(url = redisUrl): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: (n) => Math.min(n * 50, 500) });
  client.on('error', () => undefined);
  return client;
}

/** Every key of the queue(s) under `prefix`, all shards. */
export async function keysOf(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for (const pattern of [`{${prefix}}:*`, `{${prefix}/*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 10_000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

/** Deletes every key under `prefix` (SCAN + DEL). */
export async function cleanup(client: Redis, prefix: string): Promise<void> {
  const keys = await keysOf(client, prefix);
  for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
}

/** Counts the commands `client` sends, by name. */
export function countCommands(client: Redis): string[] {
  const names: string[] = [];
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    names.push(command.name);
    return (send as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof client.sendCommand;
  return names;
}
