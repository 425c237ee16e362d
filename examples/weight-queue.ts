/**
 * A weight queue on the generic sort key with a comparator: tuples [weight, deadline] where
 * the heaviest customer goes first and, at equal weight, the earliest deadline.
 *
 *   npm run example -- weight-queue
 */
import { SortedQueue } from 'duebatch';

type Weight = [weight: number, deadline: number];

const jobs = new SortedQueue<Weight, string, string>({
  compare: (a, b) => b[0] - a[0] || a[1] - b[1],
});

jobs.publish([1, 300], 'small-shop', 'sync catalog');
jobs.publish([5, 900], 'big-retailer', 'sync catalog');
jobs.publish([5, 100], 'marketplace', 'sync orders');
jobs.publish([1, 100], 'small-shop', 'sync orders');

// Two at a time: whole batches only, and never more than asked for.
for (let round = 1; jobs.size > 0; round++) {
  const batches = jobs.pull(2);
  console.log(`round ${round}: ${batches.map((b) => `${b.key} [${b.values.join(', ')}]`).join('; ')}`);
}
