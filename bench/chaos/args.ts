/**
 * The chaos harness's command line: the flags, their defaults, their validation and the
 * `--help` text, from one table so the help cannot drift from what is parsed.
 */
import { parseArgs } from 'node:util';
import { UsageError } from '../../src/cli/usage-error.js';
import type { BackendName } from './client.js';
import { randomSeed } from './random.js';
import type { ScenarioName } from './report.js';
import { OUTAGE_SHARE } from './run-load.js';

// The load scenario's outage must try at least this many times maxPending, so that the queue
// fills well before the receiver returns, and a queue that ignored its bound would break the heap bound.
const OUTAGE_PRESSURE = 2;

/** What a run is asked to do. */
export interface ChaosArgs {
  scenario: ScenarioName;
  backend: BackendName;
  /** `--redis <url>`: the Redis to use; `undefined` with a bare `--redis` (a redis-server of the run's own) and in memory. */
  redisUrl: string | undefined;
  /** The seed of every random decision; printed, so a run can be repeated. */
  seed: number;
  durationSeconds: number;
  customers: number;
  rate: number;
  lingerMs: number;
  /** Load scenario: the queue's bound. */
  maxPending: number;
  /** Load scenario: padding per record. */
  recordBytes: number;
}

/** The help text, or a run. */
export type ParsedChaosArgs = { help: true } | { help: false; args: ChaosArgs };

type NumericField = 'seed' | 'durationSeconds' | 'customers' | 'rate' | 'lingerMs' | 'maxPending' | 'recordBytes';

interface NumberFlag {
  field: NumericField;
  placeholder: string;
  /** `undefined`: drawn at random (the seed). */
  default: number | undefined;
  /** Completes "--flag must be …". */
  expected: string;
  accepts(value: number): boolean;
  description: string;
}

const isInteger = (min: number, max: number) => (n: number): boolean => Number.isInteger(n) && n >= min && n <= max;

const NUMBER_FLAGS: Readonly<Record<string, NumberFlag>> = {
  duration: {
    field: 'durationSeconds', placeholder: '<s>', default: 60, expected: 'a positive number of seconds',
    accepts: (n) => n > 0, description: 'Seconds of publishing; then all that is pending is delivered and the run stops',
  },
  seed: {
    field: 'seed', placeholder: '<n>', default: undefined, expected: 'an integer from 0 to 4294967295',
    accepts: isInteger(0, 2 ** 32 - 1), description: 'Seed of every random decision (faults, customers, jitter)',
  },
  customers: {
    field: 'customers', placeholder: '<n>', default: 200, expected: 'an integer from 1 to 1000000',
    accepts: isInteger(1, 1_000_000), description: 'Customers the records go to, each with its own endpoint',
  },
  rate: {
    field: 'rate', placeholder: '<records/s>', default: 2_000, expected: 'a positive number of records per second',
    accepts: (n) => n > 0, description: 'Records published per second, over all producers',
  },
  linger: {
    field: 'lingerMs', placeholder: '<ms>', default: 200, expected: 'a number of milliseconds >= 0',
    accepts: (n) => n >= 0, description: "How long a customer's records wait to go out together",
  },
  'max-pending': {
    field: 'maxPending', placeholder: '<n>', default: 10_000, expected: 'an integer from 1 to 100000000',
    accepts: isInteger(1, 100_000_000), description: 'Load scenario: the queue bound the outage fills',
  },
  'record-bytes': {
    field: 'recordBytes', placeholder: '<n>', default: 1_024, expected: 'an integer from 0 to 10000000',
    accepts: isInteger(0, 10_000_000), description: 'Load scenario: padding per record, in bytes',
  },
};

const SCENARIOS: readonly ScenarioName[] = ['chaos', 'load'];

const PARSE_OPTIONS = {
  ...Object.fromEntries(Object.keys(NUMBER_FLAGS).map((name) => [name, { type: 'string' as const }])),
  scenario: { type: 'string' as const },
  // `--redis [url]`: node:util has no optional values; a bare --redis is rewritten to `--redis=` first.
  redis: { type: 'string' as const },
  help: { type: 'boolean' as const, short: 'h' },
};

/**
 * Parses the harness's flags (without `node` and the script). A missing `--seed` is drawn at random.
 * @throws {@link UsageError} naming the flag for an unknown flag, a missing value or a value out of range
 */
export function parseChaosArgs(argv: readonly string[]): ParsedChaosArgs {
  const { values } = parseStrict(withBareRedis(argv));
  if (values['help'] === true) return { help: true };
  const redis = values['redis'];
  const args: ChaosArgs = {
    scenario: parseScenario(values['scenario']),
    backend: typeof redis === 'string' ? 'redis' : 'memory',
    redisUrl: typeof redis === 'string' && redis !== '' ? parseRedisUrl(redis) : undefined,
    seed: 0,
    durationSeconds: 0,
    customers: 0,
    rate: 0,
    lingerMs: 0,
    maxPending: 0,
    recordBytes: 0,
  };
  for (const [name, flag] of Object.entries(NUMBER_FLAGS)) {
    const text = values[name];
    args[flag.field] = typeof text === 'string' ? parseNumber(`--${name}`, flag, text) : (flag.default ?? randomSeed());
  }
  if (args.scenario === 'load' && args.backend === 'redis') {
    throw new UsageError('--scenario', '--scenario load measures the in-memory queue (its bound and the heap it holds); it does not run with --redis');
  }
  if (args.scenario === 'load') checkOutageFills(args);
  return { help: false, args };
}

