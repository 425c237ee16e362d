/**
 * Several processes sharing one queue on Redis: 2 producer processes publish records for 20
 * customers, 2 dispatcher processes deliver them, and a receiver in this process dedupes the
 * requests on `webhook-id` and counts what each dispatcher brought. Every process only shares
 * the key prefix; Redis decides who sends what. Needs a Redis at $REDIS_URL (else 127.0.0.1:6379).
 *
 *   npm run example -- redis-shared-queue
 *
 * This file is all four roles: run by `examples/run.ts` it is the parent; the parent forks it
 * again (same Node flags) as `producer <name>` or `dispatcher <name>`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { StoreError } from 'duebatch';
import { createPushClient, defaultRedisUrl, RedisTimeSortedQueue } from 'duebatch/redis';

const RECORDS_PER_PRODUCER = 600;
const CUSTOMERS = 20;
const LINGER_MS = 200;
const GIVE_UP_AFTER_MS = 15_000;

/** What the children tell the parent (over the IPC channel `fork` opens). */
type ChildMessage = { type: 'ready' } | { type: 'published'; count: number };
/** What the parent tells the children. */
type ParentMessage = { type: 'go' } | { type: 'stop' };

interface ChildConfig {
  name: string;
  prefix: string;
  url: string;
}

const [role, name = '?', prefix = '', url = ''] = process.argv.slice(2);
if (role === 'producer') await runProducer({ name, prefix, url });
else if (role === 'dispatcher') await runDispatcher({ name, prefix, url });
else await runParent();

// --- the children -----------------------------------------------------------------------------

function tell(message: ChildMessage): void {
  process.send?.(message);
}

function onParent(handler: (message: ParentMessage) => void): void {
  process.on('message', (message) => handler(message as ParentMessage));
}

/** Publishes its records once the parent says go; a producer has no dispatcher of its own. */
async function runProducer({ name, prefix }: ChildConfig): Promise<void> {
  const queue = new RedisTimeSortedQueue<string, { producer: string; n: number }>({ prefix, lingerMs: LINGER_MS });
  await new Promise<void>((resolve) => {
    onParent((message) => message.type === 'go' && resolve());
    tell({ type: 'ready' });
  });
  // Spread over about a second, a tick's publishes going to Redis as one script call.
  for (let n = 0; n < RECORDS_PER_PRODUCER; n += 60) {
    const tick: Promise<void>[] = [];
    for (let i = n; i < Math.min(n + 60, RECORDS_PER_PRODUCER); i++) tick.push(queue.publish(`customer-${i % CUSTOMERS}`, { producer: name, n: i }));
    await Promise.all(tick);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  tell({ type: 'published', count: RECORDS_PER_PRODUCER });
  await queue.quit();
  process.disconnect();
}

/** A push client that never publishes: it delivers whatever any producer put on the prefix. */
async function runDispatcher({ name, prefix, url }: ChildConfig): Promise<void> {
  const client = createPushClient<string, unknown>({
    prefix,
    lingerMs: LINGER_MS,
    endpoint: (customer) => `${url}/hooks/${customer}`,
    headers: { 'x-dispatcher': name },
    concurrency: 2,
  });
  await client.queue.wakeReady(); // hears every publish from now on
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      // Finishes its own requests; anything still pending stays in Redis for the other dispatchers.
      await client.close();
      if (process.connected) process.disconnect();
    })());
  onParent((message) => void (message.type === 'stop' && stop()));
  process.once('disconnect', () => void stop()); // the parent went away
  tell({ type: 'ready' });
}

// --- the parent -------------------------------------------------------------------------------

