/**
 * Idle timeouts with a TimerWheel: mark a user offline after 30 s without a keepalive.
 * Every packet touches the user's timer in O(1). Here 400 ms stands for the 30 s.
 *
 *   npm run example -- idle-timeout
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TimerWheel } from 'duebatch';

const started = Date.now();
const online = new Set<string>();
const wheel = new TimerWheel<string>({
  timeoutMs: 400,
  tickMs: 50,
  onExpire: (users) => {
    for (const user of users) {
      online.delete(user);
      console.log(`${String(Date.now() - started).padStart(4)} ms  ${user} offline`);
    }
  },
});

const packet = (user: string): void => {
  if (!online.has(user)) console.log(`${String(Date.now() - started).padStart(4)} ms  ${user} online`);
  online.add(user);
  wheel.touch(user);
};

packet('ada');
packet('grace');
for (let i = 0; i < 12; i++) {
  await sleep(50);
  packet('ada'); // ada keeps sending keepalives; grace goes quiet
}
await sleep(50);
console.log(`still online: ${[...online].join(', ') || 'nobody'}`);
wheel.close();
