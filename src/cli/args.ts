/**
 * The demo's command line: the flags, their defaults, their validation and the `--help` text,
 * all from one table so the help cannot drift from what is parsed.
 */
import { parseArgs } from 'node:util';
import { UsageError } from './usage-error.js';

/** The demo's settings. */
export interface DemoArgs {
  /** Customers (keys) the records are spread over. */
  customers: number;
  /** Records published per second, over all producers. */
  rate: number;
  /** How long each customer's records collect before they go out as one request. */
  lingerMs: number;
  /** How long the producers publish. */
  durationSeconds: number;
  /** Share of requests (0 to 1) the receiver fails on purpose. */
  failRate: number;
  /** Producer loops sharing the rate. */
  producers: number;
  /** The Redis URL with `--redis`; undefined for the in-memory queue. */
  redisUrl: string | undefined;
  /** Print the summary as JSON. */
  json: boolean;
}

/** What the command line asks for: the help text, or a run. */
export type ParsedArgs = { help: true } | { help: false; args: DemoArgs };

/** The environment the defaults read (`REDIS_URL`). */
export interface ArgsEnv {
  readonly REDIS_URL?: string | undefined;
}

type NumericField = 'customers' | 'rate' | 'lingerMs' | 'durationSeconds' | 'failRate' | 'producers';

interface NumberFlag {
  field: NumericField;
  placeholder: string;
  default: number;
  /** Completes "--flag must be …". */
  expected: string;
  accepts(value: number): boolean;
  description: string;
}

const NUMBER_FLAGS: Readonly<Record<string, NumberFlag>> = {
  customers: {
    field: 'customers',
    placeholder: '<n>',
    default: 200,
    expected: 'an integer from 1 to 1000000',
    accepts: (n) => Number.isInteger(n) && n >= 1 && n <= 1_000_000,
    description: 'Customers the records go to, each with its own endpoint',
  },
  rate: {
    field: 'rate',
    placeholder: '<records/s>',
    default: 20_000,
    expected: 'a positive number of records per second',
    accepts: (n) => n > 0,
    description: 'Records published per second, over all producers',
  },
  linger: {
    field: 'lingerMs',
    placeholder: '<ms>',
    default: 500,
    expected: 'a number of milliseconds >= 0',
    accepts: (n) => n >= 0,
    description: "How long a customer's records wait to go out together",
  },
  duration: {
    field: 'durationSeconds',
    placeholder: '<s>',
    default: 10,
    expected: 'a positive number of seconds',
    accepts: (n) => n > 0,
    description: 'Seconds of publishing; then all that is pending is delivered',
  },
  'fail-rate': {
    field: 'failRate',
    placeholder: '<0..1>',
    default: 0,
    expected: 'a share from 0 to 1',
    accepts: (n) => n >= 0 && n <= 1,
    description: 'Share of requests the receiver fails (500, 429 with Retry-After, or a reset\n' +
      'socket after accepting), to show the retries and that nothing is lost',
  },
  producers: {
    field: 'producers',
    placeholder: '<n>',
    default: 4,
    expected: 'an integer from 1 to 1000',
    accepts: (n) => Number.isInteger(n) && n >= 1 && n <= 1000,
    description: 'Producer loops sharing the rate',
  },
};

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

// Value flags are parsed as strings and checked here, so "--rate -5" reads as a bad rate rather
// than as a missing value; unknown flags are let through to be reported by name.
const PARSE_OPTIONS = {
  ...Object.fromEntries(Object.keys(NUMBER_FLAGS).map((name) => [name, { type: 'string' as const }])),
  // Boolean, so "--redis --json" is not read as the URL "--json"; a URL is the next positional.
  redis: { type: 'boolean' as const },
  json: { type: 'boolean' as const },
  help: { type: 'boolean' as const, short: 'h' },
};

/**
 * Parses the demo's flags (without `node` and the script). Later flags win over earlier ones.
 * @throws {@link UsageError} naming the flag for an unknown flag, a missing value or a value out of range.
 */
