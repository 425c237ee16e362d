/**
 * The dispatcher against raw undici and the seed's one-POST-per-record designs, in one run, with
 * a receiver in another process on 127.0.0.1 (`support/receiver.ts`: node:http, keep-alive,
 * reads every body, answers 200 empty, counts records; on `/parse` it also JSON.parses the body).
 *
 * Throughput: 200k records of about 200 bytes (flat JSON objects) over 1k customers, 200 each,
 * in round-robin order. Compared, in the same run:
 * - raw undici: the batches the dispatcher builds (one per customer, a JSON array of its 200
 *   records), serialized before timing, POSTed through an undici `Pool` at the dispatcher's
 *   concurrency, connections and pipelining, with the same headers: the floor;
 * - the same, serializing each batch (`JSON.stringify`) in the loop: what serializing costs;
 * - duebatch: a `TimeSortedQueue` (lingerMs 5, maxBatchSize 200) and a `Dispatcher` over it;
 *   timed from the first publish to the end of `flush()`, publishing included;
 * - duebatch with records published as JSON strings and `serialize` joining them: the dispatcher
 *   without the cost of `JSON.stringify`, the fairest match for the pre-built floor;
 * - the floor and duebatch again against a receiver that `JSON.parse`s every body, as a real
 *   endpoint would at least;
 * - one POST per record over keep-alive connections (a `Pool`), and one per record on a new
 *   connection each time (a fresh undici `Client` per request: the seed's starting point). These
 *   run on a subset of the records; every comparison is a rate (records/s), so a subset is fair.
 *   Their bodies are serialized before timing too, which flatters them.
 * Each design's records/s is the best of the rounds (the machine is shared), CPU the median. CPU
 * is the client process's (user + system, all threads) per 1,000 records delivered; the
 * receiver's is shown beside it, to see which side is the bottleneck.
 *
 * Lateness: records arrive at a steady rate (20k and 100k records/s) over 1k customers, a random
 * customer each, lingerMs 100, for a start of 1 s and a steady part of 3 s; each rate runs 3
 * times, and the target takes the best run (noise only adds lateness). A batch is due at its
 * oldest record's publish time + lingerMs; its lateness is measured when the dispatcher claims
 * it (a `claim` override on the queue) and when its request starts (an undici `Agent` whose
 * `dispatch` notes the time, injected as the dispatcher's `dispatcher`, with the dispatcher's
 * own pool settings). Batches due in the start are reported apart: every customer's first
 * batch falls due in the same few milliseconds there. The event loop's own delay is shown
 * beside, to tell a late dispatcher from a process that was not running.
 *
 * Every run checks that the receiver counted exactly the records sent. The load average is
 * printed last: other work on the machine shows in every figure.
 *
 * node --expose-gc --import tsx bench/dispatch.ts [--quick]
 */
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Client, Pool } from 'undici';
import { Dispatcher } from '../src/dispatch/dispatcher.js';
import { TimeSortedQueue } from '../src/queue/time-sorted-queue.js';
import { median, percentile, TimedAgent, TimedQueue } from './support/lateness-probes.js';
import { post, runWithConcurrency } from './support/raw-post.js';
import { startReceiver, type Receiver, type ReceiverStats } from './support/receiver-process.js';
import { collect, printTable, quick, ratio, type Row } from './table.js';
import { buildBatches, makeRecords, type BenchRecord, type Workload } from './support/workload.js';

const customers = 1_000;
const recordsPerCustomer = 200;
const records = customers * recordsPerCustomer;
const concurrency = 16;
const connections = 16;
/** The dispatcher's default: undici pipelines a POST only when asked to, and the dispatcher does not by default. */
const pipelining = 1;
const lingerMs = 5;
const rounds = quick ? 2 : 7;
const keepAliveRecords = quick ? 5_000 : 20_000;
const newConnectionRecords = quick ? 1_000 : 3_000;

/** Bytes of JSON per record (about; ids vary in length). */
const recordBytes = 200;

