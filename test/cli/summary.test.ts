import { describe, expect, it } from 'vitest';
import type { DemoArgs } from '../../src/cli/args.js';
import type { LatencyReport } from '../../src/cli/latency.js';
import type { ReceiverCounts } from '../../src/cli/receiver.js';
import { buildSummary, formatSummary, type SummaryInputs } from '../../src/cli/summary.js';
import type { DispatcherStats } from '../../src/dispatch/dispatcher-events.js';

const args: DemoArgs = { customers: 200, rate: 20_000, lingerMs: 500, durationSeconds: 10, failRate: 0, producers: 4, redisUrl: undefined, json: false };

const receiver: ReceiverCounts = {
  requests: 4000,
  delivered: 200_000,
  duplicates: 0,
  duplicateRequests: 0,
  orderViolations: 0,
  misrouted: 0,
  customers: 200,
  signatureFailures: 0,
  injected: { serverErrors: 0, rateLimited: 0, resets: 0 },
};

const stats: DispatcherStats = {
  pending: 0,
  pendingKeys: 0,
  claimed: 0,
  inFlight: 0,
  sentBatches: 4000,
  sentValues: 200_000,
  requests: 4000,
  retries: 0,
  deadLetteredBatches: 0,
  deadLetteredValues: 0,
  pausedKeys: 0,
  latency: { count: 4000, p50: 510, p90: 530, p99: 560, max: 600 },
};

const latency: LatencyReport = {
  count: 200_000,
  p50: 256,
  p90: 470,
  p99: 540,
  max: 600,
  buckets: [
    { upToMs: 50, count: 20_000 },
    { upToMs: 100, count: 20_000 },
    { upToMs: 250, count: 60_000 },
    { upToMs: 500, count: 90_000 },
    { upToMs: 1000, count: 10_000 },
    { upToMs: 2500, count: 0 },
    { upToMs: null, count: 0 },
  ],
};

function inputs(overrides: Partial<SummaryInputs> = {}): SummaryInputs {
  return { args, elapsedMs: 10_400, producers: { published: 200_000, queueFull: 0 }, receiver, latency, stats, deadLetteredButDelivered: 0, ...overrides };
}

describe('buildSummary', () => {
  it('compares the requests made with one request per record', () => {
    const s = buildSummary(inputs());
    expect(s).toMatchObject({ published: 200_000, requests: 4000, requestReduction: 50, recordsPerRequest: 50 });
  });

  it('is ok when every published record was delivered', () => {
    expect(buildSummary(inputs())).toMatchObject({ lost: 0, ok: true });
  });

  it('counts records neither delivered nor dead-lettered as lost, and is not ok', () => {
    const s = buildSummary(inputs({ receiver: { ...receiver, delivered: 199_990 }, stats: { ...stats, deadLetteredValues: 4 } }));
    expect(s).toMatchObject({ lost: 6, deadLettered: 4, ok: false });
  });

  it('does not count dead-lettered records the receiver had accepted twice', () => {
    const s = buildSummary(inputs({ stats: { ...stats, deadLetteredValues: 50 }, deadLetteredButDelivered: 50 }));
    expect(s).toMatchObject({ lost: 0, deadLettered: 50, ok: true });
  });

  it('is not ok with an order violation, a signature failure or a misrouted record', () => {
    expect(buildSummary(inputs({ receiver: { ...receiver, orderViolations: 1 } })).ok).toBe(false);
    expect(buildSummary(inputs({ receiver: { ...receiver, signatureFailures: 1 } })).ok).toBe(false);
    expect(buildSummary(inputs({ receiver: { ...receiver, misrouted: 1 } })).ok).toBe(false);
  });

  it('counts what close left queued or claimed as pending', () => {
    expect(buildSummary(inputs({ stats: { ...stats, pending: 3, claimed: 2 } })).pending).toBe(5);
  });

  it('names the backend', () => {
    expect(buildSummary(inputs()).backend).toBe('memory');
    expect(buildSummary(inputs({ args: { ...args, redisUrl: 'redis://h' } })).backend).toBe('redis');
  });
});

describe('formatSummary', () => {
  const text = formatSummary(buildSummary(inputs()));

  it('says how many times fewer requests batching made', () => {
    expect(text).toContain('50× fewer than one request per record');
  });

  it('draws the latency histogram with bars proportional to the largest bucket', () => {
    expect(text).toContain(`≤500ms  ${'█'.repeat(30)}   45.0%  90,000`);
    expect(text).toContain(`≤250ms  ${'█'.repeat(20)}`);
    expect(text).toMatch(/>2\.5s\s+0\.0%  0/);
    expect(text).toContain('p50 256 ms   p90 470 ms   p99 540 ms   max 600 ms');
  });

  it('ends with the verdict', () => {
    expect(text.trimEnd().split('\n').at(-1)).toMatch(/^OK: 200,000 of 200,000 records arrived/);
    const failed = formatSummary(buildSummary(inputs({ receiver: { ...receiver, delivered: 1 } })));
    expect(failed.trimEnd().split('\n').at(-1)).toMatch(/^FAILED/);
  });
});
