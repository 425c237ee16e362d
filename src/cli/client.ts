/**
 * The demo's push client: the queue backend the flags ask for, with a dispatcher over it.
 * The one place that knows about backends, so adding one touches nothing else.
 */
import { randomBytes } from 'node:crypto';
import type { CloseOptions } from '../dispatch/dispatcher-events.js';
import { createPushClient, type PushClient } from '../dispatch/push-client.js';
import type { DemoArgs } from './args.js';
import type { DemoRecord } from './producers.js';
import { UsageError } from './usage-error.js';

/** A push client whose `publish` may be synchronous (in memory) or a round trip (Redis). */
export type DemoClient = PushClient<string, DemoRecord, void | Promise<void>>;

// A bound far above what the defaults hold (about rate × linger = 10,000 records), so a receiver
// that cannot keep up shows as refused publishes instead of a process that eats its memory.
const MAX_PENDING = 1_000_000;

/**
 * Builds and starts the client that delivers to `endpoint(customer)`, signing with `secret`.
 * @throws {@link UsageError} for `--redis` when Redis does not answer at the URL
 */
export async function createClient(args: DemoArgs, endpoint: (customer: string) => string, secret: string): Promise<DemoClient> {
  if (args.redisUrl !== undefined) return createRedisClient(args.redisUrl, args, endpoint, secret);
  return createPushClient<string, DemoRecord>({ endpoint, signingSecret: secret, lingerMs: args.lingerMs, maxPending: MAX_PENDING });
}

/**
 * The Redis push client, on a prefix of this run's own (`duebatch-demo:<random>`) so runs never
 * meet. Its `close()` first delivers everything pending, like the in-memory client's (a Redis
 * client's own close leaves pending records for other dispatchers, and this run has no other),
 * then deletes the prefix's keys and closes the connection.
 */
async function createRedisClient(url: string, args: DemoArgs, endpoint: (customer: string) => string, secret: string): Promise<DemoClient> {
  // Loaded only here: ioredis is an optional peer dependency, needed for --redis alone.
  const [{ createPushClient: createRedisPushClient }, { connect }] = await Promise.all([
    import('../redis/index.js'),
    import('../redis/redis-queue-options.js'),
  ]);
  // Our own connection (the one a URL would give the queue), so the keys can be deleted after
  // the client has closed, and so an unreachable Redis is reported before anything starts.
  const redis = connect(url);
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => (lastError = error));
  try {
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    const reason = (lastError ?? (error as Error)).message;
    throw new UsageError('--redis', `Redis at ${url} does not answer (${reason}); start redis-server or pass another URL`);
  }
  const client = createRedisPushClient<string, DemoRecord>({
    redis,
    prefix: `duebatch-demo:${randomBytes(6).toString('hex')}`,
    endpoint,
    signingSecret: secret,
    lingerMs: args.lingerMs,
    maxPending: MAX_PENDING,
  });
  const close = async (options?: CloseOptions): Promise<void> => {
    const timeoutMs = options?.timeoutMs ?? 30_000;
    const deadline = performance.now() + timeoutMs;
    try {
      await within(client.flush(), timeoutMs);
      await client.close({ timeoutMs: Math.max(0, deadline - performance.now()) });
      await client.queue.clear();
    } finally {
      await redis.quit().catch(() => redis.disconnect());
    }
  };
  return { ...client, close };
}

/** Resolves when `promise` settles or after `ms`, whichever comes first (clearing its timer). */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