const latenessLingerMs = 100;
const latenessWarmSeconds = quick ? 0.5 : 1;
const latenessSeconds = quick ? 1 : 3;
/** Records/s. At 100k, every customer has a batch due about every lingerMs: about as many batches per second as 1k customers can give. */
const latenessRates = [20_000, 100_000];
const latenessRuns = quick ? 1 : 3;

const customerKeys = Array.from({ length: customers }, (_, i) => `customer-${String(i).padStart(4, '0')}`);

/** What the throughput designs get ready-made. Built once, and dropped before the lateness runs so its heap does not slow their GCs. */
function buildWorkload(): Workload {
  return buildBatches(customerKeys, recordsPerCustomer, recordBytes, Math.max(keepAliveRecords, newConnectionRecords));
}

/** Runs `send(0..count-1)` with the dispatcher's concurrency. */
function runConcurrently(count: number, send: (i: number) => Promise<void>): Promise<void> {
  return runWithConcurrency(count, concurrency, send);
}

// --- throughput ---------------------------------------------------------------------------------

interface RunResult {
  records: number;
  ms: number;
  cpuMs: number;
  receiverCpuMs: number;
  requests: number;
}

interface Design {
  name: string;
  /** Where it POSTs: `/` (the receiver counts) or `/parse` (the receiver JSON.parses). */
  path: string;
  /** Records of one run (a subset for the per-record designs). */
  records: number;
  /** One timed run; resolves once the receiver has answered every request. */
  run(receiver: Receiver, workload: Workload): Promise<void>;
}

/** A body of records that are JSON already: the array around them. */
function joinJson(values: string[]): string {
  return `[${values.join(',')}]`;
}

/** Raw undici: the dispatcher's batches, serialized before timing (or, with `stringify`, in the loop), to `path`. */
function rawDesign(name: string, path: string, stringify: boolean): Design {
  return {
    name,
    path,
    records,
    async run(receiver, { batches, batchBodies }) {
      const pool = new Pool(receiver.origin, { connections, pipelining });
      const body = stringify ? (i: number) => JSON.stringify(batches[i]) : (i: number) => batchBodies[i]!;
      await runConcurrently(customers, (i) => post(pool, path, `msg_${i}`, body(i)));
      await pool.close();
    },
  };
}

/** duebatch: publish every record into a TimeSortedQueue, then `flush()` a Dispatcher over it, to `path`. */
function dispatcherDesign(name: string, path: string, preSerialized: boolean): Design {
  return {
    name,
    path,
    records,
    async run(receiver, workload) {
      const values: readonly unknown[] = preSerialized ? workload.recordJson : workload.records;
      const queue = new TimeSortedQueue<string, unknown>({ lingerMs, maxBatchSize: recordsPerCustomer });
      const dispatcher = new Dispatcher<string, unknown>({
        source: queue,
        endpoint: `${receiver.origin}${path}`,
        concurrency,
        connections,
        pipelining,
        ...(preSerialized ? { serialize: joinJson as (values: unknown[]) => string } : {}),
      });
      dispatcher.start();
      for (let i = 0; i < records; i++) queue.publish(customerKeys[i % customers]!, values[i]);
      await dispatcher.flush();
      const stats = await dispatcher.stats();
      await dispatcher.close();
      if (stats.sentValues !== records || stats.sentBatches !== customers) {
        throw new Error(`${name}: the dispatcher sent ${stats.sentValues} records in ${stats.sentBatches} batches`);
      }
    },
  };
}

const designs: Design[] = [
  rawDesign('raw undici Pool, pre-built batches', '/', false),
  rawDesign('raw undici Pool, JSON.stringify per batch', '/', true),
  dispatcherDesign('duebatch TimeSortedQueue + Dispatcher', '/', false),
  dispatcherDesign('duebatch, records pre-serialized (serialize = join)', '/', true),
  rawDesign('raw, pre-built; receiver JSON.parses', '/parse', false),
  dispatcherDesign('duebatch; receiver JSON.parses', '/parse', false),
  {
    name: 'one POST per record, keep-alive Pool',
    path: '/',
    records: keepAliveRecords,
    async run(receiver, { recordBodies }) {
      const pool = new Pool(receiver.origin, { connections, pipelining });
      await runConcurrently(keepAliveRecords, (i) => post(pool, '/', `msg_rec_${i}`, recordBodies[i]!));
      await pool.close();
    },
  },
  {
    name: 'one POST per record, new connection each (seed)',
    path: '/',
    records: newConnectionRecords,
    async run(receiver, { recordBodies }) {
      await runConcurrently(newConnectionRecords, async (i) => {
        const client = new Client(receiver.origin, { pipelining });
        await post(client, '/', `msg_new_${i}`, recordBodies[i]!);
        await client.close();
      });
    },
  },
];

