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
import type { StoredRollup } from '../db/metrics.js';
import { METRIC_KEYS, type MetricKey } from './records.js';
import type { DayRollup, MetricRollup } from './rollup.js';

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
  /** UTC days, oldest first. */
  days: readonly string[];
  /** Cluster ids in row order. */
  clusterIds: readonly string[];
  rowOf: ReadonlyMap<string, number>;
  values: Float64Array;
  lastAt: Float64Array;
}

/** Columns for these days and clusters, every cell empty. */
export function emptyColumns(days: readonly string[], clusterIds: readonly string[]): RollupColumns {
  const cells = days.length * clusterIds.length;
  const lastAt = new Float64Array(cells * METRICS).fill(Number.NaN);
  return { days, clusterIds, rowOf: new Map(clusterIds.map((id, row) => [id, row])), values: new Float64Array(cells * METRICS * SLOTS), lastAt };
}

/** The cell of a row on a day (its index into the columns, before × METRICS). */
export const cellOf = (columns: RollupColumns, day: number, row: number): number => day * columns.clusterIds.length + row;

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

/** One cluster's rollups in object form, oldest day first (days without any metric are left out). */
export function rollupsOf(columns: RollupColumns, row: number): StoredRollup[] {
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
