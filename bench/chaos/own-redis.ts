/**
 * A redis-server of our own, for the chaos run and the Redis restart tests: on a free port of
 * 127.0.0.1, persisting to a temp dir with `appendonly yes` and `appendfsync always` (every
 * acknowledged write is on disk before its reply, so a kill -9 loses nothing that was
 * acknowledged) and no RDB snapshots. It can be killed with SIGKILL and started again on the same
 * port and dir, and paused with `CLIENT PAUSE`; a missing or failing redis-server is a clear
 * error with the log tail. The shared server on 6379 keeps nothing on disk and is never touched.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';

// How long a (re)start may take before it is a failure; a loaded CI machine can be slow.
const START_TIMEOUT_MS = 20_000;
const LOG_TAIL_CHARS = 2_000;

/** Whether `redis-server` can be run (it is on the PATH). */
export function redisServerInstalled(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

/** A free TCP port of 127.0.0.1 (free now: another process may take it before it is used). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A redis-server of the run's own. */
export class OwnRedis {
  #process: ChildProcess | undefined;
  #log = '';

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  /** Starts a server on a free port and a new temp dir; resolves once it answers PING. */
  static async start(): Promise<OwnRedis> {
    const server = new OwnRedis(await freePort(), mkdtempSync(join(tmpdir(), 'duebatch-own-redis-')));
    try {
      await server.restart();
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Whether the server process is running. */
  get running(): boolean {
    const child = this.#process;
    return child?.pid !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /**
   * Starts the server (again) on the same port and dir; resolves once it answers PING (the AOF is
   * loaded by then). Probes every 10 ms.
   */
  async restart(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#process = child;
    const keep = (chunk: Buffer): void => void (this.#log = (this.#log + chunk.toString()).slice(-LOG_TAIL_CHARS));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let failed: Error | undefined;
    const died = new Promise<Error>((resolve) => {
      const fail = (error: Error): void => resolve((failed ??= error));
      child.once('error', fail);
      child.once('exit', (code, signal) => fail(new Error(`redis-server exited at start (code ${code}, signal ${signal}); its log ends:\n${this.#log}`)));
    });
    const answered = this.#waitForPing(() => failed !== undefined).then(() => undefined, (error: unknown) => error as Error);
    const outcome = await Promise.race([answered, died]);
    if (outcome !== undefined) throw outcome;
  }

  /** kill -9: no shutdown, no final write; what the AOF holds is what survives. */
  async kill(): Promise<void> {
    const child = this.#process;
    if (child === undefined || !this.running) {
      this.#process = undefined;
      return;
    }
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.#process = undefined;
  }

  /**
   * `CLIENT PAUSE <ms> ALL`: every client's commands wait (none fails) until the pause ends.
   * Resolves once it has ended.
   */
  async pause(ms: number): Promise<void> {
    const admin = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null });
    admin.on('error', () => undefined);
    try {
      await admin.connect();
      await admin.call('CLIENT', 'PAUSE', String(Math.round(ms)), 'ALL');
    } finally {
      // The admin connection is paused too: drop it rather than wait to say QUIT.
      admin.disconnect();
    }
    await delay(ms);
  }

  /** Kills the server and deletes its dir. */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Probes until PING answers; gives up at the start deadline or once `gaveUp()` (the process died). */
  async #waitForPing(gaveUp: () => boolean): Promise<void> {
    const deadline = performance.now() + START_TIMEOUT_MS;
    for (;;) {
      // No ready check: ioredis waits a second when it finds the server loading; PING answers LOADING instead, and is asked again.
      const probe = new Redis(this.url, { lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch (error) {
        // Not listening yet, or still loading the AOF (PING answers LOADING).
        if (performance.now() > deadline || gaveUp()) throw error;
      } finally {
        probe.disconnect();
      }
      await delay(10);
    }
  }
}
