/**
 * A priority queue on the generic sort key: support tickets per customer, the most urgent
 * customer first; ties by arrival. A customer's tickets go out together, at the place of
 * their most urgent ticket.
 *
 *   npm run example -- priority-queue
 */
import { SortedQueue } from 'duebatch';

type Priority = 'critical' | 'high' | 'normal';
const rank: Record<Priority, number> = { critical: 0, high: 1, normal: 2 };

const tickets = new SortedQueue<number, string, string>();
const open = (customer: string, priority: Priority, title: string): void => tickets.publish(rank[priority], customer, title);

open('acme', 'normal', 'invoice typo');
open('globex', 'high', 'login slow');
open('initech', 'normal', 'feature request');
open('acme', 'critical', 'checkout down'); // moves acme to the front, with both tickets

for (const batch of tickets.pull()) console.log(`${batch.key}: ${batch.values.join(', ')}`);
