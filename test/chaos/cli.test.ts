/**
 * `npm run chaos` as a user runs it, for what needs no run: the flags, `--help`, and the exit
 * code 2 of bad flags. The runs themselves are in chaos.test.ts and chaos-redis.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseChaosArgs } from '../../bench/chaos/args.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { runScript, type Run } from '../support/run-script.js';


/** Runs `bench/chaos.ts <args>` as the package script does. */
function chaos(args: string[], timeoutMs?: number): Promise<Run> {
  return runScript('bench/chaos.ts', args, timeoutMs);
}

describe('parseChaosArgs', () => {
  it('applies the defaults: 60 s, a random seed, the chaos scenario, in memory', () => {
    const parsed = parseChaosArgs([]);
    expect(parsed.help).toBe(false);
    if (parsed.help) return;
    expect(parsed.args).toMatchObject({ scenario: 'chaos', backend: 'memory', durationSeconds: 60, customers: 200, rate: 2000, lingerMs: 200 });
    expect(Number.isInteger(parsed.args.seed)).toBe(true);
  });

  it('reads every flag', () => {
    const parsed = parseChaosArgs(['--duration', '2.5', '--seed', '9', '--customers', '5', '--rate', '100', '--linger', '0', '--redis', '--scenario', 'chaos']);
    expect(parsed).toEqual({
      help: false,
      args: {
        scenario: 'chaos', backend: 'redis', redisUrl: undefined, seed: 9, durationSeconds: 2.5, customers: 5, rate: 100, lingerMs: 0,
        maxPending: 10_000, recordBytes: 1024,
      },
    });
  });

  it.each([
    [['--redis'], undefined],
    [['--redis', '--seed', '1'], undefined],
    [['--seed', '1', '--redis'], undefined],
    [['--redis', 'redis://127.0.0.1:6380/2'], 'redis://127.0.0.1:6380/2'],
    [['--redis=rediss://cache.example:6379'], 'rediss://cache.example:6379'],
  ])('%j runs on Redis, at %s (undefined: a redis-server of its own)', (argv, url) => {
    const parsed = parseChaosArgs(argv);
    expect(parsed).toMatchObject({ help: false, args: { backend: 'redis', redisUrl: url } });
  });

  it.each([
    [['--duration', '0'], '--duration'],
    [['--duration', ''], '--duration'],
    [['--seed', '-1'], undefined],
    [['--seed', '1.5'], '--seed'],
    [['--seed', '4294967296'], '--seed'],
    [['--customers', 'many'], '--customers'],
    [['--scenario', 'soak'], '--scenario'],
    [['--nope'], undefined],
    [['stray'], undefined],
    [['--rate'], undefined],
    [['--scenario', 'load', '--duration', '10', '--max-pending', '10000'], '--max-pending'],
    [['--redis', 'localhost:6379'], '--redis'],
    [['--redis', 'http://127.0.0.1:6379'], '--redis'],
    [['--redis', 'stray'], '--redis'],
    [['--scenario', 'load', '--redis'], '--scenario'],
  ])('%j is a usage error', (argv, flag) => {
    let error: unknown;
    try {
      parseChaosArgs(argv);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ code: 'ERR_USAGE', flag });
  });
});

describe.concurrent('npm run chaos', () => {
  it('--help explains every flag and exits 0', async () => {
    const run = await chaos(['--help']);
    expect(run.code).toBe(0);
    for (const flag of ['--scenario', '--duration', '--seed', '--customers', '--rate', '--linger', '--max-pending', '--record-bytes', '--redis', '--help']) {
      expect(run.stdout).toContain(flag);
    }
  });

  it('a bad flag exits 2 naming it', async () => {
    const run = await chaos(['--rate', 'fast']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--rate must be a positive number');
  });

  it('--redis with something other than a redis:// URL exits 2 naming the flag, before starting anything', async () => {
    const run = await chaos(['--redis', '127.0.0.1:6379', '--duration', '1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--redis takes no value');
    expect(run.stdout).toBe('');
  });
});
