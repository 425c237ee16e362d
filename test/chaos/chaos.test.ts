/**
 * The short CI version of `npm run chaos`: the harness's run functions in-process, with fixed
 * seeds and small numbers, on the in-memory queue. These are real-time runs against a real
 * receiver (that is what they test); nothing is asserted about timing, only about counts.
 */
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../../bench/chaos/faults.js';
import type { ChaosReport } from '../../bench/chaos/report.js';
import { runChaos } from '../../bench/chaos/run-chaos.js';
import { runLoad } from '../../bench/chaos/run-load.js';

/** The failed checks, named, so an assertion failure says which. */
const failedChecks = (report: ChaosReport): string[] => report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.value} ${c.detail}`);

describe('chaos harness, short run (in memory, fixed seeds)', () => {
  it('loses nothing and keeps each customer in order while the receiver fails in every way it knows', { timeout: 90_000 }, async () => {
    const report = await runChaos({ backend: 'memory', seed: 20_240_601, durationSeconds: 8, customers: 100, rate: 2_000, lingerMs: 100 });

    expect(failedChecks(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.published).toBeGreaterThan(10_000);
    expect(report.lost).toBe(0);
    expect(report.orderViolations).toBe(0);
    expect(report.pending).toBe(0);
    expect(report.delivered + report.deadLettered - report.deadLetteredButDelivered).toBe(report.published);
    // Every kind of failure was met, not just configured.
    for (const kind of FAULT_KINDS) expect(report.faults[kind], kind).toBeGreaterThan(0);
    expect(report.faults.poison).toBeGreaterThan(0);
    // Lost responses (hangs after booking) made the sender deliver again; the receiver deduped.
    expect(report.deliveredTwice).toBeGreaterThan(0);
    // Bad input went to the dead-letter path with its reason, none of it to the receiver.
    expect(report.poisonPublished).toBeGreaterThan(0);
    expect(report.unserializablePublished).toBeGreaterThan(0);
    expect(report.deadLetterReasons.rejected).toBeGreaterThanOrEqual(report.poisonPublished);
    expect(report.deadLetterReasons.serialize).toBeGreaterThanOrEqual(report.unserializablePublished);
    expect(report.retries).toBeGreaterThan(0);
  });

  it('load: the queue fills to maxPending, refuses publishes, drains once the receiver is back, and the heap stays in bound', { timeout: 90_000 }, async () => {
    const maxPending = 1_000;
    // The outage (2 of 5 s at 1,500 records/s) tries 3,000 publishes against 1,000 held.
    const report = await runLoad({
      backend: 'memory', seed: 7, durationSeconds: 5, customers: 50, rate: 1_500, lingerMs: 100, maxPending, recordBytes: 4_096,
    });

    expect(failedChecks(report)).toEqual([]);
    expect(report.queueFull).toBeGreaterThan(0);
    expect(report.faults.outage).toBeGreaterThan(0);
    expect(report.lost).toBe(0);
    expect(report.deadLettered).toBe(0);
    expect(report.delivered).toBe(report.published);
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['filled to maxPending', 'backlog drained', 'live heap within bound']));
  });
});
