/** A run's report as the one table `npm run chaos` ends with. */
import { formatCount as count } from '../../src/cli/format.js';
import { FAULT_LABELS, type FaultCounts } from './faults.js';
import { formatMegabytes } from './heap-sampler.js';
import type { ChaosReport, Check } from './report.js';

type Row = [label: string, value: string, note: string] | [heading: string];

/** The report as text: a header, then one aligned table of records, faults, checks, memory and latency. */
export function formatReport(r: ChaosReport): string {
  const rows: Row[] = [
    ['Records'],
    ...recordRows(r),
    [`Faults injected (${count(r.receiverRequests)} requests reached the receiver)`],
    ...faultRows(r),
    ['Checks'],
    ...r.checks.map(checkRow),
    ['Resources'],
    ['heap high-water', formatMegabytes(r.heap.highWaterBytes), `baseline ${formatMegabytes(r.heap.baselineBytes)}, ${count(r.heap.samples)} samples every 250 ms`],
    ['p99 latency', `${count(r.latencyMs.p99)} ms`, `publish to receipt; p50 ${count(r.latencyMs.p50)} ms, p90 ${count(r.latencyMs.p90)} ms, max ${count(r.latencyMs.max)} ms`],
  ];
  return [...header(r), '', ...table(rows), '', r.ok ? 'OK: nothing lost, every customer in order.' : `FAILED: ${failed(r.checks)}`, ''].join('\n');
}

function header(r: ChaosReport): string[] {
  const s = r.settings;
  const backend = r.backendDescription;
  const bound = Number.isFinite(s.maxPending) ? `, maxPending ${count(s.maxPending)}` : '';
  return [
    `duebatch ${s.scenario === 'load' ? 'load & memory' : 'chaos'} run: ${backend}, seed ${s.seed} (repeat with --seed ${s.seed})`,
    `${count(s.durationSeconds, 1)} s of publishing, ${count(s.rate)} records/s to ${count(s.customers)} customers, ` +
      `linger ${count(s.lingerMs)} ms${bound}; finished in ${count(r.elapsedMs / 1000, 1)} s`,
  ];
}

function recordRows(r: ChaosReport): Row[] {
  const marked = r.poisonPublished + r.unserializablePublished > 0
    ? `${count(r.poisonPublished)} poison, ${count(r.unserializablePublished)} unserializable`
    : '';
  const refused = r.queueFull > 0 ? `${count(r.queueFull)} more refused: queue full (counted, not lost)` : '';
  const storeDown = r.refusedStoreDown > 0 ? `${count(r.refusedStoreDown)} more refused: store down (ERR_STORE; counted, not lost)` : '';
  const cannotEncode = r.refusedCannotEncode > 0 ? `${count(r.refusedCannotEncode)} more refused: cannot encode (ERR_SERIALIZE)` : '';
  const reasons = Object.entries(r.deadLetterReasons).map(([code, n]) => `${code} ${count(n)}`).join(', ');
  const anyway = r.deadLetteredButDelivered > 0 ? `; ${count(r.deadLetteredButDelivered)} had arrived anyway` : '';
  return [
    ['published', count(r.published), [marked, refused, storeDown, cannotEncode].filter((s) => s !== '').join('; ')],
    ['delivered (unique)', count(r.delivered), `to ${count(r.customersReached)} customers`],
    ['delivered twice', count(r.deliveredTwice), `same webhook-id, in ${count(r.deliveredTwiceRequests)} requests; ignored by the receiver`],
    ['dead-lettered', count(r.deadLettered), reasons + anyway],
    ['still pending', count(r.pending), 'queued or claimed after close'],
    ...refusedRows(r),
    ['lost', count(r.lost), r.arrivedThoughRefused > 0 ? 'published − delivered − dead-lettered − pending + delivered though refused' : 'published − delivered − dead-lettered − pending'],
  ];
}

/** On Redis: the ERR_STORE refusals that were stored anyway (the write made it, the reply did not). */
function refusedRows(r: ChaosReport): Row[] {
  if (r.refusedStoreDown === 0) return [];
  return [['delivered though refused', count(r.arrivedThoughRefused), 'publish rejected with ERR_STORE yet stored (reply lost): delivered or dead-lettered, not in published']];
}

function faultRows(r: ChaosReport): Row[] {
  const share = (n: number): string => (r.receiverRequests === 0 ? '' : `${((n / r.receiverRequests) * 100).toFixed(1)}%`);
  // The chaos run shows every fault, so a kind that never came shows as 0; the load run only its outage.
  const rows: Row[] = (Object.keys(FAULT_LABELS) as (keyof FaultCounts)[])
    .filter((kind) => r.faults[kind] > 0 || (r.settings.scenario === 'chaos' && kind !== 'outage'))
    .map((kind) => [FAULT_LABELS[kind], count(r.faults[kind]), share(r.faults[kind])]);
  const backend = Object.entries(r.backendFaults);
  rows.push(['backend faults', count(backend.reduce((sum, [, n]) => sum + n, 0)), backend.length === 0 ? `none on the ${r.settings.backend} backend` : backend.map(([name, n]) => `${name} ${n}`).join(', ')]);
  rows.push(['dispatcher requests', count(r.dispatcherRequests), `${count(r.retries)} retries`]);
  if (r.dispatcherErrors > 0) rows.push(['dispatcher errors', count(r.dispatcherErrors), 'error events (store or dead-letter handler)']);
  return rows;
}

function checkRow(c: Check): Row {
  return [c.name, c.value, `${c.ok ? '✓' : '✗'}${c.detail === '' ? '' : ` ${c.detail}`}`];
}

function table(rows: readonly Row[]): string[] {
  const cells = rows.filter((row): row is [string, string, string] => row.length === 3);
  const labelWidth = Math.max(...cells.map(([label]) => label.length)) + 2;
  const valueWidth = Math.max(...cells.map(([, value]) => value.length));
  return rows.map((row) => {
    if (row.length === 1) return row[0];
    const [label, value, note] = row;
    return `  ${label.padEnd(labelWidth)}${value.padStart(valueWidth)}${note === '' ? '' : `   ${note}`}`;
  });
}

function failed(checks: readonly Check[]): string {
  return checks.filter((c) => !c.ok).map((c) => `${c.name} (${c.value}${c.detail === '' ? '' : `: ${c.detail}`})`).join(', ');
}
