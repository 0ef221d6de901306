// The fleet's daily rollups in columnar form (issue 21 §1): one Float64Array
// for every cluster-day-metric's numbers instead of ~13 objects per cluster-day.
// The repository decodes packed rollups (shared/db/rollup-packs.ts) straight
// into it, the scoring engine folds it without touching an object, and the few
// readers that want objects get them per cluster on demand (rollupsOf).
//
// Layout: a cell is one cluster's one day; cell = day × clusters + row.
//   values[(cell × METRICS + metric) × SLOTS + slot]   slot: PRESENT (0/1), MIN, MAX, SUM, COUNT, LAST
//   lastAt[cell × METRICS + metric]                   the `last` sample's time, epoch ms (NaN: none)
// Rollup times are always toISOString() text (mergeSample), so ms round-trip exactly.
import { endianness } from 'node:os';
import type { StoredRollup } from '../db/metrics.js';
import { METRIC_KEYS, type MetricKey } from './records.js';
import { isSound, type DayRollup, type MetricRollup } from './rollup.js';

// Cells and packs (shared/db/rollup-packs.ts) store their doubles little-endian and are read as typed arrays.
if (endianness() !== 'LE') throw new Error('stored rollup cells and packs are little-endian: this platform is not');

export const METRICS = METRIC_KEYS.length;
/** Doubles per cluster-day-metric. */
export const SLOTS = 6;
export const PRESENT = 0;
export const MIN = 1;
export const MAX = 2;
export const SUM = 3;
export const COUNT = 4;
export const LAST = 5;

/** Each metric key's index (METRIC_KEYS order); no prototype, so any other key is undefined. */
export const METRIC_INDEX_OF: Readonly<Record<string, number | undefined>> = Object.assign(
  Object.create(null) as Record<string, number>,
  Object.fromEntries(METRIC_KEYS.map((k, i) => [k, i])),
);

export interface RollupColumns {
  /** UTC days, oldest first; with `window`, the first stands for the window's days folded. */
  days: readonly string[];
  /**
   * Set when the first day's cells are not one day's but these days' folded into one
   * (foldDays: the refresh's settled lookback, shared/db/rollup-packs.ts): such columns
   * answer a fold from their first day only; anything per day throws WindowedColumns.
   */
  window?: readonly string[];
  /** Cluster ids in row order. */
  clusterIds: readonly string[];
  rowOf: ReadonlyMap<string, number>;
  values: Float64Array;
  lastAt: Float64Array;
}

/**
 * Columns for these days and clusters, every cell empty. `shared`: their arrays in SharedArrayBuffers,
 * which a worker thread is posted without a copy (the chat's SQL snapshot: 100 MB for 10,000 clusters).
 */
export function emptyColumns(days: readonly string[], clusterIds: readonly string[], shared = false): RollupColumns {
  const cells = days.length * clusterIds.length;
  const doubles = (count: number) => (shared ? new Float64Array(new SharedArrayBuffer(count * 8)) : new Float64Array(count));
  const lastAt = doubles(cells * METRICS).fill(Number.NaN);
  return { days, clusterIds, rowOf: new Map(clusterIds.map((id, row) => [id, row])), values: doubles(cells * METRICS * SLOTS), lastAt };
}

/** The cell of a row on a day (its index into the columns, before × METRICS). */
export const cellOf = (columns: Pick<RollupColumns, 'clusterIds'>, day: number, row: number): number => day * columns.clusterIds.length + row;

/** One metric's rollup into its slots at `at`, marked present (its `last_at` is the caller's). */
export function setSlots(values: Float64Array, at: number, part: MetricRollup): void {
  values[at + PRESENT] = 1;
  values[at + MIN] = part.min;
  values[at + MAX] = part.max;
  values[at + SUM] = part.sum;
  values[at + COUNT] = part.count;
  values[at + LAST] = part.last;
}

/** Writes one cluster-day's rollups (object form) into its cell, replacing what the cell held. */
export function putDay(columns: RollupColumns, day: number, row: number, metrics: DayRollup): void {
  const cell = cellOf(columns, day, row);
  const { values, lastAt } = columns;
  values.fill(0, cell * METRICS * SLOTS, (cell + 1) * METRICS * SLOTS);
  lastAt.fill(Number.NaN, cell * METRICS, (cell + 1) * METRICS);
  for (const key in metrics) {
    const m = METRIC_INDEX_OF[key];
    const part = metrics[key as MetricKey];
    if (m === undefined || part === undefined) continue;
    setSlots(values, (cell * METRICS + m) * SLOTS, part);
    lastAt[cell * METRICS + m] = Date.parse(part.last_at);
  }
}

