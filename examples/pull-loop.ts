/**
 * A pull loop: your own consumer instead of the HTTP dispatcher. `claim` hands out due batches,
 * `ack` removes them for good, `nack` puts them back in front of the key for a retry.
 *
 *   npm run example -- pull-loop
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TimeSortedQueue } from 'duebatch';

const queue = new TimeSortedQueue<string, string>({ lingerMs: 50, maxBatchSize: 100 });

for (let i = 0; i < 12; i++) queue.publish(`device-${i % 3}`, `reading-${i}`);

let failedOnce = false;
while (queue.size > 0 || queue.claimedCount > 0) {
  const wait = queue.nextDueIn() ?? 0;
  if (wait > 0) await sleep(wait);
  for (const batch of queue.claim(500)) {
    // Pretend the first store attempt for device-1 fails: nack it for a retry in 20 ms.
    if (batch.key === 'device-1' && !failedOnce) {
      failedOnce = true;
      console.log(`${batch.key}: store failed, retrying batch ${batch.id}`);
      queue.nack(batch, { delayMs: 20 });
      continue;
    }
    console.log(`${batch.key}: stored ${batch.values.length} readings (batch ${batch.id}, attempt ${batch.attempt})`);
    queue.ack(batch);
  }
}
console.log('all readings stored');
