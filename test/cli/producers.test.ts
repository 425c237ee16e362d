import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startProducers, type DemoRecord, type ProducerOptions } from '../../src/cli/producers.js';
import { QueueClosedError, QueueFullError } from '../../src/errors.js';

// The loops read performance.now() for what is due and Date.now() for the records' timestamps.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function collect(overrides: Partial<ProducerOptions> = {}) {
  const published: DemoRecord[] = [];
  const producers = startProducers({
    publish: (customer, record) => {
      expect(record.customer).toBe(customer);
      published.push(record);
    },
    producers: 4,
    rate: 1000,
    customers: 10,
    durationMs: 2000,
    ...overrides,
  });
  return { producers, published };
}

describe('the demo producers', () => {
  it('publish rate × duration records in all, then stop', async () => {
    const { producers, published } = collect();
    await vi.advanceTimersByTimeAsync(2000);
    await producers.finished;
    expect(published).toHaveLength(2000);
    expect(producers.counts()).toEqual({ published: 2000, queueFull: 0 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(published).toHaveLength(2000);
  });

  it('share the rate over time, a tick at a time', async () => {
    const { published } = collect();
    await vi.advanceTimersByTimeAsync(500);
    expect(published).toHaveLength(500);
  });

  it("number each customer's records 0, 1, 2, … across all producers", async () => {
    const { producers, published } = collect();
    await vi.advanceTimersByTimeAsync(2000);
    await producers.finished;
    const bySeq = new Map<string, number[]>();
    for (const record of published) bySeq.set(record.customer, [...(bySeq.get(record.customer) ?? []), record.seq]);
    expect(bySeq.size).toBe(10);
    for (const seqs of bySeq.values()) expect(seqs).toEqual(seqs.map((_, i) => i));
  });

  it('publish to customer-0 … customer-<n-1>', async () => {
    const { producers, published } = collect({ customers: 3 });
    await vi.advanceTimersByTimeAsync(2000);
    await producers.finished;
    expect(new Set(published.map((r) => r.customer))).toEqual(new Set(['customer-0', 'customer-1', 'customer-2']));
  });

  it('stamp each record with Date.now() at publish', async () => {
    const { published } = collect();
    const start = Date.now();
    await vi.advanceTimersByTimeAsync(100);
    expect(published.at(-1)?.at).toBe(start + 100);
  });

  it('count publishes refused with QueueFullError and carry on', async () => {
    let calls = 0;
    const producers = startProducers({
      publish: () => {
        if (++calls % 2 === 0) throw new QueueFullError(10);
      },
      producers: 1,
      rate: 100,
      customers: 5,
      durationMs: 1000,
    });
    await vi.advanceTimersByTimeAsync(1000);
    await producers.finished;
    expect(producers.counts()).toEqual({ published: 50, queueFull: 50 });
  });

  it('count a promise-returning publish once it resolves', async () => {
    const producers = startProducers({
      publish: () => Promise.resolve(),
      producers: 2,
      rate: 100,
      customers: 5,
      durationMs: 1000,
    });
    await vi.advanceTimersByTimeAsync(1000);
    await producers.finished;
    expect(producers.counts().published).toBe(100);
  });

  it('stop at the first other publish error, and reject finished with it', async () => {
    const producers = startProducers({
      publish: () => Promise.reject(new QueueClosedError()),
      producers: 2,
      rate: 100,
      customers: 5,
      durationMs: 1000,
    });
    const finished = expect(producers.finished).rejects.toBeInstanceOf(QueueClosedError);
    await vi.advanceTimersByTimeAsync(1000);
    await finished;
  });

  it('stop early on stop()', async () => {
    const { producers, published } = collect();
    await vi.advanceTimersByTimeAsync(300);
    producers.stop();
    await producers.finished;
    await vi.advanceTimersByTimeAsync(1000);
    expect(published).toHaveLength(300);
  });
});
