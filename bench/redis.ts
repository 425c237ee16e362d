/**
 * The Redis store against BullMQ and Redis' own ceiling, in one run, on the Redis at REDIS_URL
 * (default redis://127.0.0.1:6379).
 *
 * Publish: N records (40-byte JSON strings) over C customers into a RedisTimeSortedQueue
 * (lingerMs 1 h, so nothing falls due), fired 5,000 per tick, so the coalescer turns each tick
 * into one script call with variadic RPUSHes per customer. Compared with, in the same run:
 * - a naive design: one `ZADD NX` + `RPUSH` per record, pipelined 5,000 at a time;
 * - BullMQ adding the same number of delayed jobs (`addBulk`, 1,000 jobs per call);
 * - `redis-benchmark -t zadd -n 200000 -q` (50 clients, one ZADD per round trip) and the same
 *   with `-P 16`: the ceiling of one-member writes on this server.
 * Claim + ack: the published records claimed with `claim(100 × N/C, { force: true })`, i.e. 100
 * customers per claim, every batch acked (the acks of one tick coalesce into one script call).
 *
 * Each duebatch figure is the best of 3 repetitions (the machine is shared); BullMQ and the
 * naive design run once. Every key written is deleted afterwards.
 *
 * node --expose-gc --import tsx bench/redis.ts [--quick]
 */
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { defaultRedisUrl, RedisTimeSortedQueue } from '../src/redis/index.js';
import { printTable, quick, ratio, timeAsync, type Row } from './table.js';

const url = defaultRedisUrl();
const records = quick ? 50_000 : 200_000;
const customers = quick ? 2_500 : 10_000;
const perCustomer = records / customers;
const customersPerClaim = 100;
const repeats = quick ? 1 : 3;
const perTick = 5_000;
const value = JSON.stringify('order.created:4f9c2a7e1b3d5c6a8e0f12');
const prefix = `duebatch-bench:${process.pid}`;

const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
client.on('error', () => undefined);
try {
  await client.connect();
} catch {
  console.log(`\nredis: skipped, no Redis at ${url} (set REDIS_URL or start redis-server)`);
  process.exit(0);
}

const keyOf = (i: number): string => `customer-${i % customers}`;

async function deleteMatching(pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 10_000);
    cursor = next;
    if (keys.length > 0) await client.unlink(...keys);
  } while (cursor !== '0');
}

/** Publishes every record; returns records/s and the loaded queue. */
async function publishRun(run: number): Promise<{ perSecond: number; queue: RedisTimeSortedQueue<string, string> }> {
  const queue = new RedisTimeSortedQueue<string, string>({ redis: client, prefix: `${prefix}:${run}`, lingerMs: 3_600_000 });
  await queue.counts(); // scripts loaded before timing
  const ms = await timeAsync(async () => {
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < records; i += perTick) {
      for (let j = i; j < i + perTick; j++) inFlight.push(queue.publish(keyOf(j), value));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await Promise.all(inFlight);
  });
  const counts = await queue.counts();
  if (counts.pending !== records || counts.keys !== customers) throw new Error(`publish stored ${JSON.stringify(counts)}`);
  return { perSecond: (records / ms) * 1000, queue };
}

/** Claims 100 customers per call and acks every batch until the queue is empty; returns records/s. */
async function claimAckRun(queue: RedisTimeSortedQueue<string, string>): Promise<number> {
  let taken = 0;
  const ms = await timeAsync(async () => {
    for (let batches = await queue.claim(customersPerClaim * perCustomer, { force: true }); batches.length > 0;
      batches = await queue.claim(customersPerClaim * perCustomer, { force: true })) {
      if (batches.length !== customersPerClaim) throw new Error(`claimed ${batches.length} customers`);
      for (const batch of batches) taken += batch.values.length;
      await Promise.all(batches.map((batch) => queue.ack(batch)));
    }
  });
  if (taken !== records) throw new Error(`claimed ${taken} of ${records} records`);
  return (taken / ms) * 1000;
}