/** The customers' endpoint: dedupes on webhook-id, counts records per dispatcher. */
function startReceiver(): { server: Server; listening: Promise<string>; counts: { records: number; requests: number; duplicates: number; by: Map<string, number> } } {
  const seen = new Set<string>();
  const counts = { records: 0, requests: 0, duplicates: 0, by: new Map<string, number>() };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (seen.has(id)) counts.duplicates++;
      else {
        seen.add(id);
        const records = (JSON.parse(Buffer.concat(chunks).toString()) as unknown[]).length;
        const dispatcher = String(req.headers['x-dispatcher']);
        counts.requests++;
        counts.records += records;
        counts.by.set(dispatcher, (counts.by.get(dispatcher) ?? 0) + records);
      }
      // A little work per request, so a dispatcher's slots fill and the other takes its share.
      setTimeout(() => res.writeHead(204).end(), 10);
    });
  });
  const listening = new Promise<string>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
  return { server, listening, counts };
}

async function runParent(): Promise<void> {
  const redisUrl = defaultRedisUrl();
  const prefix = `duebatch-example:${randomBytes(6).toString('hex')}`;
  // The parent's own handle on the queue: to check Redis answers, and to delete the keys at the end.
  const queue = new RedisTimeSortedQueue({ prefix, redis: redisUrl });
  try {
    await queue.now();
  } catch (error) {
    await queue.quit();
    if (!(error instanceof StoreError)) throw error;
    console.error(`Redis not reachable at ${redisUrl}: start redis-server or set REDIS_URL (${error.message})`);
    process.exitCode = 1;
    return;
  }
  const receiver = startReceiver();
  const url = await receiver.listening;
  const children: ChildProcess[] = [];
  const start = (role: string, name: string): ChildProcess => {
    // The same file and the same Node flags as this process (`--conditions=source --import tsx`).
    const child = fork(fileURLToPath(import.meta.url), [role, name, prefix, url], { execArgv: ['--conditions=source', '--import', 'tsx'] });
    children.push(child);
    return child;
  };
  try {
    const dispatchers = [start('dispatcher', 'A'), start('dispatcher', 'B')];
    const producers = [start('producer', 'P1'), start('producer', 'P2')];
    // Settles only by rejecting: when a child fails, or when the run takes far too long.
    const failure = new Promise<never>((_, reject) => {
      for (const child of children) child.once('exit', (code) => code !== 0 && reject(new Error(`a child process failed (exit code ${code})`)));
      setTimeout(() => reject(new Error(`no result after ${GIVE_UP_AFTER_MS} ms`)), GIVE_UP_AFTER_MS).unref();
    });
    const orFail = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, failure]);

    await orFail(Promise.all(children.map((child) => next(child, 'ready'))));
    for (const producer of producers) producer.send({ type: 'go' } satisfies ParentMessage);
    const reports = await orFail(Promise.all(producers.map((producer) => next(producer, 'published'))));
    const published = reports.reduce((sum, report) => sum + report.count, 0);
    await orFail(until(() => receiver.counts.records >= published));
    for (const dispatcher of dispatchers) dispatcher.send({ type: 'stop' } satisfies ParentMessage);
    await orFail(Promise.all(children.map(exited)));

    const { records, requests, duplicates, by } = receiver.counts;
    console.log(
      `4 processes shared one Redis queue: 2 producers published ${published} records, ` +
        `2 dispatchers delivered ${records} in ${requests} requests ` +
        `(dispatcher A: ${by.get('A') ?? 0}, dispatcher B: ${by.get('B') ?? 0}), lost ${published - records}`,
    );
    if (duplicates > 0) console.log(`  ${duplicates} redelivered requests ignored by webhook-id`);
  } catch (error) {
    console.error(`redis-shared-queue failed: ${(error as Error).message}`);
    process.exitCode = 1;
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
    await queue.clear();
    await queue.quit();
    receiver.server.close();
    console.log(`keys under ${prefix} deleted`);
  }
}

/** Resolves once `condition()` holds, checking every 20 ms. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The next message of `type` from `child`. */
function next<T extends ChildMessage['type']>(child: ChildProcess, type: T): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve) => {
    const listener = (message: ChildMessage): void => {
      if (message.type !== type) return;
      child.off('message', listener);
      resolve(message as Extract<ChildMessage, { type: T }>);
    };
    child.on('message', listener);
  });
}

/** Resolves with the child's exit code. */
function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}
