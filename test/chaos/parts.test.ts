/** The harness's small parts: seeded randomness, the fault draw, the record marker, the refusal log, backend fault injection. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startBackendFaults } from '../../bench/chaos/backend-faults.js';
import { DEFAULT_FAULT_RATES, FAULT_KINDS, NO_FAULTS, pickFault, validFaultRates } from '../../bench/chaos/faults.js';
import { mulberry32, randomStream } from '../../bench/chaos/random.js';
import { markingPublisher, parseChaosRecords, type ChaosRecord } from '../../bench/chaos/records.js';
import { RefusalLog } from '../../bench/chaos/refusals.js';
import { QueueFullError, StoreError } from '../../src/index.js';
import { CodecError } from '../../src/redis/index.js';

describe('seeded randomness', () => {
  it('repeats its draws for a seed, in [0, 1)', () => {
    const a = Array.from({ length: 1000 }, mulberry32(42));
    expect(Array.from({ length: 1000 }, mulberry32(42))).toEqual(a);
    expect(a.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(Array.from({ length: 5 }, mulberry32(43))).not.toEqual(a.slice(0, 5));
  });

  it('gives each named stream its own draws', () => {
    const receiver = Array.from({ length: 5 }, randomStream(7, 'receiver'));
    expect(Array.from({ length: 5 }, randomStream(7, 'receiver'))).toEqual(receiver);
    expect(Array.from({ length: 5 }, randomStream(7, 'producers'))).not.toEqual(receiver);
  });
});

describe('pickFault', () => {
  it('picks each fault at about its rate, and none for the rest', () => {
    const random = mulberry32(1);
    const counts = new Map<string, number>();
    const n = 200_000;
    for (let i = 0; i < n; i++) {
      const fault = pickFault(DEFAULT_FAULT_RATES, random) ?? 'none';
      counts.set(fault, (counts.get(fault) ?? 0) + 1);
    }
    for (const kind of FAULT_KINDS) expect((counts.get(kind) ?? 0) / n).toBeCloseTo(DEFAULT_FAULT_RATES[kind], 2);
    expect(validFaultRates(DEFAULT_FAULT_RATES)).toBe(true);
  });

  it('never faults with NO_FAULTS', () => {
    const random = mulberry32(2);
    for (let i = 0; i < 1000; i++) expect(pickFault(NO_FAULTS, random)).toBeUndefined();
  });
});

describe('markingPublisher', () => {
  const record = (seq: number) => ({ customer: 'c', seq, at: 1 });

  it('marks records poison or unserializable at their rates, pads them, and counts only the accepted ones', () => {
    const published: ChaosRecord[] = [];
    let full = false;
    const marker = markingPublisher(
      (_customer, r) => {
        if (full) throw new QueueFullError(1);
        published.push(r);
      },
      { poisonRate: 0.1, unserializableRate: 0.1, padBytes: 16 },
      mulberry32(3),
    );
    for (let seq = 0; seq < 1000; seq++) marker.publish('c', record(seq));
    const poison = published.filter((r) => r.poison === true).length;
    const unserializable = published.filter((r) => typeof r.unserializable === 'bigint').length;
    expect(marker.counts()).toEqual({ poison, unserializable });
    expect(poison).toBeGreaterThan(50);
    expect(unserializable).toBeGreaterThan(50);
    expect(published.every((r) => r.pad?.length === 16)).toBe(true);

    full = true;
    const before = marker.counts();
    for (let seq = 1000; seq < 1100; seq++) expect(() => marker.publish('c', record(seq))).toThrow(QueueFullError);
    expect(marker.counts()).toEqual(before);
  });

  it('counts a Redis-style publish once its promise resolves', async () => {
    const marker = markingPublisher(async () => undefined, { poisonRate: 1, unserializableRate: 0, padBytes: 0 }, mulberry32(4));
    await marker.publish('c', record(0));
    expect(marker.counts().poison).toBe(1);
  });
});

describe('RefusalLog', () => {
  const record = (seq: number) => ({ customer: 'c', seq, at: 1 });

  it('counts and swallows ERR_STORE and ERR_SERIALIZE rejections, and lets everything else through', async () => {
    const log = new RefusalLog();
    const failWith = (error: Error) => log.wrap(async () => Promise.reject(error));
    await failWith(new StoreError('down'))('c', record(0));
    await failWith(new StoreError('down'))('c', record(1));
    await failWith(new CodecError('bigint'))('c', record(2));
    await expect(failWith(new QueueFullError(1))('c', record(3))).rejects.toBeInstanceOf(QueueFullError);
    await log.wrap(async () => undefined)('c', record(4));
    expect(() => log.wrap(() => { throw new QueueFullError(1); })('c', record(5))).toThrow(QueueFullError);
    expect(log.counts()).toEqual({ storeDown: 2, cannotEncode: 1, arrivedAnyway: 0 });
    expect(log.total).toBe(3);
  });

  it('counts a record refused with ERR_STORE that arrives anyway, once', async () => {
    const log = new RefusalLog();
    await log.wrap(async () => Promise.reject(new StoreError('reply lost')))('c', record(7));
    log.arrived([record(6), record(7)]);
    log.arrived([record(7)]);
    expect(log.counts().arrivedAnyway).toBe(1);
  });
});

describe('parseChaosRecords', () => {
  it('reads a JSON array of records, and nothing else', () => {
    expect(parseChaosRecords(Buffer.from('[{"customer":"c","seq":1,"at":2,"poison":true}]'))).toEqual([{ customer: 'c', seq: 1, at: 2, poison: true }]);
    expect(parseChaosRecords(Buffer.from('[{"customer":"c","seq":1.5,"at":2}]'))).toBeUndefined();
    expect(parseChaosRecords(Buffer.from('{"customer":"c"}'))).toBeUndefined();
    expect(parseChaosRecords(Buffer.from('not json'))).toBeUndefined();
  });
});

describe('startBackendFaults', () => {
  afterEach(() => void vi.useRealTimers());

  it('injects the faults one at a time, each after a seeded wait, and counts them', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const injected: string[] = [];
    const fault = (name: string) => ({ name, inject: async () => void injected.push(name) });
    const injector = startBackendFaults({ faults: [fault('kill'), fault('pause')], random: mulberry32(5), everyMs: [100, 200], onError: () => undefined });
    await vi.advanceTimersByTimeAsync(1000);
    const counts = await injector.stop();
    expect(injected.length).toBeGreaterThanOrEqual(5);
    expect(injected.length).toBeLessThanOrEqual(10);
    expect((counts['kill'] ?? 0) + (counts['pause'] ?? 0)).toBe(injected.length);
    await vi.advanceTimersByTimeAsync(1000);
    expect(injected.length).toBe((counts['kill'] ?? 0) + (counts['pause'] ?? 0));
  });

  it('injects every kind once per round, in a seeded order', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const injected: string[] = [];
    const fault = (name: string) => ({ name, inject: async () => void injected.push(name) });
    const injector = startBackendFaults({ faults: ['a', 'b', 'c'].map(fault), random: mulberry32(8), everyMs: [10, 20], onError: () => undefined });
    await vi.advanceTimersByTimeAsync(200);
    await injector.stop();
    expect(injected.length).toBeGreaterThanOrEqual(9);
    for (let round = 0; round + 3 <= injected.length; round += 3) expect(injected.slice(round, round + 3).sort()).toEqual(['a', 'b', 'c']);
  });

  it('does nothing without faults (the memory backend)', async () => {
    const injector = startBackendFaults({ faults: [], random: mulberry32(6), everyMs: [1, 2], onError: () => undefined });
    expect(await injector.stop()).toEqual({});
  });
});
