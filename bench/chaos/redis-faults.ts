/**
 * The Redis backend's own failures, injected one at a time during a chaos run (see
 * `backend-faults.ts`), each with seeded parameters:
 *
 * - `kill-dispatcher`: SIGKILL one dispatcher process (its claims come back after their lease,
 *   what it sent without acking is sent again under the same `webhook-id`), and start another
 *   after 0.2 to 1 s.
 * - `restart-redis`: kill -9 the run's own redis-server and start it again on the same port and
 *   dir after 0.3 to 1.5 s. With `appendfsync always`, what was acknowledged survives; publishes
 *   meanwhile fail with `ERR_STORE`, and the clients reconnect by themselves.
 * - `pause-redis`: `CLIENT PAUSE <0.5 to 2 s> ALL` on the run's own server: every command waits.
 * - `drop-connections`, only on a Redis given by URL (shared: never restarted or paused): `CLIENT
 *   KILL` every connection of the run (they carry its connection name); the clients reconnect.
 *   (Known to find a bug: ioredis reconnects within 100 ms and resends the publishes that were in
 *   flight, which Redis may already have run, so a record can be stored twice.)
 */
import { Redis } from 'ioredis';
import type { BackendFault } from './client.js';
import type { DispatcherPool } from './dispatcher-pool.js';
import type { OwnRedis } from './own-redis.js';
import type { Random } from './random.js';

/** What the faults act on. */
export interface RedisFaultTargets {
  pool: DispatcherPool;
  /** The run's own server; `undefined` on a Redis given by URL. */
  server: OwnRedis | undefined;
  /** Where to send `CLIENT` commands (the server's URL, without the run's connection name). */
  adminUrl: string;
  /** The name every connection of the run carries (`CLIENT SETNAME`). */
  connectionName: string;
  /** Draws the faults' parameters (downtimes, pause lengths, which process). */
  random: Random;
}

/** The faults of the backend: three with an own server, two on a shared one. */
export function redisFaults(targets: RedisFaultTargets): BackendFault[] {
  const { pool, server, random } = targets;
  const between = (min: number, max: number): number => min + random() * (max - min);
  const faults: BackendFault[] = [{ name: 'kill-dispatcher', inject: async () => void (await pool.killOne(random, between(200, 1_000))) }];
  if (server !== undefined) {
    faults.push(
      {
        name: 'restart-redis',
        async inject() {
          await server.kill();
          await new Promise((resolve) => setTimeout(resolve, between(300, 1_500)));
          await server.restart();
        },
      },
      { name: 'pause-redis', inject: () => server.pause(between(500, 2_000)) },
    );
  } else {
    faults.push({ name: 'drop-connections', inject: () => dropConnections(targets.adminUrl, targets.connectionName) });
  }
  return faults;
}

/** `CLIENT KILL ID` for every connection named `name`; throws when there was none (the fault did nothing). */
async function dropConnections(url: string, name: string): Promise<void> {
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null });
  admin.on('error', () => undefined);
  try {
    await admin.connect();
    const list = String(await admin.call('CLIENT', 'LIST'));
    const ids = list
      .split('\n')
      .map((line) => Object.fromEntries(line.trim().split(' ').map((field) => field.split('=', 2) as [string, string])))
      .filter((fields) => fields['name'] === name)
      .map((fields) => String(fields['id']));
    if (ids.length === 0) throw new Error(`no connection named ${name} to drop`);
    for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', id);
  } finally {
    admin.disconnect();
  }
}