function diff(after: ReceiverStats, before: ReceiverStats): ReceiverStats {
  return {
    requests: after.requests - before.requests,
    bytes: after.bytes - before.bytes,
    records: after.records - before.records,
    cpuMs: after.cpuMs - before.cpuMs,
  };
}

async function measure(design: Design, receiver: Receiver, workload: Workload): Promise<RunResult> {
  collect();
  const before = await receiver.stats();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await design.run(receiver, workload);
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const seen = diff(await receiver.stats(), before);
  if (seen.records !== design.records) throw new Error(`${design.name}: the receiver counted ${seen.records} records of ${design.records}`);
  return { records: design.records, ms, cpuMs: (used.user + used.system) / 1000, receiverCpuMs: seen.cpuMs, requests: seen.requests };
}

interface Summary {
  best: number;
  median: number;
  cpuPer1k: number;
  receiverCpuPer1k: number;
  requests: number;
}

/** Every design once as a warm-up, then `rounds` rounds, the designs taking turns in a rotating order. */
async function runThroughput(receiver: Receiver): Promise<Map<string, Summary>> {
  const workload = buildWorkload();
  for (const design of designs) await measure(design, receiver, workload);
  const results = new Map<string, RunResult[]>(designs.map((design) => [design.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < designs.length; i++) {
      const design = designs[(i + round) % designs.length]!;
      results.get(design.name)!.push(await measure(design, receiver, workload));
    }
  }
  return new Map(
    [...results].map(([name, runs]) => {
      const rates = runs.map((run) => (run.records / run.ms) * 1000);
      return [
        name,
        {
          best: Math.max(...rates),
          median: median(rates),
          cpuPer1k: median(runs.map((run) => (run.cpuMs / run.records) * 1000)),
          receiverCpuPer1k: median(runs.map((run) => (run.receiverCpuMs / run.records) * 1000)),
          requests: runs[0]!.requests,
        },
      ];
    }),
  );
}

// --- lateness -----------------------------------------------------------------------------------

/** A seeded generator (mulberry32), so every run sees the same customers. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

interface LatenessResult {
  rate: number;
  published: number;
  batches: number;
  claim: { start: number[]; steady: number[] };
  request: { start: number[]; steady: number[] };
  /** Age of the oldest record when its batch was acked, steady batches only. */
  ackAge: number[];
  /** How late the event loop ran a 1 ms timer during the steady part: p99 and max, ms. */
  loopDelayP99: number;
  loopDelayMax: number;
  cpuPer1k: number;
  cpuPerRequestUs: number;
}

/** The lateness runs' values: a few records are enough, and keep the heap small. */
const latenessRecords = makeRecords(customerKeys, customers, recordBytes);

/** Publishes `total` records at `rate` records/s to random customers, in 1 ms ticks that catch up on the schedule. */
function publishAtRate(queue: TimeSortedQueue<string, BenchRecord>, rate: number, total: number): Promise<void> {
  const pick = random(rate);
  const start = performance.now();
  let published = 0;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000));
      for (; published < due; published++) queue.publish(customerKeys[Math.floor(pick() * customers)]!, latenessRecords[published % customers]!);
      if (published === total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
}

/**
 * Publishes at `rate` records/s for `latenessWarmSeconds` + `latenessSeconds`, then flushes. Batches due in the first `latenessWarmSeconds` are the start
 * (every customer's first batch falls due in the same short span), the rest the steady state.
 */
