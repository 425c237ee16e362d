/**
 * Starts `receiver.ts` in a child process and talks to it: its URL, its counters, and stopping it.
 * The child exits when its stdin closes, so it also goes when the bench dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

/** What the receiver has seen since it started, and its CPU time. */
export interface ReceiverStats {
  requests: number;
  bytes: number;
  records: number;
  cpuMs: number;
}

/** A running receiver process. */
export interface Receiver {
  /** `http://127.0.0.1:<port>/`: where to POST. */
  readonly url: string;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  stats(): Promise<ReceiverStats>;
  /** Ends the child (closes its stdin, then SIGKILL if it lingers) and waits for its exit. */
  stop(): Promise<void>;
}

const script = fileURLToPath(new URL('./receiver.ts', import.meta.url));

/** Spawns the receiver and resolves once it listens. */
export async function startReceiver(): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await readPort(child);
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/`,
    origin,
    async stats() {
      const response = await request(`${origin}/stats`);
      return (await response.body.json()) as ReceiverStats;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function readPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    if (child.stdout === null) {
      reject(new Error('the receiver has no stdout'));
      return;
    }
    const lines = createInterface({ input: child.stdout });
    const onExit = (code: number | null): void => reject(new Error(`the receiver exited (${code}) before listening`));
    child.once('exit', onExit);
    child.once('error', reject);
    lines.once('line', (line) => {
      child.off('exit', onExit);
      lines.close();
      child.stdout?.resume();
      resolve((JSON.parse(line) as { port: number }).port);
    });
  });
}
