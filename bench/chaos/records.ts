/**
 * The harness's records: the demo's (customer, per-customer seq, publish time), sometimes marked
 * as bad input: a poison record the receiver refuses with 400, or a value JSON cannot serialize.
 * Both are dead-lettered by the dispatcher, with the rest of their batch.
 */
import type { DemoRecord } from '../../src/cli/producers.js';
import type { Random } from './random.js';

/** A demo record, possibly marked. */
export interface ChaosRecord extends DemoRecord {
  /** The receiver answers 400 to any batch holding this record: dead-lettered as `rejected`. */
  poison?: true;
  /** `JSON.stringify` throws on a BigInt: the batch is dead-lettered as `serialize`. */
  unserializable?: bigint;
  /** Payload that gives the record a size (load scenario). */
  pad?: string;
}

/** How records are marked on their way to the queue. */
export interface RecordMarks {
  /** Share of records marked poison. */
  poisonRate: number;
  /** Share of records carrying a BigInt. */
  unserializableRate: number;
  /** Characters of padding per record (0: none). Each record gets its own string. */
  padBytes: number;
}

/** No marks, no padding. */
export const PLAIN_RECORDS: RecordMarks = { poisonRate: 0, unserializableRate: 0, padBytes: 0 };

/** Publishes one record; a Redis queue returns a promise. */
export type PublishRecord = (customer: string, record: ChaosRecord) => void | Promise<void>;

/** Marked records the queue accepted. */
export interface MarkCounts {
  poison: number;
  unserializable: number;
}

/** A publish function for the producers that marks records on the way, and counts the marked ones accepted. */
export interface MarkingPublisher {
  publish(customer: string, record: DemoRecord): void | Promise<void>;
  counts(): MarkCounts;
}

/** Wraps `publish` so that records are marked at the rates of `marks`, one draw of `random` per record. */
export function markingPublisher(publish: PublishRecord, marks: RecordMarks, random: Random): MarkingPublisher {
  const counts: MarkCounts = { poison: 0, unserializable: 0 };
  return {
    publish(customer, record) {
      const draw = random();
      const mark: keyof MarkCounts | undefined =
        draw < marks.poisonRate ? 'poison' : draw < marks.poisonRate + marks.unserializableRate ? 'unserializable' : undefined;
      const marked: ChaosRecord = { ...record };
      if (mark === 'poison') marked.poison = true;
      if (mark === 'unserializable') marked.unserializable = 1n;
      if (marks.padBytes > 0) marked.pad = padding(marks.padBytes, record.seq);
      const accepted = (): void => {
        if (mark !== undefined) counts[mark]++;
      };
      // A refused publish (QueueFullError) throws or rejects before `accepted` runs: it is not counted.
      const result = publish(customer, marked);
      if (result instanceof Promise) return result.then(accepted);
      accepted();
      return result;
    },
    counts: () => ({ ...counts }),
  };
}

/** A flat string of `bytes` one-byte characters, its own copy (not a slice or rope of a shared one). */
function padding(bytes: number, seq: number): string {
  return Buffer.alloc(bytes, 97 + (seq % 26)).toString('latin1');
}

/** The records of a request body, or undefined when it is not a JSON array of records. */
export function parseChaosRecords(body: Buffer): ChaosRecord[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) && parsed.every(isRecord) ? parsed : undefined;
}

function isRecord(value: unknown): value is ChaosRecord {
  const r = value as Partial<ChaosRecord> | null;
  return typeof r === 'object' && r !== null && typeof r.customer === 'string' && Number.isInteger(r.seq) && Number.isFinite(r.at);
}
