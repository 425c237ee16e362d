/**
 * A dispatcher process of the chaos run on Redis: a Redis push client (queue + Dispatcher) on
 * the run's prefix, delivering to the chaos receiver in the harness process, with the settings
 * of the in-memory run (`CHAOS_DISPATCH`, the scenario's retry). Started by the harness with its
 * config in the environment (see `dispatcher-protocol.ts`); reports on stdout, one JSON line per
 * message: `ready`, each dead letter (before its ack) and each dead letter acked, its counters
 * every `statsEveryMs`, every `error` event. On SIGTERM, or when its stdin ends (so that it never
 * outlives the harness), closes, prints its final counters and exits 0. The harness also kills
 * it with SIGKILL on purpose.
 */
import { createPushClient } from '../../src/redis/push-client.js';
import type { DispatcherStats } from '../../src/dispatch/dispatcher-events.js';
import { CHAOS_DISPATCH, customerUrl } from './dispatch-settings.js';
import { configFromEnv, type DispatcherCounters, type DispatcherMessage } from './dispatcher-protocol.js';
import { randomStream } from './random.js';
import type { ChaosRecord } from './records.js';

// Time to finish or return its claims on SIGTERM; the harness only stops a drained queue's dispatchers.
const CLOSE_TIMEOUT_MS = 5_000;

const config = configFromEnv();

function tell(message: DispatcherMessage): void {
  // A pipe: the write is synchronous on Linux, so a line is out before a SIGKILL that follows it.
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const client = createPushClient<string, ChaosRecord>({
  prefix: config.prefix,
  redis: config.redisUrl,
  endpoint: (customer) => customerUrl(config.hooksUrl, customer),
  signingSecret: config.secret,
  lingerMs: config.lingerMs,
  maxPending: config.maxPending,
  ...CHAOS_DISPATCH,
  ...config.retry,
  random: randomStream(config.seed, `retry-${config.name}`),
  userAgent: config.name,
  // The harness keeps the books: the letter goes there before the dispatcher acks it.
  onDeadLetter: (letter) => {
    const { id, key, values, attempts, at } = letter;
    const { code, message, statusCode } = letter.reason;
    tell({ deadLetter: { id, key, values, attempts, at, reason: { code, message, ...(statusCode === undefined ? {} : { statusCode }) } } });
  },
});
client.on('deadLetter', (letter) => tell({ deadLettered: { id: letter.id, values: letter.values.length } }));
client.on('error', (error) => tell({ error: error.message }));

function counters(stats: DispatcherStats): DispatcherCounters {
  const { sentBatches, sentValues, requests, retries, deadLetteredBatches, deadLetteredValues } = stats;
  return { sentBatches, sentValues, requests, retries, deadLetteredBatches, deadLetteredValues };
}

const reporter = setInterval(() => tell({ counters: counters(client.dispatcher.stats()) }), config.statsEveryMs);
await client.queue.wakeReady();
tell({ ready: config.name });

let closing = false;
async function stop(): Promise<void> {
  if (closing) return;
  closing = true;
  clearInterval(reporter);
  await client.close({ timeoutMs: CLOSE_TIMEOUT_MS });
  tell({ closed: counters(client.dispatcher.stats()) });
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop()).resume();