// ---- one cell as stored -------------------------------------------------------
// A rollup item's `m` (shared/db/metrics.ts) is its cluster-day's cell, bytes in this
// layout (little-endian, like the packs): 8 bytes of header (u8 format, u8 METRICS,
// u8 SLOTS, five zero bytes), then the cell's METRICS × SLOTS values, then its METRICS
// lastAt times, as RollupColumns holds them. A refresh reading today's items copies
// each cell in (putCell) where it used to parse a JSON string per item and then every
// `last_at` (issue 21 §1); and a 736-byte cell keeps the item HTTP ingest writes under
// DynamoDB's 1 KB write unit, which 13 metrics of JSON (≈ 1.7 KB) did not.

const CELL_FORMAT = 1;
const CELL_HEADER = 8;
const CELL_VALUES = METRICS * SLOTS;
/** The stored cell's size in bytes. */
export const CELL_BYTES = CELL_HEADER + (CELL_VALUES + METRICS) * 8;

/** A cluster-day's rollups as a stored cell; throws rather than store a number JSON could not carry either (isSound). */
export function encodeCell(day: DayRollup): Uint8Array {
  const bytes = new Uint8Array(CELL_BYTES);
  bytes.set([CELL_FORMAT, METRICS, SLOTS]);
  const values = new Float64Array(bytes.buffer, CELL_HEADER, CELL_VALUES);
  const lastAt = new Float64Array(bytes.buffer, CELL_HEADER + CELL_VALUES * 8, METRICS).fill(Number.NaN);
  for (const key in day) {
    const m = METRIC_INDEX_OF[key];
    const part = day[key as MetricKey];
    if (m === undefined || part === undefined) continue;
    const at = Date.parse(part.last_at);
    if (!isSound(part) || !isTime(at)) throw new RangeError(`the ${key} rollup holds a non-finite number or an unreadable time`);
    setSlots(values, m * SLOTS, part);
    lastAt[m] = at;
  }
  return bytes;
}

/** A stored cell's header checked: anything else is not a cell of this layout. */
function checkCell(bytes: Uint8Array): void {
  if (bytes.length !== CELL_BYTES || bytes[0] !== CELL_FORMAT || bytes[1] !== METRICS || bytes[2] !== SLOTS)
    throw new RangeError(`a stored rollup cell of ${bytes.length} bytes, format ${bytes[0]}: expected ${CELL_BYTES} bytes of format ${CELL_FORMAT}`);
}

/**
 * Copies a stored cell into the columns' cell of `row` on `day` (replacing it). A metric whose
 * numbers are not all finite, or whose count is not a positive integer, is left out, as the
 * JSON reader drops such an entry: never a number scoring would believe.
 */
export function putCell(columns: RollupColumns, day: number, row: number, bytes: Uint8Array): void {
  checkCell(bytes);
  const cell = cellOf(columns, day, row);
  const { values, lastAt } = columns;
  values.set(doublesAt(bytes, CELL_HEADER, CELL_VALUES), cell * CELL_VALUES);
  lastAt.set(doublesAt(bytes, CELL_HEADER + CELL_VALUES * 8, METRICS), cell * METRICS);
  for (let m = 0; m < METRICS; m++) {
    const at = (cell * METRICS + m) * SLOTS;
    if (values[at + PRESENT] === 1 && soundSlots(values, at) && isTime(lastAt[cell * METRICS + m]!)) continue;
    values.fill(0, at, at + SLOTS);
    lastAt[cell * METRICS + m] = Number.NaN;
  }
}

/**
 * `count` doubles at `byteOffset` of `bytes` (little-endian, as cells and packs store them): a
 * view where they sit 8-aligned (Node's pooled buffers and zlib's output do), else a copy.
 */
export function doublesAt(bytes: Uint8Array, byteOffset: number, count: number): Float64Array {
  const at = bytes.byteOffset + byteOffset;
  if (at % 8 === 0) return new Float64Array(bytes.buffer, at, count);
  const copy = new Float64Array(count);
  new Uint8Array(copy.buffer).set(bytes.subarray(byteOffset, byteOffset + count * 8));
  return copy;
}

/** Epoch ms a Date can hold (NaN is not). */
const isTime = (ms: number): boolean => Math.abs(ms) <= 8.64e15;

/** The slots at `at` hold a rollup isSound would accept. */
const soundSlots = (values: Float64Array, at: number): boolean =>
  Number.isFinite(values[at + MIN]!) &&
  Number.isFinite(values[at + MAX]!) &&
  Number.isFinite(values[at + SUM]!) &&
  Number.isFinite(values[at + LAST]!) &&
  Number.isSafeInteger(values[at + COUNT]!) &&
  values[at + COUNT]! > 0;

