/**
 * The demo, start to end: an embedded receiver, a push client delivering to it, producers
 * publishing for `--duration`, progress meanwhile, then close (everything pending goes out)
 * and the summary.
 */
import { randomBytes } from 'node:crypto';
import type { DemoArgs } from './args.js';
import { createClient, type DemoClient } from './client.js';
import { startProducers, type Producers } from './producers.js';
import { startProgress, type ProgressSnapshot, type ProgressStream } from './progress.js';
import { startReceiver, type DemoReceiver } from './receiver.js';
import { buildSummary, formatSummary, type DemoSummary } from './summary.js';

/** Where the demo writes, and what stops it early. */
export interface DemoIO {
  /** The summary. */
  stdout: { write(text: string): unknown };
  /** Progress and dispatcher errors. */
  stderr: ProgressStream;
  /** Aborting it (Ctrl-C) ends publishing early; what was published is still delivered and summed up. */
  signal?: AbortSignal;
}

// The longest the final delivery may take; what is left after it is dead-lettered as `shutdown`.
const CLOSE_TIMEOUT_MS = 30_000;

/**
 * Runs the demo and prints its summary; resolves to the exit code: 0 when nothing was lost,
 * out of order, misrouted or badly signed, else 1.
 * @throws UsageError when the build cannot do what the flags ask (`--redis`)
 */
export async function runDemo(args: DemoArgs, io: DemoIO): Promise<number> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const receiver = await startReceiver({ secret, failRate: args.failRate });
  try {
    const client = await createClient(args, (customer) => `${receiver.url}/hooks/${encodeURIComponent(customer)}`, secret);
    const summary = await deliver(args, client, receiver, io);
    io.stdout.write(args.json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary));
    return summary.ok ? 0 : 1;
  } finally {
    await receiver.close();
  }
}

/** Publishes for the duration, closes the client, and sums up. */
async function deliver(args: DemoArgs, client: DemoClient, receiver: DemoReceiver, io: DemoIO): Promise<DemoSummary> {
  const started = performance.now();
  let deadLetteredButDelivered = 0;
  client.on('deadLetter', (letter) => {
    if (receiver.ledger.hasAccepted(letter.id)) deadLetteredButDelivered += letter.values.length;
  });
  client.on('error', (error) => io.stderr.write(`duebatch: dispatcher error: ${error.message}\n`));
  const producers = startProducers({
    publish: (customer, record) => client.publish(customer, record),
    producers: args.producers,
    rate: args.rate,
    customers: args.customers,
    durationMs: args.durationSeconds * 1000,
  });
  const stopEarly = (): void => producers.stop();
  io.signal?.addEventListener('abort', stopEarly, { once: true });
  let phase: ProgressSnapshot['phase'] = 'publishing';
  const progress = startProgress({
    stream: io.stderr,
    sample: () => sample(phase, performance.now() - started, client, producers, receiver),
  });
  try {
    await producers.finished;
    phase = 'delivering';
  } finally {
    io.signal?.removeEventListener('abort', stopEarly);
    await client.close({ timeoutMs: CLOSE_TIMEOUT_MS }).finally(() => progress.stop());
  }
  return buildSummary({
    args,
    elapsedMs: performance.now() - started,
    producers: producers.counts(),
    receiver: receiver.counts(),
    latency: receiver.ledger.latency.report(),
    stats: await client.stats(),
    deadLetteredButDelivered,
  });
}

async function sample(
  phase: ProgressSnapshot['phase'],
  elapsedMs: number,
  client: DemoClient,
  producers: Producers,
  receiver: DemoReceiver,
): Promise<ProgressSnapshot> {
  const stats = await client.stats();
  return {
    phase,
    elapsedMs,
    published: producers.counts().published,
    delivered: receiver.counts().delivered,
    requests: stats.requests,
    retries: stats.retries,
    p99Ms: receiver.ledger.latency.p99(),
  };
}