/** One `ZADD NX` + `RPUSH` per record, pipelined. */
async function naiveRun(): Promise<number> {
  const base = `{${prefix}:naive}`;
  const ms = await timeAsync(async () => {
    for (let i = 0; i < records; i += perTick) {
      const pipeline = client.pipeline();
      for (let j = i; j < i + perTick; j++) {
        pipeline.zadd(`${base}:ready`, 'NX', Date.now() + 3_600_000, keyOf(j));
        pipeline.rpush(`${base}:v:${keyOf(j)}`, value);
      }
      await pipeline.exec();
    }
  });
  await deleteMatching(`${base}:*`);
  return (records / ms) * 1000;
}

/** BullMQ adding the same number of delayed jobs, or `undefined` when it is not installed. */
async function bullRun(): Promise<number | undefined> {
  let bull: typeof import('bullmq');
  try {
    bull = await import('bullmq');
  } catch {
    return undefined;
  }
  const bullPrefix = `${prefix}:bull`;
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new bull.Queue('bench', { connection, prefix: bullPrefix });
  await queue.waitUntilReady();
  const ms = await timeAsync(async () => {
    for (let i = 0; i < records; i += 1000) {
      const jobs = Array.from({ length: Math.min(1000, records - i) }, (_, k) => ({
        name: 'record', data: { customer: keyOf(i + k), value }, opts: { delay: 3_600_000 },
      }));
      await queue.addBulk(jobs);
    }
  });
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect(); // BullMQ leaves a connection passed in open
  await deleteMatching(`${bullPrefix}:*`);
  return (records / ms) * 1000;
}

/** `redis-benchmark -t zadd` requests/s, or `undefined` when it cannot run. Uses db 9 and deletes its key. */
async function redisBenchmark(extra: string[]): Promise<number | undefined> {
  const { hostname, port } = new URL(url);
  const args = ['-h', hostname || '127.0.0.1', '-p', port || '6379', '--dbnum', '9', '-t', 'zadd', '-n', '200000', '-q', ...extra];
  const result = spawnSync('redis-benchmark', args, { encoding: 'utf8', timeout: 60_000 });
  const match = /ZADD: ([\d.]+) requests per second/.exec(`${result.stdout ?? ''}`);
  const db9 = new Redis(url, { db: 9 });
  await db9.del('myzset');
  db9.disconnect();
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

let publish = 0;
let claimAck = 0;
for (let run = 0; run < repeats; run++) {
  const { perSecond, queue } = await publishRun(run);
  publish = Math.max(publish, perSecond);
  claimAck = Math.max(claimAck, await claimAckRun(queue));
  await queue.clear();
}
const naive = await naiveRun();
const bull = await bullRun();
const zadd = await redisBenchmark([]);
const zaddPipelined = await redisBenchmark(['-P', '16']);
await deleteMatching(`{${prefix}*`);
client.disconnect();

const rows: Row[] = [
  { design: 'duebatch publish (coalesced per tick)', 'records/s': publish, 'duebatch vs it': ratio(publish, publish), note: `target >= 100,000: ${publish >= 100_000 ? 'met' : 'missed'}` },
  { design: 'naive ZADD NX + RPUSH per record, pipelined', 'records/s': naive, 'duebatch vs it': ratio(publish, naive), note: 'same run' },
];
if (bull !== undefined) rows.push({ design: 'BullMQ addBulk, delayed jobs', 'records/s': bull, 'duebatch vs it': ratio(publish, bull), note: 'same run' });
else rows.push({ design: 'BullMQ', 'records/s': 'n/a', 'duebatch vs it': '', note: 'bullmq not installed' });
for (const [name, rate] of [['redis-benchmark -t zadd (50 clients)', zadd], ['redis-benchmark -t zadd -P 16', zaddPipelined]] as const) {
  rows.push(rate === undefined
    ? { design: name, 'records/s': 'n/a', 'duebatch vs it': '', note: 'redis-benchmark not found' }
    : { design: name, 'records/s': rate, 'duebatch vs it': ratio(publish, rate), note: 'ceiling: one member per ZADD' });
}
printTable(`redis publish: ${records.toLocaleString('en-US')} records over ${customers.toLocaleString('en-US')} customers (${url})`, rows);
printTable(`redis claim + ack: ${customersPerClaim} customers (${customersPerClaim * perCustomer} records) per claim`, [
  { design: 'duebatch claim + ack', 'records/s': claimAck, note: `target >= 300,000: ${claimAck >= 300_000 ? 'met' : 'missed'}` },
]);