async function runLateness(receiver: Receiver, rate: number): Promise<LatenessResult> {
  const queue = new TimedQueue<string, BenchRecord>({ lingerMs: latenessLingerMs, maxBatchSize: recordsPerCustomer });
  // The dispatcher's own Agent, with its defaults, but noting when each request starts.
  const agent = new TimedAgent({ connections, pipelining, keepAliveTimeout: 4_000, headersTimeout: 10_000, bodyTimeout: 10_000 }, queue.dueById);
  const dispatcher = new Dispatcher<string, BenchRecord>({ source: queue, endpoint: receiver.url, concurrency, dispatcher: agent });
  const total = Math.round(rate * (latenessWarmSeconds + latenessSeconds));
  const steadyFrom = queue.now() + latenessWarmSeconds * 1000;
  const ackAge: number[] = [];
  dispatcher.on('sent', ({ batch, latencyMs }) => {
    if (batch.enqueuedAt + latenessLingerMs >= steadyFrom) ackAge.push(latencyMs);
  });
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  collect();
  const before = await receiver.stats();
  const cpu = process.cpuUsage();
  dispatcher.start();
  const steadyTimer = setTimeout(() => {
    loopDelay.enable();
    loopDelay.reset();
  }, latenessWarmSeconds * 1000);
  await publishAtRate(queue, rate, total);
  loopDelay.disable();
  clearTimeout(steadyTimer);
  // What still lingers is forced out by the flush, not due yet: the queue does not count forced claims.
  await dispatcher.flush();
  const used = process.cpuUsage(cpu);
  const stats = await dispatcher.stats();
  await dispatcher.close();
  await agent.close();
  const seen = diff(await receiver.stats(), before);
  if (seen.records !== total || stats.sentValues !== total) throw new Error(`lateness at ${rate}/s: sent ${stats.sentValues}, received ${seen.records} of ${total}`);
  const cpuMs = (used.user + used.system) / 1000;
  return {
    rate,
    published: total,
    batches: stats.sentBatches,
    claim: queue.claims.split(steadyFrom),
    request: agent.starts.split(steadyFrom),
    ackAge,
    loopDelayP99: loopDelay.percentile(99) / 1e6,
    loopDelayMax: loopDelay.max / 1e6,
    cpuPer1k: (cpuMs / total) * 1000,
    cpuPerRequestUs: (cpuMs * 1000) / stats.requests,
  };
}

// --- report -------------------------------------------------------------------------------------

const loadBefore = loadavg()[0]!;
const receiver = await startReceiver();
let throughput: Map<string, Summary>;
const lateness: LatenessResult[] = [];
try {
  throughput = await runThroughput(receiver);
  for (let run = 0; run < latenessRuns; run++) for (const rate of latenessRates) lateness.push(await runLateness(receiver, rate));
} finally {
  await receiver.stop();
}

const [rawRow, rawJsonRow, oursRow, , rawParseRow, oursParseRow, keepAliveRow, newConnectionRow] = designs as [Design, Design, Design, Design, Design, Design, Design, Design];
const of = (design: Design): Summary => throughput.get(design.name)!;
const raw = of(rawRow);
const ours = of(oursRow);
const keepAlive = of(keepAliveRow);
const newConnection = of(newConnectionRow);
/** The raw floor posting to the same receiver route as `design`. */
const floorOf = (design: Design): Summary => of(designs.find((other) => other.path === design.path)!);

printTable(
  `dispatch: ${records.toLocaleString('en-US')} records of ~${recordBytes} B over ${customers.toLocaleString('en-US')} customers to a receiver process; ` +
    `concurrency ${concurrency}, ${connections} connections, pipelining ${pipelining}; records/s best of ${rounds}, CPU median. ` +
    'Per-record rows run on a subset (records column); every ratio is of records/s',
  designs.map((design): Row => {
    const result = of(design);
    return {
      design: design.name,
      records: design.records,
      requests: result.requests,
      'rec/s best': result.best,
      'rec/s median': result.median,
      'vs raw (same receiver)': ratio(result.best, floorOf(design).best),
      'vs per-record keep-alive': ratio(result.best, keepAlive.best),
      'vs per-record new conn': ratio(result.best, newConnection.best),
      'client CPU ms/1k rec': result.cpuPer1k,
      'receiver CPU ms/1k rec': result.receiverCpuPer1k,
    };
  }),
);

