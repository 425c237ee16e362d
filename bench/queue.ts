/**
 * The in-memory queue against its floor and the seed's design, in one run.
 *
 * Main workload: 1M records over 100k keys (each key 10 times, in a random order), published
 * with a timestamp-like sort key, then drained with `pull(1000)` until empty. The sort key is a
 * due time: a clock that advances with each record plus the key's own linger (1-61 s), and 1% of
 * records are urgent (due now), so new keys land anywhere in the order and some publishes move
 * their key earlier. Measured on three designs:
 * - the floor: a bare `Map<key, value[]>` with no index (publish = get/push, drain = iterate and delete);
 * - the seed's design: a sorted array of keys with binary search + splice (`baselines/sorted-array-queue.ts`);
 * - duebatch `SortedQueue<number, string, number>`.
 *
 * Steady workload: N keys pending, each step publishes one record to a new key (25%) or to a
 * random pending key, and every 1000 steps a consumer pulls due batches (`pull(1000, { upTo:
 * clock })` until nothing is due), so keys come and go and the population stays about N
 * (the clock's pace is set for that). Reported in ns per record, at 10k, 100k and 1M keys. The
 * queues start from the steady state's shape, loaded before timing; duebatch and the sorted
 * array then see the same operations, and their pulled batches are checked to agree. The sorted
 * array's windows are cut to a time box at large N (the table shows how many steps were timed).
 * For reference, a FIFO Map floor (`baselines/map-floor.ts`: no order, oldest keys leave) runs
 * the same driver: the cost of the Map, the values and the driver alone, and how it grows with N.
 *
 * Throughput is the best of 3 repetitions (the machine is shared), heap the median.
 *
 * node --expose-gc --import tsx bench/queue.ts [--quick]
 */
import { SortedQueue } from '../src/queue/sorted-queue.js';
import { FifoMapFloor, MapFloor } from './baselines/map-floor.js';
import { SortedArrayQueue } from './baselines/sorted-array-queue.js';
import { collect, heapUsed, printTable, quick, ratio, type Row } from './table.js';

const repeats = 3;
/** Sort keys look like epoch milliseconds (doubles, as the monotonic clock gives). */
const clockStart = 1_700_000_000_000;
const lingerMin = 1_000;
const lingerMax = 61_000;
const urgentShare = 0.01;
const pullMax = 1000;

const mainRecords = quick ? 100_000 : 1_000_000;
const mainKeys = quick ? 10_000 : 100_000;

const steadySizes = quick ? [1_000, 10_000, 100_000] : [10_000, 100_000, 1_000_000];
const newKeyShare = 0.25;
const pullEvery = 1000;
const warmSteps = quick ? 5_000 : 20_000;
const windowSteps = quick ? 100_000 : 1_000_000;
/** Time box of one timed window of the sorted array; its windows are cut to fit. */
const sortedArrayWindowMs = quick ? 1_000 : 6_000;

/** A seeded generator (mulberry32), so every run and every design sees the same workload. */
class Random {
  #seed: number;

  constructor(seed: number) {
    this.#seed = seed;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#seed = (this.#seed + 0x6d2b79f5) | 0;
    let t = Math.imul(this.#seed ^ (this.#seed >>> 15), 1 | this.#seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  }
}

function keyNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `c${i}`);
}

