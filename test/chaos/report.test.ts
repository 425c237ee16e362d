/** The harness's accounting, without a run: the lost formula, the dead-letter tally and the table. */
import { describe, expect, it } from 'vitest';
import type { ChaosReceiverCounts } from '../../bench/chaos/chaos-receiver.js';
import { DeadLetterTally } from '../../bench/chaos/dead-letter-tally.js';
import { zeroFaultCounts } from '../../bench/chaos/faults.js';
import { formatReport } from '../../bench/chaos/report-table.js';
import { buildReport, type ReportInputs } from '../../bench/chaos/report.js';
import type { DeadLetter, DispatcherStats } from '../../src/index.js';

function receiver(delivered: number, more: Partial<ChaosReceiverCounts> = {}): ChaosReceiverCounts {
  return {
    delivered, duplicates: 0, duplicateRequests: 0, orderViolations: 0, misrouted: 0, customers: 3,
    requests: 10, signatureFailures: 0, malformed: 0, faults: zeroFaultCounts(), ...more,
  };
}

function stats(more: Partial<DispatcherStats> = {}): DispatcherStats {
  return {
    pending: 0, pendingKeys: 0, claimed: 0, inFlight: 0, sentBatches: 0, sentValues: 0, requests: 10, retries: 0,
    deadLetteredBatches: 0, deadLetteredValues: 0, pausedKeys: 0, latency: { count: 0, p50: 0, p90: 0, p99: 0, max: 0 }, ...more,
  };
}

function inputs(more: Partial<ReportInputs>): ReportInputs {
  return {
    settings: { scenario: 'chaos', backend: 'memory', seed: 1, durationSeconds: 1, customers: 3, rate: 100, lingerMs: 10, maxPending: 1000 },
    elapsedMs: 1000,
    producers: { published: 100, queueFull: 0 },
    marks: { poison: 0, unserializable: 0 },
    receiver: receiver(100),
    latency: { count: 100, p50: 1, p90: 2, p99: 3, max: 4, buckets: [] },
    deadLetters: { values: 0, batches: 0, byReason: {}, deliveredAnyway: 0 },
    stats: stats(),
    heap: { baselineBytes: 1, highWaterBytes: 2, samples: 2 },
    backendFaults: {},
    dispatcherErrors: 0,
    scenarioChecks: [],
    ...more,
  };
}

function letter(id: string, values: number, code: 'rejected' | 'exhausted'): DeadLetter<string, unknown> {
  return { id, key: 'c', values: Array.from({ length: values }, (_, i) => i), attempts: 1, reason: { code, message: code }, at: 0 };
}

describe('lost = published − delivered − dead-lettered − pending', () => {
  it('is 0 when every record is delivered, dead-lettered or still pending', () => {
    const report = buildReport(inputs({
      receiver: receiver(90),
      deadLetters: { values: 7, batches: 2, byReason: { rejected: 7 }, deliveredAnyway: 0 },
      stats: stats({ pending: 2, claimed: 1, deadLetteredValues: 7 }),
    }));
    expect(report).toMatchObject({ lost: 0, pending: 3, deadLettered: 7, ok: true });
  });

  it('does not subtract twice a record the receiver accepted and the dispatcher then dead-lettered', () => {
    // 100 published: 95 accepted by the receiver, of which 5 were dead-lettered anyway (every response lost); 5 more dead-lettered.
    const report = buildReport(inputs({
      receiver: receiver(95),
      deadLetters: { values: 10, batches: 2, byReason: { exhausted: 5, rejected: 5 }, deliveredAnyway: 5 },
      stats: stats({ deadLetteredValues: 10 }),
    }));
    expect(report.lost).toBe(0);
    expect(report.ok).toBe(true);
  });

  it('fails the run when a record is missing, and when one is counted twice', () => {
    const missing = buildReport(inputs({ receiver: receiver(99) }));
    expect(missing.lost).toBe(1);
    expect(missing.ok).toBe(false);
    const twice = buildReport(inputs({ receiver: receiver(101, { orderViolations: 1 }) }));
    expect(twice.lost).toBe(-1);
    expect(twice.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['lost', 'order violations']);
  });

  it('leaves publishes refused on Redis out of published, and adds back the refused ones that arrived anyway', () => {
    // 100 publishes counted by the producers: 10 refused with ERR_STORE (2 of them stored anyway and delivered), 1 with ERR_SERIALIZE.
    const report = buildReport(inputs({ receiver: receiver(91), refusals: { storeDown: 10, cannotEncode: 1, arrivedAnyway: 2 } }));
    expect(report).toMatchObject({ published: 89, refusedStoreDown: 10, refusedCannotEncode: 1, arrivedThoughRefused: 2, lost: 0, ok: true });
    const text = formatReport(report);
    expect(text).toMatch(/^ {2}published +89 +10 more refused: store down/m);
    expect(text).toMatch(/^ {2}delivered though refused +2/m);
  });

  it('fails the run when the dead-letter events and the dispatcher stats disagree', () => {
    const report = buildReport(inputs({ stats: stats({ deadLetteredValues: 3 }), receiver: receiver(100) }));
    expect(report.checks.find((c) => c.name === 'dead letters agree')?.ok).toBe(false);
  });

  it("adds the scenario's own checks", () => {
    const report = buildReport(inputs({ scenarioChecks: [{ name: 'backlog drained', ok: false, value: 'never', detail: '' }] }));
    expect(report.ok).toBe(false);
  });
});

describe('DeadLetterTally', () => {
  it('counts records by reason, and those the receiver had accepted', () => {
    const accepted = new Set(['b']);
    const tally = new DeadLetterTally((id) => accepted.has(id));
    tally.add(letter('a', 3, 'rejected'));
    tally.add(letter('b', 2, 'exhausted'));
    tally.add(letter('c', 1, 'rejected'));
    expect(tally.counts()).toEqual({ values: 6, batches: 3, byReason: { rejected: 4, exhausted: 2 }, deliveredAnyway: 2 });
  });
});

describe('formatReport', () => {
  it('prints one table with the records, each fault, the checks, the heap high-water and the p99 latency', () => {
    const faults = { ...zeroFaultCounts(), status429: 4, hang: 2 };
    const text = formatReport(buildReport(inputs({
      receiver: receiver(95, { faults, duplicates: 3, duplicateRequests: 1 }),
      deadLetters: { values: 5, batches: 1, byReason: { rejected: 5 }, deliveredAnyway: 0 },
      stats: stats({ deadLetteredValues: 5 }),
      heap: { baselineBytes: 10 * 1_048_576, highWaterBytes: 42 * 1_048_576, samples: 9 },
    })));
    expect(text).toMatch(/^ {2}published +100/m);
    expect(text).toMatch(/^ {2}delivered \(unique\) +95/m);
    expect(text).toMatch(/^ {2}delivered twice +3 +same webhook-id/m);
    expect(text).toMatch(/^ {2}dead-lettered +5 +rejected 5/m);
    expect(text).toMatch(/^ {2}still pending +0/m);
    expect(text).toMatch(/^ {2}lost +0/m);
    expect(text).toMatch(/^ {2}429 \+ Retry-After +4/m);
    expect(text).toMatch(/^ {2}hang past timeout +2/m);
    expect(text).toMatch(/^ {2}heap high-water +42\.0 MB/m);
    expect(text).toMatch(/^ {2}p99 latency +3 ms/m);
    expect(text).toMatch(/^OK: /m);
  });

  it('names the failed checks on its last line', () => {
    const text = formatReport(buildReport(inputs({ receiver: receiver(98) })));
    expect(text).toMatch(/^FAILED: lost \(2\)$/m);
  });
});