const steadyP99 = (result: LatenessResult): number => percentile(result.request.steady, 0.99);
printTable(
  `dispatch, lateness: records at a steady rate over ${customers.toLocaleString('en-US')} random customers, lingerMs ${latenessLingerMs}, ` +
    `${latenessWarmSeconds} s start + ${latenessSeconds} s steady, ${latenessRuns} run(s) per rate. Lateness = moment - (oldest record published + lingerMs), ms, ` +
    'of batches that fell due (not the final flush); claim: the dispatcher takes the batch; request: undici is handed the request; ' +
    'loop delay: how late the event loop ran a 1 ms timer (steady part)',
  lateness.map((result): Row => ({
    'rate rec/s': result.rate,
    batches: result.batches,
    'rec/batch': result.published / result.batches,
    'claim p50': percentile(result.claim.steady, 0.5),
    'claim p99': percentile(result.claim.steady, 0.99),
    'request p50': percentile(result.request.steady, 0.5),
    'request p99': steadyP99(result),
    'request max': percentile(result.request.steady, 1),
    'start: p99': percentile(result.request.start, 0.99),
    'start: max': percentile(result.request.start, 1),
    'ack age p99': percentile(result.ackAge, 0.99),
    'loop delay p99': result.loopDelayP99,
    'loop delay max': result.loopDelayMax,
    'client CPU ms/1k rec': result.cpuPer1k,
    'client CPU us/request': result.cpuPerRequestUs,
  })),
);

/** Per rate, the runs' steady request-start p99s, their best (noise only adds lateness) and their median. */
const p99ByRate = latenessRates.map((rate) => {
  const p99s = lateness.filter((result) => result.rate === rate).map(steadyP99);
  return { rate, p99s, best: Math.min(...p99s), median: median(p99s) };
});
const worst = p99ByRate.reduce((a, b) => (b.best > a.best ? b : a));
const bestAndMedian = (result: Summary, floor: Summary): string => `${ratio(result.best, floor.best)} (median ${ratio(result.median, floor.median)})`;
const targets: [string, string, boolean | undefined, string][] = [
  ['records/s vs raw undici (pre-built batches) >= 0.8x', bestAndMedian(ours, raw), ours.best / raw.best >= 0.8,
    `vs raw + JSON.stringify: ${ratio(ours.best, of(rawJsonRow).best)}; receiver JSON.parses: ${ratio(of(oursParseRow).best, of(rawParseRow).best)}`],
  ['records/s vs one POST per record, new connection >= 100x', bestAndMedian(ours, newConnection), ours.best / newConnection.best >= 100, ''],
  ['records/s vs one POST per record, keep-alive >= 15x', bestAndMedian(ours, keepAlive), ours.best / keepAlive.best >= 15, ''],
  ['release lateness p99 <= 10 ms (request start, steady)', `${worst.best.toFixed(2)} ms (median ${worst.median.toFixed(2)})`, worst.best <= 10,
    `best of runs at ${worst.rate.toLocaleString('en-US')} rec/s; all runs: ${p99ByRate.map(({ rate, p99s }) => `${rate / 1000}k: ${p99s.map((p) => p.toFixed(1)).join(', ')}`).join('; ')}`],
  ['client CPU per 1,000 records (no target)', `${ours.cpuPer1k.toFixed(2)} ms`, undefined,
    `raw: ${raw.cpuPer1k.toFixed(2)}, raw + JSON.stringify: ${of(rawJsonRow).cpuPer1k.toFixed(2)}, one POST per record: ${keepAlive.cpuPer1k.toFixed(1)}`],
];
printTable(
  quick ? 'targets (quick run: fewer rounds, smaller subsets, shorter lateness runs)' : 'targets',
  targets.map(([target, measured, met, context]) => ({ target, measured, met: met === undefined ? '-' : met ? 'yes' : 'NO', context })),
);
console.log(`\nload average (1 min) on ${availableParallelism()} cores: ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`);
