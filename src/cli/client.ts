/**
 * The demo's push client: the queue backend the flags ask for, with a dispatcher over it.
 * The one place that knows about backends, so adding one touches nothing else.
 */
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
 * @throws {@link UsageError} for `--redis`: this build has no Redis backend yet
 */
export async function createClient(args: DemoArgs, endpoint: (customer: string) => string, secret: string): Promise<DemoClient> {
  if (args.redisUrl !== undefined) throw new UsageError('--redis', 'the Redis backend is not available in this build');
  return createPushClient<string, DemoRecord>({ endpoint, signingSecret: secret, lingerMs: args.lingerMs, maxPending: MAX_PENDING });
}
