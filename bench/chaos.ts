#!/usr/bin/env node
/**
 * `npm run chaos`: the fault harness. Parses the flags, runs the chaos (or load & memory)
 * scenario, prints the table and sets the exit code: 0 all checks passed, 1 a check failed
 * (something lost, a customer out of order, …), 2 bad flags (or `--redis` without a URL and no
 * redis-server installed).
 */
import { UsageError } from '../src/cli/usage-error.js';
import { chaosUsage, parseChaosArgs, type ChaosArgs } from './chaos/args.js';
import { formatReport } from './chaos/report-table.js';
import type { ChaosReport } from './chaos/report.js';
import { runChaos } from './chaos/run-chaos.js';
import { runLoad } from './chaos/run-load.js';
import type { ChaosIO } from './chaos/session.js';

async function main(argv: readonly string[]): Promise<number> {
  try {
    const parsed = parseChaosArgs(argv);
    if (parsed.help) {
      process.stdout.write(chaosUsage());
      return 0;
    }
    const { args } = parsed;
    const backend = args.backend === 'memory' ? 'in memory' : `on Redis (${args.redisUrl === undefined ? "a redis-server of the run's own" : 'the server given'})`;
    process.stderr.write(`chaos: ${args.scenario} scenario ${backend}, seed ${args.seed}, ${args.durationSeconds} s\n`);
    const report = await run(args, { stderr: process.stderr });
    process.stdout.write(formatReport(report));
    return report.ok ? 0 : 1;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`chaos: ${error.message}\nRun "npm run chaos -- --help" to see the flags.\n`);
    return 2;
  }
}

function run(args: ChaosArgs, io: ChaosIO): Promise<ChaosReport> {
  return args.scenario === 'load' ? runLoad(args, io) : runChaos(args, io);
}

// An exit code rather than process.exit(): the process ends once the run has closed everything,
// so a leaked timer or socket shows as a hang instead of being cut off.
process.exitCode = await main(process.argv.slice(2));
