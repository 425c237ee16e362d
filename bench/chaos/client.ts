/**
 * The harness's backend, in one function: the push client the scenarios publish to, and the
 * failures of the backend itself that the run injects. In memory there are none; the Redis
 * backend (`--redis`) will add its own (SIGKILL a dispatcher process and restart it, restart or
 * pause the Redis connection) here, and nothing else in the harness needs to change.
 */
import { UsageError } from '../../src/cli/usage-error.js';
import { createPushClient, type PushClient } from '../../src/dispatch/push-client.js';
import type { Random } from './random.js';
import type { ChaosRecord } from './records.js';

/** Where the records are queued. */
export type BackendName = 'memory' | 'redis';

/** A push client whose `publish` may be synchronous (in memory) or a round trip (Redis). */
export type ChaosClient = PushClient<string, ChaosRecord, void | Promise<void>>;

/** Retry settings of the dispatcher, per scenario. */
export interface ChaosRetry {
  maxAttempts: number;
  minDelayMs: number;
  maxDelayMs: number;
}

/** What the backend needs to build the client. */
export interface ChaosClientArgs {
  backend: BackendName;
  /** A customer's URL. */
  endpoint: (customer: string) => string;
  /** The `whsec_` secret the receiver verifies. */
  secret: string;
  lingerMs: number;
  /** Bound of values held (pending plus claimed). */
  maxPending: number;
  retry: ChaosRetry;
  /** The dispatcher's retry jitter. */
  random: Random;
}

/** A failure of the backend itself, injected now and then during a run. */
export interface BackendFault {
  /** Shown in the table, e.g. `kill-dispatcher`. */
  readonly name: string;
  /** Injects the fault and resolves once the backend is back (a killed process restarted, say). */
  inject(): Promise<void>;
}

/** A started backend. */
export interface ChaosBackend {
  readonly name: BackendName;
  readonly client: ChaosClient;
  /** The backend's own failures, injected at random during the run; none in memory. */
  readonly faults: readonly BackendFault[];
  /** Frees what the backend holds (connections, child processes) once the client is closed. */
  dispose(): Promise<void>;
}

/**
 * The dispatcher settings of every scenario. The headers timeout is short so that a hanging
 * receiver costs half a second, not ten; the lease is well above it. Concurrency and connections
 * are generous because hangs and slow accepts hold a connection each while they last.
 */
export const CHAOS_DISPATCH = {
  headersTimeoutMs: 500,
  bodyTimeoutMs: 500,
  leaseMs: 5_000,
  concurrency: 64,
  connections: 64,
} as const;

/**
 * Builds the push client of a run, started.
 * @throws UsageError for `redis`: this build of the harness has no Redis backend yet
 */
export async function createChaosClient(args: ChaosClientArgs): Promise<ChaosBackend> {
  if (args.backend === 'redis') {
    throw new UsageError('--redis', 'the Redis backend is not available in this build of the chaos harness (in-memory only)');
  }
  const client: ChaosClient = createPushClient<string, ChaosRecord>({
    endpoint: args.endpoint,
    signingSecret: args.secret,
    lingerMs: args.lingerMs,
    maxPending: args.maxPending,
    ...CHAOS_DISPATCH,
    ...args.retry,
    random: args.random,
    // Dead letters are counted from the `deadLetter` events; none is kept in memory, so none
    // weighs on the heap figures and the in-memory list can never fill up.
    onDeadLetter: () => undefined,
  });
  return { name: 'memory', client, faults: [], dispose: async () => undefined };
}
