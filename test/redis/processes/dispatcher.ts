/**
 * A dispatcher process of the multi-process test: a Dispatcher over the shared Redis queue,
 * POSTing each customer's batches to `<origin>/<customer>` with its name as `user-agent`, so
 * the receiver knows who sent what. Short leases (1.5 s) bring a killed dispatcher's claims
 * back quickly. Prints `{"ready": name}` once running; on SIGTERM (or when its stdin ends, so
 * it never outlives the test) closes, prints `{"stats": …}` and exits 0.
 *
 * argv: name, receiver origin.   env: REDIS_URL, DUEBATCH_TEST_PREFIX.
 */
import { Dispatcher } from '../../../src/index.js';
import { RedisTimeSortedQueue } from '../../../src/redis/index.js';
import { prefixFromEnv, tell, type TestRecord } from './protocol.js';

const [name, origin] = process.argv.slice(2);
if (name === undefined || origin === undefined) throw new Error('usage: dispatcher.ts <name> <origin>');

const leaseMs = 1500;
const queue = new RedisTimeSortedQueue<string, TestRecord>({ prefix: prefixFromEnv(), lingerMs: 50, leaseMs });
const dispatcher = new Dispatcher<string, TestRecord>({
  source: queue,
  endpoint: (customer) => `${origin}/${customer}`,
  userAgent: name,
  concurrency: 4,
  leaseMs,
  headersTimeoutMs: 1000,
});
dispatcher.on('error', (error) => console.error(`${name}: ${error.stack ?? error.message}`));
dispatcher.start();
await queue.wakeReady();
tell({ ready: name });

let closing = false;
async function stop(): Promise<void> {
  if (closing) return;
  closing = true;
  await dispatcher.close({ timeoutMs: 5000 });
  const { sentBatches, sentValues, requests, retries, deadLetteredValues } = dispatcher.stats();
  await queue.quit();
  tell({ stats: { sentBatches, sentValues, requests, retries, deadLetteredValues } });
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop()).resume();
