/** The dispatch bench's records and the batches, bodies and per-record bodies built from them before timing. */

/** A bench record: flat (no nested object, no `{` in a string), so the receiver counts one `{` per record. */
export interface BenchRecord {
  id: number;
  customer: string;
  type: string;
  at: number;
  amount: number;
  note: string;
}

/** What the throughput designs get ready-made. */
export interface Workload {
  /** In publish order: record i goes to customer `i % customers`. */
  records: BenchRecord[];
  /** The batches the dispatcher builds: each customer's records in publish order. */
  batches: BenchRecord[][];
  /** Each batch as the JSON array the dispatcher sends. */
  batchBodies: Buffer[];
  /** Each record as JSON. */
  recordJson: string[];
  /** The per-record designs' bodies (the first records only). */
  recordBodies: Buffer[];
}

function makeRecord(i: number, customer: string, note: string): BenchRecord {
  return { id: i, customer, type: 'order.paid', at: 1_700_000_000_000 + i, amount: (i * 37) % 10_000, note };
}

/** Records `0..count-1` round-robin over `keys`, their note padded so that a record is about `bytes` bytes of JSON. */
export function makeRecords(keys: readonly string[], count: number, bytes: number): BenchRecord[] {
  const bare = JSON.stringify(makeRecord(count, keys[0] ?? '', '')).length;
  const note = 'x'.repeat(Math.max(0, bytes - bare));
  return Array.from({ length: count }, (_, i) => makeRecord(i, keys[i % keys.length]!, note));
}

/** `perKey` records for each of `keys`, round-robin, and everything built from them; `perRecordBodies` per-record bodies. */
export function buildBatches(keys: readonly string[], perKey: number, bytes: number, perRecordBodies: number): Workload {
  const records = makeRecords(keys, keys.length * perKey, bytes);
  const batches: BenchRecord[][] = keys.map(() => []);
  for (const [i, record] of records.entries()) batches[i % keys.length]!.push(record);
  const recordJson = records.map((record) => JSON.stringify(record));
  return {
    records,
    batches,
    batchBodies: batches.map((batch) => Buffer.from(JSON.stringify(batch))),
    recordJson,
    recordBodies: recordJson.slice(0, perRecordBodies).map((json) => Buffer.from(json)),
  };
}
