/** Every example runs to completion, as `npm run example -- NAME` runs it, and prints what it promises. */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { redisAvailable } from './redis/redis-helper.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

/** What each example must print; a new example without an entry here fails the suite. */
const expectations: Record<string, RegExp[]> = {
  'webhook-push': [/published 300 records in 3 requests/, /acme: 100 records, signature verified/],
  'pull-loop': [/device-1: store failed/, /device-1: stored 4 readings \(batch \S+, attempt 2\)/, /all readings stored/],
  'priority-queue': [/^acme: invoice typo, checkout down\nglobex: login slow\ninitech: feature request$/m],
  'weight-queue': [/round 1: marketplace \[sync orders\]; big-retailer \[sync catalog\]/, /round 2: small-shop \[sync catalog, sync orders\]/],
  'idle-timeout': [/grace offline/, /still online: ada/],
  'order-auto-cancel': [/order-1001: cancelled/, /order-1002: paid/, /order-1003: cancelled/],
  'redis-shared-queue': [
    /^4 processes shared one Redis queue: 2 producers published (\d+) records, 2 dispatchers delivered \1 in \d+ requests \(dispatcher A: \d+, dispatcher B: \d+\), lost 0$/m,
    /^keys under duebatch-example:\w+ deleted$/m,
  ],
};

/**
 * Examples that need a Redis server: skipped with the Redis suites' notice when none answers
 * (the helper fails the run instead under DUEBATCH_REQUIRE_REDIS=1).
 */
const needsRedis = new Set(['redis-shared-queue']);

const examples = readdirSync(new URL('../examples', import.meta.url))
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .map((file) => file.slice(0, -3));

describe('examples', () => {
  it('every example has expectations', () => {
    expect(examples.filter((name) => expectations[name] === undefined)).toEqual([]);
  });

  it.for(examples)('%s runs and prints what it promises', async (name, { skip }) => {
    if (needsRedis.has(name)) skip(!redisAvailable, 'Redis not reachable');
    const { stdout } = await run(process.execPath, ['--conditions=source', '--import', 'tsx', 'examples/run.ts', name], {
      cwd: root,
      timeout: 20_000,
    });
    for (const pattern of expectations[name] ?? []) expect(stdout).toMatch(pattern);
  });
});
