/**
 * A producer process of the multi-process test: publishes `count` records to `customers`
 * customers over about `durationMs`, in ticks, waits until every publish is stored, prints
 * `{"published": n}` and exits. Any failed publish fails the process (exit 1).
 *
 * argv: producer index, count, customers, durationMs.   env: REDIS_URL, DUEBATCH_TEST_PREFIX.
 */
import { sleep } from '../../../src/index.js';
import { RedisTimeSortedQueue } from '../../../src/redis/index.js';
import { prefixFromEnv, tell, type TestRecord } from './protocol.js';

const [producer, count, customers, durationMs] = process.argv.slice(2).map(Number);
if (producer === undefined || count === undefined || customers === undefined || durationMs === undefined) {
  throw new Error('usage: producer.ts <index> <count> <customers> <durationMs>');
}

const ticks = 25;
const queue = new RedisTimeSortedQueue<string, TestRecord>({ prefix: prefixFromEnv(), lingerMs: 50 });
const started = Date.now();
let published = 0;
for (let tick = 0; tick < ticks; tick++) {
  const publishes: Promise<void>[] = [];
  for (let seq = Math.floor((tick * count) / ticks); seq < Math.floor(((tick + 1) * count) / ticks); seq++) {
    // Consecutive seqs go to consecutive customers: each (producer, customer) pair gets a record every few ticks.
    const customer = `c${(seq + producer * 11) % customers}`;
    publishes.push(queue.publish(customer, { producer, seq, customer }));
  }
  // One tick's publishes are stored before the next tick's are made, so each customer sees seqs in order.
  await Promise.all(publishes);
  published += publishes.length;
  await sleep(Math.max(0, started + ((tick + 1) * durationMs) / ticks - Date.now()));
}
await queue.quit();
tell({ published });
