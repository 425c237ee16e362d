/**
 * The short CI version of `npm run chaos -- --redis`: the chaos scenario in-process with a fixed
 * seed, on a redis-server of the run's own (AOF, appendfsync always) and two dispatcher
 * processes, the receiver failing in every way it knows while the run SIGKILLs a dispatcher
 * process, kills -9 and restarts Redis, and pauses it. Faults come every 0.3 to 0.8 s, in rounds
 * of every kind, so that the short run meets each kind. Only counts are asserted, never timing.
 *
 * Skipped when redis-server is not installed; under DUEBATCH_REQUIRE_REDIS=1 that fails instead,
 * as in the other Redis suites (test/redis/redis-helper.ts).
 */
import { describe, expect, it } from 'vitest';
import { redisServerInstalled } from '../../bench/chaos/own-redis.js';
import type { ChaosReport } from '../../bench/chaos/report.js';
import { runChaos } from '../../bench/chaos/run-chaos.js';

const installed = redisServerInstalled();
if (!installed) {
  const notice = 'redis-server is not on the PATH: the chaos run on Redis starts one of its own; set DUEBATCH_REQUIRE_REDIS=1 to fail instead';
  if (process.env['DUEBATCH_REQUIRE_REDIS'] === '1') throw new Error(notice);
  console.warn(`[duebatch] skipping the chaos run on Redis. ${notice}`);
}

/** The failed checks, named, so an assertion failure says which. */
const failedChecks = (report: ChaosReport): string[] => report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.value} ${c.detail}`);

describe.skipIf(!installed)('chaos harness, short run on Redis (own redis-server, 2 dispatcher processes, fixed seed)', () => {
  it('loses nothing and keeps each customer in order through SIGKILLed dispatchers, Redis killed -9 and restarted, and Redis paused', { timeout: 180_000 }, async () => {
    const report = await runChaos({
      backend: 'redis', seed: 20_241_130, durationSeconds: 8, customers: 50, rate: 400, lingerMs: 100,
      backendFaultEveryMs: [300, 800],
    });

    expect(failedChecks(report)).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.orderViolations).toBe(0);
    expect(report.pending).toBe(0);
    expect(report.published).toBeGreaterThan(1_000);
    expect(report.delivered + report.deadLettered - report.deadLetteredButDelivered - report.arrivedThoughRefused).toBe(report.published);
    // Every kind of backend fault was injected, not just configured.
    for (const kind of ['kill-dispatcher', 'restart-redis', 'pause-redis']) expect(report.backendFaults[kind], kind).toBeGreaterThan(0);
    // Redis was down while the producers published: those publishes were refused, and counted.
    expect(report.refusedStoreDown).toBeGreaterThan(0);
    // The receiver failed too, and the dispatchers retried.
    expect(report.faults.status503 + report.faults.status500 + report.faults.reset).toBeGreaterThan(0);
    expect(report.retries).toBeGreaterThan(0);
  });
});
