import { describe, expect, it } from 'vitest';
import { parseDemoArgs, usage, type DemoArgs } from '../../src/cli/args.js';
import { UsageError } from '../../src/cli/usage-error.js';

function run(argv: string[], env = {}): DemoArgs {
  const parsed = parseDemoArgs(argv, env);
  if (parsed.help) throw new Error('expected a run, got --help');
  return parsed.args;
}

function usageError(argv: string[]): UsageError {
  try {
    parseDemoArgs(argv, {});
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`expected a UsageError for ${argv.join(' ')}`);
}

describe('parseDemoArgs', () => {
  it('runs with the documented defaults when given no flags', () => {
    expect(run([])).toEqual({
      customers: 200,
      rate: 20_000,
      lingerMs: 500,
      durationSeconds: 10,
      failRate: 0,
      producers: 4,
      redisUrl: undefined,
      json: false,
    });
  });

  it('takes every value flag as "--flag value" or "--flag=value"', () => {
    const args = run(['--customers', '50', '--rate=2000', '--linger', '100', '--duration', '2.5', '--fail-rate=0.2', '--producers', '2', '--json']);
    expect(args).toEqual({ customers: 50, rate: 2000, lingerMs: 100, durationSeconds: 2.5, failRate: 0.2, producers: 2, redisUrl: undefined, json: true });
  });

  it('lets a later flag win over an earlier one', () => {
    expect(run(['--rate', '10', '--rate', '20']).rate).toBe(20);
  });

  it('accepts the edges of each range: linger 0, fail rate 0 and 1', () => {
    expect(run(['--linger', '0']).lingerMs).toBe(0);
    expect(run(['--fail-rate', '0']).failRate).toBe(0);
    expect(run(['--fail-rate', '1']).failRate).toBe(1);
  });

  describe('--redis [url]', () => {
    it('alone, uses REDIS_URL', () => {
      expect(run(['--redis'], { REDIS_URL: 'redis://cache:6380' }).redisUrl).toBe('redis://cache:6380');
    });

    it('alone and without REDIS_URL, uses the local default', () => {
      expect(run(['--redis']).redisUrl).toBe('redis://127.0.0.1:6379');
    });

    it('takes the next argument as its URL, or an inline one', () => {
      expect(run(['--redis', 'redis://h:1']).redisUrl).toBe('redis://h:1');
      expect(run(['--redis=rediss://h:2']).redisUrl).toBe('rediss://h:2');
    });

    it('does not swallow a following flag as its URL', () => {
      const args = run(['--redis', '--json']);
      expect(args.redisUrl).toBe('redis://127.0.0.1:6379');
      expect(args.json).toBe(true);
    });

    it('refuses a URL that is not redis:// or rediss://', () => {
      expect(usageError(['--redis', 'http://h']).flag).toBe('--redis');
    });
  });

  it('asks for help with --help or -h, whatever else is given', () => {
    expect(parseDemoArgs(['--help'], {})).toEqual({ help: true });
    expect(parseDemoArgs(['--rate', '5', '-h'], {})).toEqual({ help: true });
  });

  describe('bad flags: a UsageError naming the flag', () => {
    it.each([
      [['--rate', '-5'], '--rate', 'positive'],
      [['--rate', '0'], '--rate', 'positive'],
      [['--fail-rate', '2'], '--fail-rate', 'from 0 to 1'],
      [['--duration', 'abc'], '--duration', 'seconds'],
      [['--duration', ''], '--duration', 'seconds'],
      [['--customers', '1.5'], '--customers', 'integer'],
      [['--producers', '0'], '--producers', 'integer'],
      [['--linger', '-1'], '--linger', 'milliseconds'],
      [['--linger', 'Infinity'], '--linger', 'milliseconds'],
    ])('%j', (argv, flag, expected) => {
      const error = usageError(argv);
      expect(error.flag).toBe(flag);
      expect(error.message).toContain(flag);
      expect(error.message).toContain(expected);
      expect(error.message).toContain(JSON.stringify(argv[1]));
    });

    it('an unknown flag', () => {
      const error = usageError(['--nope']);
      expect(error.flag).toBe('--nope');
      expect(error.message).toBe('unknown flag --nope');
    });

    it('a value flag without its value', () => {
      expect(usageError(['--rate']).message).toMatch(/^--rate needs a value/);
    });

    it('a value given to a switch', () => {
      expect(usageError(['--json=yes']).message).toBe('--json takes no value');
    });

    it('a stray argument', () => {
      const error = usageError(['fast']);
      expect(error.flag).toBeUndefined();
      expect(error.message).toBe('unexpected argument "fast"');
    });
  });
});

describe('usage', () => {
  it('explains every flag, with its default', () => {
    const text = usage();
    for (const flag of ['--customers', '--rate', '--linger', '--duration', '--fail-rate', '--producers', '--redis [url]', '--json', '--help']) {
      expect(text).toContain(flag);
    }
    expect(text).toContain('(default 20000)');
    expect(text).toContain('redis://127.0.0.1:6379');
  });
});
