/**
 * SortedQueue against the reference model, through the store-agnostic conformance runner
 * (test/conformance), which test/redis/conformance.test.ts runs against Redis too.
 */
import { describe, it } from 'vitest';
import { memoryStore } from '../conformance/memory-store.js';
import { checkConformance, setups } from '../conformance/run-against-model.js';

describe('SortedQueue against the reference model', () => {
  it.each(setups)('gives the same batches in the same order (maxBatchSize $maxBatchSize, perKeyOrder $perKeyOrder)', async (setup) => {
    await checkConformance(memoryStore, setup, { numRuns: 300 });
  });
});
