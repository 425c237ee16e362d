/**
 * The shared table printer and measuring helpers of the benchmarks. Every bench prints
 * absolute numbers and ratios against a baseline measured in the same run.
 */

/** One printed row: a label and its cells, in column order. */
export type Row = Record<string, string | number>;

/** Prints `rows` as an aligned text table under `title`. */
export function printTable(title: string, rows: readonly Row[]): void {
  const first = rows[0];
  if (first === undefined) return;
  const columns = Object.keys(first);
  const cells = rows.map((row) => columns.map((column) => format(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => (line[i] ?? '').length)));
  const line = (values: readonly string[]): string =>
    values.map((value, i) => (i === 0 ? value.padEnd(widths[i] ?? 0) : value.padStart(widths[i] ?? 0))).join('  ');
  console.log(`\n${title}`);
  console.log(line(columns));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of cells) console.log(line(row));
}

function format(value: string | number | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** A ratio printed as `1.23x`. */
export function ratio(value: number, baseline: number): string {
  return `${(value / baseline).toFixed(2)}x`;
}

/** Runs `fn` and returns its duration in milliseconds. */
export function time(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/** Runs an async `fn` and returns its duration in milliseconds. */
export async function timeAsync(fn: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Forces a full collection; the bench script runs node with `--expose-gc`. */
export function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run the benchmarks with node --expose-gc (npm run bench does)');
  gc();
  gc();
}

/** Heap bytes in use after a full collection. */
export function heapUsed(): number {
  collect();
  return process.memoryUsage().heapUsed;
}

/** Whether this bench was asked for a short run (`npm run bench -- --quick`). */
export const quick = process.argv.includes('--quick');
