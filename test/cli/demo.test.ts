/**
 * The demo as a user runs it: a child process, flags in, exit code and output out.
 * Small settings keep each run to a few seconds.
 */
import { describe, expect, it, vi } from 'vitest';
import type { DemoSummary } from '../../src/cli/summary.js';
import { redisAvailable, redisUrl, testClient } from '../redis/redis-helper.js';
import { runScript, type Run } from '../support/run-script.js';


/** Runs `src/cli/main.ts <args>` as the package script does. */
function duebatch(args: string[], timeoutMs?: number): Promise<Run> {
  return runScript('src/cli/main.ts', args, timeoutMs);
}

// 20 customers at 2000 records/s get 100 records/s each: about 20 per 200 ms window.
const small = ['--duration', '2', '--customers', '20', '--rate', '2000', '--linger', '200', '--json'];

describe.concurrent('npm run demo', () => {
  it('delivers every record, in order and signed, in far fewer requests than records', async () => {
    const run = await duebatch(small);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as DemoSummary;
    expect(summary.published).toBeGreaterThan(0);
    expect(summary.delivered).toBe(summary.published);
    expect(summary.lost).toBe(0);
    expect(summary.pending).toBe(0);
    expect(summary.requests).toBeLessThan(summary.published / 5);
    expect(summary.orderViolations).toBe(0);
    expect(summary.signatureFailures).toBe(0);
    expect(summary.ok).toBe(true);
  });

  it('with --fail-rate 0.2, retries the failed requests and still loses nothing, counting redeliveries as duplicates', async () => {
    const run = await duebatch([...small, '--fail-rate', '0.2']);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as DemoSummary;
    expect(summary.retries).toBeGreaterThan(0);
    expect(summary.lost).toBe(0);
    expect(summary.deadLettered).toBe(0);
    // Resets after acceptance make the sender deliver some batches twice; each record still counts once.
    expect(summary.duplicates).toBeGreaterThan(0);
    expect(summary.delivered).toBe(summary.published);
    expect(summary.orderViolations).toBe(0);
  });

  it('without --json, prints the summary as text and progress lines on stderr', async () => {
    const run = await duebatch(['--duration', '2.5', '--customers', '20', '--rate', '1000', '--linger', '100']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/× fewer than one request per record/);
    expect(run.stdout).toMatch(/Delivery latency/);
    expect(run.stdout).toMatch(/^OK: /m);
    // Not a terminal: plain lines, every 2 s.
    expect(run.stderr).toMatch(/^publishing \d+\.\ds \| published [\d,]+ \| delivered/m);
    expect(run.stderr).not.toContain('\r');
  });

  it('--help explains every flag and exits 0', async () => {
    const run = await duebatch(['--help']);
    expect(run.code).toBe(0);
    for (const flag of ['--customers', '--rate', '--linger', '--duration', '--fail-rate', '--producers', '--redis', '--json', '--help']) {
      expect(run.stdout).toContain(flag);
    }
  });

  it.each([
    [['--rate', '-5'], '--rate'],
    [['--fail-rate', '2'], '--fail-rate'],
    [['--nope'], '--nope'],
    [['--duration', 'abc'], '--duration'],
  ])('%j: a message naming the flag on stderr, exit code 2', async (args, flag) => {
    const run = await duebatch(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(flag);
    expect(run.stderr).toContain('--help');
    expect(run.stdout).toBe('');
  });

  it.skipIf(!redisAvailable)('--redis: every record arrives through Redis, and the run leaves no keys behind', async () => {
    const admin = testClient();
    const demoKeys = async (): Promise<string[]> => admin.keys('{duebatch-demo:*');
    const before = new Set(await demoKeys());
    const run = await duebatch(['--redis', redisUrl, ...small]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as DemoSummary;
    expect(summary.backend).toBe('redis');
    expect(summary.published).toBeGreaterThan(0);
    expect(summary.delivered).toBe(summary.published);
    expect(summary.lost).toBe(0);
    expect(summary.pending).toBe(0);
    expect(summary.orderViolations).toBe(0);
    expect(summary.signatureFailures).toBe(0);
    // Each run has a random prefix of its own, not printed: no key made since the run started may
    // be left (waiting a little, in case another run on this server overlapped ours).
    try {
      await vi.waitFor(async () => expect((await demoKeys()).filter((key) => !before.has(key))).toEqual([]), { timeout: 10_000, interval: 200 });
    } finally {
      await admin.quit();
    }
  });

  it('--redis with a Redis that does not answer: a one-line message naming the URL, exit code 2', async () => {
    const run = await duebatch(['--redis', 'redis://127.0.0.1:1', '--duration', '1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^duebatch: Redis at redis:\/\/127\.0\.0\.1:1 does not answer \(.+\)/);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(run.stdout).toBe('');
  });
});