/** A bare `--redis` (last, or followed by another flag) becomes `--redis=`, so that the URL after it is optional. */
function withBareRedis(argv: readonly string[]): string[] {
  return argv.map((arg, i) => (arg === '--redis' && (argv[i + 1] === undefined || argv[i + 1]?.startsWith('-') === true) ? '--redis=' : arg));
}

function parseRedisUrl(text: string): string {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    throw new UsageError('--redis', `--redis takes no value (a redis-server of the run's own) or a redis:// URL, got ${JSON.stringify(text)}`);
  }
  return text;
}

/** The load scenario is only a test of the bound if its outage sees well over `maxPending` publishes. */
function checkOutageFills(args: ChaosArgs): void {
  const outagePublishes = args.rate * args.durationSeconds * OUTAGE_SHARE;
  if (outagePublishes < OUTAGE_PRESSURE * args.maxPending) {
    throw new UsageError(
      '--max-pending',
      `--scenario load needs --rate × --duration × ${OUTAGE_SHARE} (the publishes during the outage, ${Math.round(outagePublishes)}) ` +
        `to be at least ${OUTAGE_PRESSURE} × --max-pending (${args.maxPending}): raise --rate or --duration, or lower --max-pending`,
    );
  }
}

function parseStrict(argv: readonly string[]): { values: Readonly<Record<string, string | boolean | undefined>> } {
  try {
    return parseArgs({ args: [...argv], options: PARSE_OPTIONS, strict: true, allowPositionals: false });
  } catch (error) {
    // node:util's parse errors carry stable codes (ERR_PARSE_ARGS_UNKNOWN_OPTION, …); their message names the flag.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) throw new UsageError(undefined, (error as Error).message);
    throw error;
  }
}

function parseScenario(text: string | boolean | undefined): ScenarioName {
  if (text === undefined) return 'chaos';
  const scenario = SCENARIOS.find((name) => name === text);
  if (scenario === undefined) throw new UsageError('--scenario', `--scenario must be one of ${SCENARIOS.join(', ')}, got ${JSON.stringify(text)}`);
  return scenario;
}

function parseNumber(rawName: string, flag: NumberFlag, text: string): number {
  // Number('') and Number(' ') are 0, which would slip past the range checks.
  const value = text.trim() === '' ? NaN : Number(text);
  if (!Number.isFinite(value) || !flag.accepts(value)) {
    throw new UsageError(rawName, `${rawName} must be ${flag.expected}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** The `--help` text. */
export function chaosUsage(): string {
  const rows: [string, string][] = [
    ['--scenario <name>', 'chaos (default): a receiver failing in every way it knows;\nload: a receiver down for a while, the queue full, then the backlog drained'],
    ...Object.entries(NUMBER_FLAGS).map(([name, flag]): [string, string] => [
      `--${name} ${flag.placeholder}`,
      `${flag.description} (default ${flag.default ?? 'random, printed'})`,
    ]),
    [
      '--redis [url]',
      "Run on Redis (chaos scenario only). Without a URL: on a redis-server of the run's\n" +
        'own (free port, temp dir, AOF appendfsync always), which it kills -9 and restarts,\n' +
        'and pauses (CLIENT PAUSE). With one: on that server, under a prefix of its own\n' +
        '(deleted at the end), dropping only its own connections. Either way 2 dispatcher\n' +
        'processes deliver, and one is killed (SIGKILL) now and then and replaced',
    ],
    ['-h, --help', 'Show this help'],
  ];
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  const indent = ' '.repeat(2 + width);
  return [
    'Usage: npm run chaos -- [flags]',
    '',
    'A bounded run against a receiver on 127.0.0.1 that fails on purpose: 500, 503, 429 with',
    'Retry-After, hangs past the timeout, resets mid-body, slow accepts, and 400 for poison records.',
    'It ends with one table: records published, delivered (unique), delivered twice (same',
    'webhook-id), dead-lettered (with reasons), still pending, and lost, with the heap high-water',
    'mark and the p99 delivery latency.',
    '',
    'With --redis the harness publishes to a Redis queue and 2 dispatcher processes deliver from it,',
    'while the run also kills a dispatcher (SIGKILL) and restarts or pauses Redis. Publishes refused',
    'with ERR_STORE while Redis is down are counted as "refused (store down)": not published, not',
    'lost; one that was stored all the same (the reply was lost, not the write) and then arrived is',
    'counted as "delivered though refused" and added back in the lost formula. Records marked',
    'unserializable are refused at publish by the Redis codec (ERR_SERIALIZE), counted alike. Still',
    'pending is what Redis holds once the dispatchers have drained the queue (or the drain timed out).',
    '',
    'Flags:',
    ...rows.map(([left, right]) => `  ${left.padEnd(width)}${right.replaceAll('\n', `\n${indent}`)}`),
    '',
    'Exit code: 0 when nothing was lost and every check passed (each customer in order, all',
    'signed); 1 otherwise; 2 for bad flags, or a bare --redis where redis-server is not installed.',
    '',
  ].join('\n');
}