export function parseDemoArgs(argv: readonly string[], env: ArgsEnv = process.env): ParsedArgs {
  const { tokens } = parseArgs({ args: [...argv], options: PARSE_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const args = defaultArgs();
  let help = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') throw new UsageError(undefined, `unexpected argument ${JSON.stringify(token.value)}`);
    const flag = NUMBER_FLAGS[token.name];
    if (flag !== undefined) {
      args[flag.field] = parseNumber(token.rawName, flag, token.value);
    } else if (token.name === 'redis') {
      // The URL is optional: "--redis=url", "--redis url", or "--redis" alone for the default.
      const next = tokens[i + 1];
      const takesNext = token.value === undefined && next?.kind === 'positional';
      if (takesNext) i++;
      const url = token.value ?? (takesNext ? next.value : undefined);
      args.redisUrl = parseRedisUrl(url ?? env.REDIS_URL ?? DEFAULT_REDIS_URL);
    } else if (token.name === 'json' || token.name === 'help') {
      if (token.value !== undefined) throw new UsageError(token.rawName, `${token.rawName} takes no value`);
      if (token.name === 'json') args.json = true;
      else help = true;
    } else {
      throw new UsageError(token.rawName, `unknown flag ${token.rawName}`);
    }
  }
  return help ? { help: true } : { help: false, args };
}

function defaultArgs(): DemoArgs {
  const args = { redisUrl: undefined, json: false } as DemoArgs;
  for (const flag of Object.values(NUMBER_FLAGS)) args[flag.field] = flag.default;
  return args;
}

function parseNumber(rawName: string, flag: NumberFlag, text: string | undefined): number {
  if (text === undefined) throw new UsageError(rawName, `${rawName} needs a value: ${flag.expected}`);
  // Number('') and Number(' ') are 0, which would slip past the range checks.
  const value = text.trim() === '' ? NaN : Number(text);
  if (!Number.isFinite(value) || !flag.accepts(value)) {
    throw new UsageError(rawName, `${rawName} must be ${flag.expected}, got ${JSON.stringify(text)}`);
  }
  return value;
}

function parseRedisUrl(text: string): string {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) {
    throw new UsageError('--redis', `--redis must be a redis:// or rediss:// URL, got ${JSON.stringify(text)}`);
  }
  return text;
}

/** The `--help` text. */
export function usage(): string {
  const rows: [string, string][] = Object.entries(NUMBER_FLAGS).map(([name, flag]) => [
    `--${name} ${flag.placeholder}`,
    `${flag.description} (default ${flag.default})`,
  ]);
  rows.push(
    ['--redis [url]', 'Run on the Redis backend instead of in memory, under a key prefix of\n' +
      `this run's own that is deleted at the end\n(default url: $REDIS_URL, else ${DEFAULT_REDIS_URL})`],
    ['--json', 'Print the summary as JSON on stdout (progress stays on stderr)'],
    ['-h, --help', 'Show this help'],
  );
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  const indent = ' '.repeat(2 + width);
  const lines = rows.map(([left, right]) => `  ${left.padEnd(width)}${right.replaceAll('\n', `\n${indent}`)}`);
  return [
    'Usage: duebatch [flags]',
    '',
    'Runs duebatch end to end on this machine. Producers publish records to many customers; the',
    "dispatcher collects each customer's records and sends them as one signed request when they",
    'are due; an embedded receiver on 127.0.0.1 verifies signatures, ignores redelivered requests',
    "(same webhook-id) and checks each customer's order. Progress goes to stderr; at the end a",
    'summary compares the requests made with one request per record, shows the delivery latency',
    'and checks that every record arrived.',
    '',
    'Flags:',
    ...lines,
    '',
    'Exit code: 0 when every record arrived, in order and correctly signed; 1 otherwise;',
    '2 for bad flags, or when Redis does not answer at the --redis URL.',
    '',
  ].join('\n');
}
