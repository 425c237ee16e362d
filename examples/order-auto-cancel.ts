/**
 * Cancel an order 30 minutes after creation unless it was paid.
 *
 * Each new order schedules an auto-cancel job under the order's id; paying cancels the job.
 * Here 300 ms stands for the 30 minutes, so the example is over in well under a second:
 *
 *   npm run example -- order-auto-cancel
 */
import { DelayQueue } from 'duebatch';

/** Stands for 30 * 60 * 1000. */
const PAYMENT_WINDOW_MS = 300;

interface Order {
  id: string;
  customer: string;
  totalEur: number;
}

type Status = 'awaiting payment' | 'paid' | 'cancelled';

const orders = new Map<string, { order: Order; status: Status }>();
const startedAt = Date.now();
const log = (message: string): void => console.log(`${String(Date.now() - startedAt).padStart(4)} ms  ${message}`);

const autoCancel = new DelayQueue<Order>({
  // While orders await payment, the queue's timer keeps this script alive (a server stays alive
  // anyway). With nothing scheduled there is no timer at all, so the script then exits by itself.
  ref: true,
  handler: (job) => {
    const entry = orders.get(job.id);
    // Check the order itself: a payment may land just as the job runs.
    if (entry?.status !== 'awaiting payment') return;
    entry.status = 'cancelled';
    log(`cancelled ${job.id} (${job.payload.customer}, ${job.payload.totalEur} EUR): not paid in time`);
  },
  onDeadLetter: (job, error) => log(`could not cancel ${job.id}: ${String(error)}`),
});

async function placeOrder(order: Order): Promise<void> {
  orders.set(order.id, { order, status: 'awaiting payment' });
  await autoCancel.schedule(order.id, order, { delayMs: PAYMENT_WINDOW_MS });
  log(`placed ${order.id} for ${order.customer}; cancelled in ${PAYMENT_WINDOW_MS} ms unless paid`);
}

async function pay(id: string): Promise<void> {
  const entry = orders.get(id);
  if (entry === undefined || entry.status !== 'awaiting payment') return;
  entry.status = 'paid';
  const calledOff = await autoCancel.cancel(id);
  log(`${id} paid; auto-cancel ${calledOff ? 'called off' : 'had already run'}`);
}

await placeOrder({ id: 'order-1001', customer: 'Ada', totalEur: 42 });
await placeOrder({ id: 'order-1002', customer: 'Grace', totalEur: 17.5 });
await placeOrder({ id: 'order-1003', customer: 'Linus', totalEur: 99 });
setTimeout(() => void pay('order-1002'), 100);

// Fires once the last auto-cancel has run and the queue holds no timer.
process.once('beforeExit', () => {
  for (const { order, status } of orders.values()) log(`${order.id}: ${status}`);
  void autoCancel.close();
});
