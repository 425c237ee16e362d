/**
 * The harness's backend, in one function: the push client the scenarios publish to, and the
 * failures of the backend itself that the run injects. In memory there are none; on Redis
 * (`--redis`, see `redis-backend.ts`) the dispatchers run in child processes and the faults are
 * theirs and the server's: SIGKILL a dispatcher process and start another, kill -9 and restart
 * the run's own redis-server, `CLIENT PAUSE` it (or, on a Redis given by URL, drop the run's
 * connections). Nothing else in the harness needs to know which backend it runs on.
 */
import type { CloseOptions, DispatcherEvents, DispatcherStats } from '../../src/dispatch/dispatcher-events.js';
import { createPushClient } from '../../src/dispatch/push-client.js';
import type { Random } from './random.js';
import { CHAOS_DISPATCH, customerUrl } from './dispatch-settings.js';
import type { ChaosRecord } from './records.js';
import { createRedisBackend } from './redis-backend.js';

/** Where the records are queued. */
export type BackendName = 'memory' | 'redis';

/** The events of the client the harness listens to. */
export type ChaosEvents = Pick<DispatcherEvents<string, ChaosRecord>, 'deadLetter' | 'error'>;

/**
 * What the harness does with a backend's push client: publish (synchronous in memory, a round
 * trip on Redis), listen to dead letters and errors, read the figures, close. The in-memory
 * `PushClient` is one as it is.
 */
export interface ChaosClient {
  publish(customer: string, record: ChaosRecord): void | Promise<void>;
  /** Stops accepting publishes, delivers what is pending (within `timeoutMs`), and stops delivering. */
  close(options?: CloseOptions): Promise<void>;
  stats(): DispatcherStats | Promise<DispatcherStats>;
  on<E extends keyof ChaosEvents>(event: E, listener: (...args: ChaosEvents[E]) => void): unknown;
}

/** Retry settings of the dispatcher, per scenario. */
export interface ChaosRetry {
  maxAttempts: number;
  minDelayMs: number;
  maxDelayMs: number;
}

/** What the backend needs to build the client. */
export interface ChaosClientArgs {
  backend: BackendName;
  /** The receiver's endpoints: a customer's is this plus the customer, URI-encoded. */
  hooksUrl: string;
  /** The `whsec_` secret the receiver verifies. */
  secret: string;
  lingerMs: number;
  /** Bound of values held (pending plus claimed). */
  maxPending: number;
  retry: ChaosRetry;
  /** The run's seed: the streams of the dispatchers' jitter and of the faults' parameters derive from it. */
  seed: number;
  /** The in-process dispatcher's retry jitter. */
  random: Random;
  /** Redis only: the server to use; `undefined` starts a redis-server of the run's own. */
  redisUrl?: string | undefined;
  /** Redis only: told about the backend's progress (server started, processes ready). */
  log?: (line: string) => void;
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
  /** For the report's header: `in-memory queue`, `Redis queue (…)`. */
  readonly description: string;
  readonly client: ChaosClient;
  /** The backend's own failures, injected at random during the run; none in memory. */
  readonly faults: readonly BackendFault[];
  /** Frees what the backend holds (connections, child processes) once the client is closed. */
  dispose(): Promise<void>;
}

/** Builds the push client of a run, started. */
export async function createChaosClient(args: ChaosClientArgs): Promise<ChaosBackend> {
  if (args.backend === 'redis') return createRedisBackend(args);
  const client: ChaosClient = createPushClient<string, ChaosRecord>({
    endpoint: (customer) => customerUrl(args.hooksUrl, customer),
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
  return { name: 'memory', description: 'in-memory queue', client, faults: [], dispose: async () => undefined };
}
