#!/usr/bin/env node
/**
 * The `duebatch` command (and `npm run demo`): parses the flags, runs the demo, and sets the
 * exit code: 0 all delivered, 1 a check failed, 2 bad flags.
 */
import { parseDemoArgs, usage } from './args.js';
import { runDemo } from './demo.js';
import { UsageError } from './usage-error.js';

async function main(argv: readonly string[]): Promise<number> {
  try {
    const parsed = parseDemoArgs(argv);
    if (parsed.help) {
      process.stdout.write(usage());
      return 0;
    }
    return await runInterruptible((signal) => runDemo(parsed.args, { stdout: process.stdout, stderr: process.stderr, signal }));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`duebatch: ${error.message}\nRun "duebatch --help" to see the flags.\n`);
    return 2;
  }
}

/** The first Ctrl-C aborts the signal (the demo winds down and sums up); a second one ends the process. */
async function runInterruptible<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const interrupt = new AbortController();
  const abort = (): void => interrupt.abort();
  process.once('SIGINT', abort);
  try {
    return await run(interrupt.signal);
  } finally {
    process.off('SIGINT', abort);
  }
}

// An exit code rather than process.exit(): the process ends when the demo has closed everything,
// so a leaked timer or socket shows as a hang instead of being cut off.
process.exitCode = await main(process.argv.slice(2));
