/**
 * RedisSortedQueue against the reference model: the same conformance runner as the in-memory
 * queue (test/conformance), fewer runs since every step is a few round trips. Time comes from
 * an injected ManualClock passed to every script (clock option), so leases and nack delays are
 * exercised without sleeping; production reads the server's TIME instead.
 */
import { afterAll, it } from 'vitest';
import { checkConformance, setups } from '../conformance/run-against-model.js';
import { describeRedis, testClient } from './redis-helper.js';
import { redisStore } from './redis-store.js';

describeRedis('RedisSortedQueue against the reference model', () => {
  const client = testClient();
  afterAll(() => client.quit());

  it.each(setups)('gives the same batches in the same order (maxBatchSize $maxBatchSize, perKeyOrder $perKeyOrder)', async (setup) => {
    await checkConformance(redisStore(client), setup, { numRuns: 40 });
  }, 120_000);
});