/** A stored cell as rollups in object form (what ingest merges into), dropping what putCell drops. */
export function decodeCell(bytes: Uint8Array): DayRollup {
  checkCell(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const value = (m: number, slot: number) => view.getFloat64(CELL_HEADER + (m * SLOTS + slot) * 8, true);
  const day: DayRollup = {};
  for (let m = 0; m < METRICS; m++) {
    if (value(m, PRESENT) !== 1) continue;
    const at = view.getFloat64(CELL_HEADER + (CELL_VALUES + m) * 8, true);
    const part = { min: value(m, MIN), max: value(m, MAX), sum: value(m, SUM), count: value(m, COUNT), last: value(m, LAST), last_at: '' };
    if (!isSound(part) || !isTime(at)) continue;
    part.last_at = new Date(at).toISOString();
    day[METRIC_KEYS[m]!] = part;
  }
  return day;
}

/** Columns from rollups in object form (rollups of days or clusters not listed are ignored). */
export function columnsFromRollups(days: readonly string[], clusterIds: readonly string[], rollups: Iterable<StoredRollup>): RollupColumns {
  const columns = emptyColumns(days, clusterIds);
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  for (const r of rollups) {
    const day = dayIndex.get(r.day);
    const row = columns.rowOf.get(r.cluster_id);
    if (day !== undefined && row !== undefined) putDay(columns, day, row, r.metrics);
  }
  return columns;
}

/** A per-day read of columns whose first day is a window of days folded (RollupColumns.window). */
export class WindowedColumns extends Error {
  constructor(columns: RollupColumns, what: string) {
    super(`${what}: these columns hold ${columns.window?.[0]}…${columns.window?.at(-1)} folded into one, not per day`);
    this.name = 'WindowedColumns';
  }
}

/**
 * Days of one-day packs (oldest first, as RollupPack: ids, values, lastAt) folded into one
 * cell per cluster, as the scoring engine folds a lookback (shared/scoring/inputs.ts
 * foldColumns): the first present day's slots, then per later day the max of MAX, the min
 * of MIN, SUM and COUNT added, its LAST; so folding this cell and then later days gives the
 * same doubles as folding every day. `lastAt`: the metric's newest sample time over the days.
 * Rows: every cluster of any day, by id.
 */
export function foldDays(packs: readonly Pick<RollupColumns, 'clusterIds' | 'values' | 'lastAt'>[]): Pick<RollupColumns, 'clusterIds' | 'values' | 'lastAt'> {
  const clusterIds = [...new Set(packs.flatMap((pack) => pack.clusterIds))].sort();
  const rowOf = new Map(clusterIds.map((id, row) => [id, row]));
  const values = new Float64Array(clusterIds.length * METRICS * SLOTS);
  const lastAt = new Float64Array(clusterIds.length * METRICS).fill(Number.NaN);
  for (const pack of packs)
    for (let i = 0; i < pack.clusterIds.length; i++) {
      const row = rowOf.get(pack.clusterIds[i]!)!;
      for (let m = 0; m < METRICS; m++) {
        const from = (i * METRICS + m) * SLOTS;
        if (pack.values[from + PRESENT] === 0) continue;
        const at = (row * METRICS + m) * SLOTS;
        const time = pack.lastAt[i * METRICS + m]!;
        if (!(lastAt[row * METRICS + m]! >= time)) lastAt[row * METRICS + m] = time;
        if (values[at + PRESENT] === 0) {
          values.set(pack.values.subarray(from, from + SLOTS), at);
          values[at + PRESENT] = 1;
          continue;
        }
        if (pack.values[from + MAX]! > values[at + MAX]!) values[at + MAX] = pack.values[from + MAX]!;
        if (pack.values[from + MIN]! < values[at + MIN]!) values[at + MIN] = pack.values[from + MIN]!;
        values[at + SUM] = values[at + SUM]! + pack.values[from + SUM]!;
        values[at + COUNT] = values[at + COUNT]! + pack.values[from + COUNT]!;
        values[at + LAST] = pack.values[from + LAST]!;
      }
    }
  return { clusterIds, values, lastAt };
}

/** One cluster's rollups in object form, oldest day first (days without any metric are left out). */
export function rollupsOf(columns: RollupColumns, row: number): StoredRollup[] {
  if (columns.window) throw new WindowedColumns(columns, 'rollups per day');
  const out: StoredRollup[] = [];
  const clusterId = columns.clusterIds[row]!;
  for (let day = 0; day < columns.days.length; day++) {
    const cell = cellOf(columns, day, row);
    let metrics: DayRollup | undefined;
    for (let m = 0; m < METRICS; m++) {
      const at = (cell * METRICS + m) * SLOTS;
      if (columns.values[at + PRESENT] === 0) continue;
      const part: MetricRollup = {
        min: columns.values[at + MIN]!,
        max: columns.values[at + MAX]!,
        sum: columns.values[at + SUM]!,
        count: columns.values[at + COUNT]!,
        last: columns.values[at + LAST]!,
        last_at: new Date(columns.lastAt[cell * METRICS + m]!).toISOString(),
      };
      (metrics ??= {})[METRIC_KEYS[m]!] = part;
    }
    if (metrics) out.push({ cluster_id: clusterId, day: columns.days[day]!, metrics });
  }
  return out;
}
