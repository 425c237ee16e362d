/**
 * One dispatcher process, seen from the harness: started with its config in the environment,
 * its stdout read as messages, its stderr kept (the tail) for the report of a crash.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CONFIG_ENV, parseMessage, type DispatcherCounters, type DispatcherMessage, type DispatcherProcessConfig } from './dispatcher-protocol.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const script = fileURLToPath(new URL('./dispatcher-process.ts', import.meta.url));
const STDERR_TAIL_CHARS = 4_000;

/** How a child ended. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running dispatcher process. */
export class DispatcherChild {
  /** Resolves once the process has exited and its output is read. */
  readonly exited: Promise<ChildExit>;
  /** The last counters it reported (zero until the first report). */
  counters: DispatcherCounters = { sentBatches: 0, sentValues: 0, requests: 0, retries: 0, deadLetteredBatches: 0, deadLetteredValues: 0 };
  /** Whether the harness ended it on purpose (SIGKILL as a fault, SIGTERM at the end). */
  endedOnPurpose = false;
  #stderr = '';
  #ready = false;
  readonly #child: ChildProcess;

  /** Starts `dispatcher-process.ts`; `onMessage` hears every message after `ready`, in order. */
  constructor(
    readonly config: DispatcherProcessConfig,
    onMessage: (child: DispatcherChild, message: DispatcherMessage) => void,
  ) {
    this.#child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', script], {
      cwd: root,
      env: { ...process.env, [CONFIG_ENV]: JSON.stringify(config) },
      // stdin stays open: the child exits when it ends, so none outlives the harness.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => this.#child.once('close', (code, signal) => resolve({ code, signal })));
    this.#child.stderr?.on('data', (chunk: Buffer) => void (this.#stderr = (this.#stderr + chunk.toString()).slice(-STDERR_TAIL_CHARS)));
    // A write to a child that just died fails with EPIPE; its exit is what counts.
    this.#child.stdin?.on('error', () => undefined);
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      const message = parseMessage(line);
      if (message === undefined) return;
      if ('ready' in message) this.#ready = true;
      if ('counters' in message) this.counters = message.counters;
      if ('closed' in message) this.counters = message.closed;
      onMessage(this, message);
    });
  }

  get name(): string {
    return this.config.name;
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** The end of what it wrote on stderr. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Resolves once it printed `ready`; rejects when it exits first or `timeoutMs` passes. */
  async ready(timeoutMs: number): Promise<void> {
    const started = performance.now();
    while (!this.#ready) {
      if (!this.running) throw new Error(`${this.name} exited before it was ready; stderr:\n${this.#stderr}`);
      if (performance.now() - started > timeoutMs) throw new Error(`${this.name} not ready within ${timeoutMs} ms; stderr:\n${this.#stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Sends `signal` (on purpose), unless it has exited. */
  kill(signal: NodeJS.Signals): void {
    this.endedOnPurpose = true;
    if (this.running) this.#child.kill(signal);
  }

  /** Ends its stdin: it closes as on SIGTERM. */
  endInput(): void {
    this.#child.stdin?.end();
  }
}
