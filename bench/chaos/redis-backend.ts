/**
 * The chaos harness's Redis backend (`--redis [url]`). Without a URL it starts a redis-server of
 * its own (free port, temp dir, AOF with `appendfsync always`, no RDB), which it may kill -9,
 * restart and pause; with one, it only drops its own connections (a shared server is never
 * restarted or paused). Either way the queue lives under a prefix no other run uses.
 *
 * The harness process publishes (a `RedisTimeSortedQueue`); {@link DISPATCHER_PROCESSES}
 * processes (`dispatcher-process.ts`) deliver to the receiver, which stays in the harness
 * process. At the end the run waits until Redis holds nothing of the queue, stops the processes,
 * and deletes the prefix's keys (a shared server) or the server and its dir (its own).
 */
import { randomBytes } from 'node:crypto';
import { RedisTimeSortedQueue } from '../../src/redis/redis-time-sorted-queue.js';
import { UsageError } from '../../src/cli/usage-error.js';
import type { ChaosBackend, ChaosClientArgs } from './client.js';
import { DispatcherPool } from './dispatcher-pool.js';
import { OwnRedis, redisServerInstalled } from './own-redis.js';
import { randomStream } from './random.js';
import type { ChaosRecord } from './records.js';
import { RedisChaosClient } from './redis-client.js';
import { redisFaults } from './redis-faults.js';

/** Dispatcher processes kept running. */
export const DISPATCHER_PROCESSES = 2;
// Starting a process compiles the sources with tsx; on a loaded two-core machine that can take seconds.
const READY_TIMEOUT_MS = 60_000;
const COUNTERS_EVERY_MS = 500;

/** Starts the Redis backend: the server (unless given), the queue the harness publishes to, the dispatcher processes. */
export async function createRedisBackend(args: ChaosClientArgs): Promise<ChaosBackend> {
  const server = args.redisUrl === undefined ? await startOwnServer() : undefined;
  const serverUrl = server?.url ?? (args.redisUrl as string);
  const run = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const prefix = `duebatch-chaos:${run}`;
  const connectionName = `duebatch-chaos-${run}`;
  const url = withConnectionName(serverUrl, connectionName);
  const shown = server === undefined ? withoutPassword(serverUrl) : '';
  args.log?.(server === undefined ? `Redis at ${shown}, prefix ${prefix}` : `own redis-server on port ${server.port} (AOF, appendfsync always) in ${server.dir}`);
  const queue = new RedisTimeSortedQueue<string, ChaosRecord>({ prefix, redis: url, lingerMs: args.lingerMs, maxPending: args.maxPending });
  let client: RedisChaosClient | undefined;
  let pool: DispatcherPool;
  try {
    pool = await DispatcherPool.start({
      size: DISPATCHER_PROCESSES,
      config: {
        redisUrl: url, prefix, hooksUrl: args.hooksUrl, secret: args.secret, lingerMs: args.lingerMs,
        maxPending: args.maxPending, retry: args.retry, seed: args.seed, statsEveryMs: COUNTERS_EVERY_MS,
      },
      readyTimeoutMs: READY_TIMEOUT_MS,
      onError: (message) => client?.reportError(message),
    });
  } catch (error) {
    await queue.quit();
    await server?.stop();
    throw error;
  }
  client = new RedisChaosClient(queue, pool);
  args.log?.(`${DISPATCHER_PROCESSES} dispatcher processes ready`);
  const faults = redisFaults({
    pool, server, adminUrl: serverUrl, connectionName, random: randomStream(args.seed, 'redis-faults'),
  });
  const where = server === undefined ? shown : `own redis-server :${server.port}, AOF always`;
  return {
    name: 'redis',
    description: `Redis queue (${where}; ${DISPATCHER_PROCESSES} dispatcher processes)`,
    client,
    faults,
    async dispose() {
      try {
        // Closed already after a run; after a failure half-way, closed now without waiting for a drain.
        await client.close({ timeoutMs: 0 }).catch(() => undefined);
        await pool.stop(0);
        if (server === undefined) await queue.clear().catch(() => undefined);
        await queue.quit();
      } finally {
        await server?.stop();
      }
    },
  };
}

async function startOwnServer(): Promise<OwnRedis> {
  if (!redisServerInstalled()) {
    throw new UsageError('--redis', '--redis without a URL starts a redis-server of its own, and redis-server is not on the PATH: install Redis 7, or pass --redis <url>');
  }
  return OwnRedis.start();
}

/** `url` with ioredis's `connectionName` set, so that every connection of the run (CLIENT LIST) carries it. */
function withConnectionName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('connectionName', name);
  return parsed.toString();
}

/** `url` fit to print: its password, if any, masked. */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}