/** Heap plus array-buffer bytes after a full collection, so a store in typed arrays is counted too. */
function retained(): number {
  return heapUsed() + process.memoryUsage().arrayBuffers;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

// --- main workload ------------------------------------------------------------------------------

/** Records as parallel arrays, built before timing: record i goes to `keys[keyOf[i]]` at `sortKeys[i]`. */
interface Records {
  keys: string[];
  keyOf: Uint32Array;
  sortKeys: Float64Array;
}

function mainWorkload(records: number, keyCount: number): Records {
  const random = new Random(0x9e3779b9);
  const keyOf = new Uint32Array(records);
  for (let i = 0; i < records; i++) keyOf[i] = i % keyCount;
  for (let i = records - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    const swap = keyOf[i]!;
    keyOf[i] = keyOf[j]!;
    keyOf[j] = swap;
  }
  const linger = Float64Array.from({ length: keyCount }, () => lingerMin + random.next() * (lingerMax - lingerMin));
  const sortKeys = new Float64Array(records);
  for (let i = 0; i < records; i++) {
    const clock = clockStart + i * 0.01;
    sortKeys[i] = random.next() < urgentShare ? clock : clock + linger[keyOf[i]!]!;
  }
  return { keys: keyNames(keyCount), keyOf, sortKeys };
}

/** One design under the main workload. Each keeps its own loops, so no call site is shared. */
interface MainDesign {
  name: string;
  create(): { publishAll(records: Records): void; drainAll(): number };
}

const mainDesigns: MainDesign[] = [
  {
    name: 'floor: Map<key, value[]>',
    create() {
      const floor = new MapFloor();
      return {
        publishAll({ keys, keyOf, sortKeys }) {
          for (let i = 0; i < sortKeys.length; i++) floor.publish(keys[keyOf[i]!]!, keyOf[i]!);
        },
        drainAll: () => floor.drain(),
      };
    },
  },
  {
    name: 'seed: sorted array + splice',
    create() {
      const queue = new SortedArrayQueue();
      return {
        publishAll({ keys, keyOf, sortKeys }) {
          for (let i = 0; i < sortKeys.length; i++) queue.publish(sortKeys[i]!, keys[keyOf[i]!]!, keyOf[i]!);
        },
        drainAll() {
          let drained = 0;
          for (let batches = queue.pull(pullMax); batches.length > 0; batches = queue.pull(pullMax)) {
            for (const batch of batches) drained += batch.values.length;
          }
          return drained;
        },
      };
    },
  },
  {
    name: 'duebatch SortedQueue',
    create() {
      const queue = new SortedQueue<number, string, number>();
      return {
        publishAll({ keys, keyOf, sortKeys }) {
          for (let i = 0; i < sortKeys.length; i++) queue.publish(sortKeys[i]!, keys[keyOf[i]!]!, keyOf[i]!);
        },
        drainAll() {
          let drained = 0;
          for (let batches = queue.pull(pullMax); batches.length > 0; batches = queue.pull(pullMax)) {
            for (const batch of batches) drained += batch.values.length;
          }
          return drained;
        },
      };
    },
  },
];

interface MainResult {
  publishMs: number;
  drainMs: number;
  heapPerRecord: number;
}

function measureMain(design: MainDesign, records: Records): MainResult {
  const before = retained();
  const subject = design.create();
  let start = performance.now();
  subject.publishAll(records);
  const publishMs = performance.now() - start;
  const heapPerRecord = (retained() - before) / records.sortKeys.length;
  start = performance.now();
  const drained = subject.drainAll();
  const drainMs = performance.now() - start;
  if (drained !== records.sortKeys.length) throw new Error(`${design.name} drained ${drained} of ${records.sortKeys.length}`);
  return { publishMs, drainMs, heapPerRecord };
}

/** Best times and median heap of each design over `repeats` rounds, the designs taking turns. */
function runMain(): Map<string, MainResult> {
  const warmUp = mainWorkload(50_000, 5_000);
  for (const design of mainDesigns) measureMain(design, warmUp);
  const records = mainWorkload(mainRecords, mainKeys);
  const runs = new Map<string, MainResult[]>(mainDesigns.map((design) => [design.name, []]));
  for (let round = 0; round < repeats; round++) {
    for (let i = 0; i < mainDesigns.length; i++) {
      const design = mainDesigns[(i + round) % mainDesigns.length]!;
      runs.get(design.name)!.push(measureMain(design, records));
    }
  }
  return new Map(
    [...runs].map(([name, results]) => [
      name,
      {
        publishMs: Math.min(...results.map((result) => result.publishMs)),
        drainMs: Math.min(...results.map((result) => result.drainMs)),
        heapPerRecord: median(results.map((result) => result.heapPerRecord)),
      },
    ]),
  );
}

// --- steady workload ----------------------------------------------------------------------------

/** What the steady driver needs of a queue: `SortedQueue` and the sorted array both fit. */
interface SteadyQueue {
  publish(sortKey: number, key: string, value: number): void;
  pull(maxMessages: number, options: { upTo: number }): readonly { readonly key: string; readonly values: readonly number[] }[];
}

/** The steady state's shape for N keys: each key's linger, age-derived place, and pending count. */
interface Snapshot {
  size: number;
  linger: Float64Array;
  places: Float64Array;
  counts: Uint32Array;
}

/**
 * Keys alive in the steady state: lingers weighted by how long they live (density ∝ linger),
 * ages uniform within the linger, and values received so far in proportion to the age.
 */
function steadySnapshot(size: number): Snapshot {
  const random = new Random(size);
  const meanLinger = (lingerMin + lingerMax) / 2;
  const snapshot = { size, linger: new Float64Array(size), places: new Float64Array(size), counts: new Uint32Array(size) };
  for (let i = 0; i < size; i++) {
    const linger = Math.sqrt(lingerMin ** 2 + random.next() * (lingerMax ** 2 - lingerMin ** 2));
    const age = random.next() * linger;
    snapshot.linger[i] = linger;
    snapshot.places[i] = clockStart - age + linger;
    snapshot.counts[i] = 1 + Math.floor(((1 - newKeyShare) * age) / (newKeyShare * meanLinger) + random.next());
  }
  return snapshot;
}

/** Drives one queue through the steady workload; state in typed arrays indexed by key id (the value). */
class SteadyRun {
  readonly #queue: SteadyQueue;
  readonly #keys: string[];
  readonly #linger: Float64Array;
  readonly #counts: Uint32Array;
  /** Pending key ids, and each id's position there; ids not pending wait in `#free`. */
  readonly #active: Uint32Array;
  readonly #position: Uint32Array;
  readonly #free: Uint32Array;
  readonly #random = new Random(42);
  readonly #tick: number;
  #activeCount: number;
  #freeCount: number;
  #clock = clockStart;
  #step = 0;
  #pulls = 0;
  #keySamples = 0;
  /** Order-sensitive digest of everything pulled, to check both designs did the same. */
  checksum = 0;

  constructor(queue: SteadyQueue, snapshot: Snapshot, keys: string[]) {
    const { size } = snapshot;
    this.#queue = queue;
    this.#keys = keys;
    this.#linger = new Float64Array(keys.length);
    this.#linger.set(snapshot.linger);
    this.#counts = new Uint32Array(keys.length);
    this.#counts.set(snapshot.counts);
    this.#active = Uint32Array.from({ length: keys.length }, (_, i) => i);
    this.#position = Uint32Array.from({ length: keys.length }, (_, i) => i);
    this.#free = new Uint32Array(keys.length);
    for (let i = 0; i < keys.length - size; i++) this.#free[i] = keys.length - 1 - i;
    this.#activeCount = size;
    this.#freeCount = keys.length - size;
    // New keys per ms times their mean life (the mean linger) is the population: pace the clock for `size`.
    this.#tick = (newKeyShare * (lingerMin + lingerMax)) / 2 / size;
  }

  /** Mean pending keys seen at pulls since the last call. */
  takeMeanKeys(): number {
    const mean = this.#keySamples / this.#pulls;
    this.#keySamples = 0;
    this.#pulls = 0;
    return mean;
  }

  run(steps: number): void {
    const random = this.#random;
    for (let end = this.#step + steps; this.#step < end; ) {
      this.#clock += this.#tick;
      let id: number;
      if (random.next() < newKeyShare && this.#freeCount > 0) {
        id = this.#free[--this.#freeCount]!;
        this.#linger[id] = lingerMin + random.next() * (lingerMax - lingerMin);
        this.#position[id] = this.#activeCount;
        this.#active[this.#activeCount++] = id;
      } else {
        id = this.#active[Math.floor(random.next() * this.#activeCount)]!;
      }
      const sortKey = random.next() < urgentShare ? this.#clock : this.#clock + this.#linger[id]!;
      this.#queue.publish(sortKey, this.#keys[id]!, id);
      this.#counts[id]!++;
      if (++this.#step % pullEvery === 0) this.#pullDue();
    }
  }

  #pullDue(): void {
    this.#keySamples += this.#activeCount;
    this.#pulls++;
    const options = { upTo: this.#clock };
    for (let batches = this.#queue.pull(pullMax, options); batches.length > 0; batches = this.#queue.pull(pullMax, options)) {
      for (const { values } of batches) {
        const id = values[0]!;
        this.checksum = (Math.imul(this.checksum, 31) + id * 7 + values.length) | 0;
        const left = this.#counts[id]! - values.length;
        this.#counts[id] = left;
        if (left === 0) this.#leave(id);
      }
    }
  }

  #leave(id: number): void {
    const at = this.#position[id]!;
    const last = this.#active[--this.#activeCount]!;
    this.#active[at] = last;
    this.#position[last] = at;
    this.#free[this.#freeCount++] = id;
  }
}

/** Publishes the snapshot's values key by key, each at its key's place (setup, not timed). */
function publishSnapshot(queue: SteadyQueue, snapshot: Snapshot, keys: string[]): SteadyQueue {
  for (let id = 0; id < snapshot.size; id++) {
    for (let n = 0; n < snapshot.counts[id]!; n++) queue.publish(snapshot.places[id]!, keys[id]!, id);
  }
  return queue;
}

/** One design under the steady workload: loads the snapshot into a new queue. */
interface SteadyDesign {
  name: string;
  /** Time box of one window, or undefined for none. */
  windowMs: number | undefined;
  /** Takes keys in place order (the floor does not), so its pulls must match the others'. */
  ordered: boolean;
  load(snapshot: Snapshot, keys: string[]): SteadyQueue;
}

const steadyDesigns: SteadyDesign[] = [
  {
    name: 'duebatch',
    windowMs: undefined,
    ordered: true,
    load: (snapshot, keys) => publishSnapshot(new SortedQueue<number, string, number>(), snapshot, keys),
  },
  {
    name: 'sorted array',
    windowMs: sortedArrayWindowMs,
    ordered: true,
    load(snapshot, keys) {
      const queue = new SortedArrayQueue();
      const values = Array.from({ length: snapshot.size }, (_, id) => {
        const list: number[] = [];
        for (let n = 0; n < snapshot.counts[id]!; n++) list.push(id);
        return list;
      });
      queue.load(keys.slice(0, snapshot.size), snapshot.places, values);
      return queue;
    },
  },
  {
    name: 'FIFO Map floor',
    windowMs: undefined,
    ordered: false,
    load: (snapshot, keys) => publishSnapshot(new FifoMapFloor(snapshot.size), snapshot, keys),
  },
];

interface SteadyResult {
  nsPerRecord: number;
  steps: number;
  meanKeys: number;
  checksum: number;
}

function measureSteady(design: SteadyDesign, snapshot: Snapshot, keys: string[]): SteadyResult {
  collect();
  const run = new SteadyRun(design.load(snapshot, keys), snapshot, keys);
  let start = performance.now();
  run.run(warmSteps);
  const warmNsPerStep = ((performance.now() - start) * 1e6) / warmSteps;
  const checksum = run.checksum;
  const fit = design.windowMs === undefined ? windowSteps : (design.windowMs * 1e6) / warmNsPerStep;
  const steps = Math.max(pullEvery, Math.min(windowSteps, Math.floor(fit / pullEvery) * pullEvery));
  run.takeMeanKeys();
  let bestMs = Infinity;
  for (let round = 0; round < repeats; round++) {
    start = performance.now();
    run.run(steps);
    bestMs = Math.min(bestMs, performance.now() - start);
  }
  return { nsPerRecord: (bestMs * 1e6) / steps, steps, meanKeys: run.takeMeanKeys(), checksum };
}

/** Per size: each design's result, after checking that duebatch and the sorted array pulled the same batches. */
function runSteady(): { size: number; results: Map<string, SteadyResult> }[] {
  // Every design through the driver before any timing, so its call sites are alike for every size.
  const warmUp = steadySnapshot(1_000);
  for (const design of steadyDesigns) new SteadyRun(design.load(warmUp, keyNames(2_000)), warmUp, keyNames(2_000)).run(20_000);
  return steadySizes.map((size) => {
    const snapshot = steadySnapshot(size);
    const keys = keyNames(2 * size + pullEvery);
    const results = new Map(steadyDesigns.map((design) => [design.name, measureSteady(design, snapshot, keys)]));
    const checksums = new Set(steadyDesigns.filter((design) => design.ordered).map((design) => results.get(design.name)!.checksum));
    if (checksums.size !== 1) throw new Error(`duebatch and the sorted array pulled different batches at ${size} keys`);
    return { size, results };
  });
}

// --- report -------------------------------------------------------------------------------------

function count(value: number): string {
  return value >= 1e6 ? `${value / 1e6}M` : value >= 1e3 ? `${value / 1e3}k` : String(value);
}

const main = runMain();
const steady = runSteady();

const floor = main.get(mainDesigns[0]!.name)!;
const ours = main.get(mainDesigns[2]!.name)!;
const totalMs = (result: MainResult): number => result.publishMs + result.drainMs;
printTable(
  `queue: ${count(mainRecords)} records over ${count(mainKeys)} keys, publish then pull(${pullMax}) until empty (best of ${repeats}; heap median)`,
  [...main].map(([name, result]) => ({
    design: name,
    'publish rec/s': (mainRecords / result.publishMs) * 1000,
    'pull rec/s': (mainRecords / result.drainMs) * 1000,
    'publish+pull ms': totalMs(result),
    'time vs floor': ratio(totalMs(result), totalMs(floor)),
    'heap B/record': result.heapPerRecord,
    'heap vs floor': ratio(result.heapPerRecord, floor.heapPerRecord),
  })),
);

const nsOf = (design: SteadyDesign, index: number): number => steady[index]!.results.get(design.name)!.nsPerRecord;
const [dueDesign, arrayDesign, floorDesign] = steadyDesigns as [SteadyDesign, SteadyDesign, SteadyDesign];
const steadyRows: Row[] = steady.map(({ size, results }, index) => {
  const array = results.get(arrayDesign.name)!;
  return {
    keys: count(size),
    'mean keys': results.get(dueDesign.name)!.meanKeys,
    'duebatch ns/rec': nsOf(dueDesign, index),
    'sorted array ns/rec': array.nsPerRecord,
    'array / duebatch': ratio(array.nsPerRecord, nsOf(dueDesign, index)),
    'array steps timed': `${array.steps.toLocaleString('en-US')}${array.steps < windowSteps ? ' (time box)' : ''}`,
    'FIFO Map floor ns/rec': nsOf(floorDesign, index),
    'duebatch / floor': ratio(nsOf(dueDesign, index), nsOf(floorDesign, index)),
  };
});
const last = steady.length - 1;
const growthLabel = `${count(steadySizes[last]!)}/${count(steadySizes[0]!)}`;
const growth = (design: SteadyDesign): number => nsOf(design, last) / nsOf(design, 0);
steadyRows.push({
  keys: `growth ${growthLabel}`,
  'duebatch ns/rec': `${growth(dueDesign).toFixed(2)}x`,
  'sorted array ns/rec': `${growth(arrayDesign).toFixed(2)}x`,
  'FIFO Map floor ns/rec': `${growth(floorDesign).toFixed(2)}x`,
});
printTable(
  `queue, steady: publishes (${newKeyShare * 100}% to new keys), pull(${pullMax}, { upTo: clock }) every ${pullEvery} until none due; ns per record, best of ${repeats} windows of ${windowSteps.toLocaleString('en-US')} steps`,
  steadyRows,
);

const middle = Math.max(0, steadySizes.indexOf(100_000));
const speedup = nsOf(arrayDesign, middle) / nsOf(dueDesign, middle);
/** Each target: what it asks, the measured ratio, its bound, and what the floor does on the same measure. */
const targets: [string, number, (value: number) => boolean, string][] = [
  ['publish + pull time vs floor <= 1.5x', totalMs(ours) / totalMs(floor), (v) => v <= 1.5, `floor ${totalMs(floor).toFixed(0)} ms`],
  ['heap per pending record vs floor <= 1.3x', ours.heapPerRecord / floor.heapPerRecord, (v) => v <= 1.3, `floor ${floor.heapPerRecord.toFixed(1)} B`],
  [`steady at ${count(steadySizes[middle]!)} keys: sorted array / duebatch >= 10x`, speedup, (v) => v >= 10, ''],
  [`steady ns/record ${growthLabel} keys <= 2x`, growth(dueDesign), (v) => v <= 2, `FIFO Map floor grows ${growth(floorDesign).toFixed(2)}x`],
];
printTable(
  quick ? "targets (quick run: smaller sizes than the targets')" : 'targets',
  targets.map(([target, value, met, reference]) => ({ target, measured: `${value.toFixed(2)}x`, met: met(value) ? 'yes' : 'NO', reference })),
);
