// What the scoring engine reads for one cluster, and how a metric is
// aggregated over a lookback. Pure: the repositories load these inputs.
import type { AlertFacts } from '../db/alerts.js';
import type { ClusterRecord } from '../db/clusters.js';
import type { StoredRollup } from '../db/metrics.js';
import { METRIC_KEYS, type MetricKey } from '../fleet/records.js';
import { meanWithin } from '../fleet/rollup.js';
import {
  COUNT,
  LAST,
  MAX,
  METRIC_INDEX_OF,
  METRICS,
  MIN,
  PRESENT,
  rollupsOf,
  setSlots,
  SLOTS,
  SUM,
  WindowedColumns,
  type RollupColumns,
} from '../fleet/rollup-columns.js';
import { type Aggregation, THRESHOLD_DECIMALS } from '../rules/schemas.js';

export interface ClusterData {
  cluster: ClusterRecord;
  /**
   * Daily rollups covering at least the longest lookback, any order. With `columns` this is
   * built from them on each read (rollupsOf), for the few readers that want objects.
   */
  rollups: StoredRollup[];
  /** The fleet's rollups in columns (the refresh's source); absent: `rollups` is the source. */
  columns?: RollupColumns;
  /** This cluster's row in `columns`; −1 when it has no rollup. */
  row?: number;
  /** Alerts that started in, or are still firing during, the longest alert window (what the views read of them). */
  alerts: AlertFacts[];
}

/**
 * A cluster whose rollups are a row of the fleet's columns: the engine folds the columns,
 * and `rollups` builds this cluster's objects only when a reader asks (and keeps none).
 */
export function columnarClusterData(cluster: ClusterRecord, columns: RollupColumns, alerts: AlertFacts[]): ClusterData {
  return new ColumnarClusterData(cluster, columns, columns.rowOf.get(cluster.cluster_id) ?? -1, alerts);
}

/**
 * A class, so the getter is its prototype's: an object literal with a getter carries its own
 * accessor and closure, 616 bytes a cluster against 72 (heap used, empty alerts), 5.4 MB of a
 * 10,000-cluster refresh that a fresh process touches page by page (test/bench/README.md).
 * Nothing spreads a ClusterData (a spread would not copy a prototype's getter).
 */
class ColumnarClusterData implements ClusterData {
  constructor(
    readonly cluster: ClusterRecord,
    readonly columns: RollupColumns,
    readonly row: number,
    readonly alerts: AlertFacts[],
  ) {}

  get rollups(): StoredRollup[] {
    return this.row < 0 ? [] : rollupsOf(this.columns, this.row);
  }
}

const DAY_MS = 86_400_000;

let lastStart = { days: -1, at: -1, day: '' };

/** The first UTC day (YYYY-MM-DD) of a lookback of `days` days ending today. */
export function lookbackStart(days: number, now: Date): string {
  // Asked once per dimension per cluster with the same arguments: remember the last answer.
  const at = now.getTime();
  if (lastStart.days === days && lastStart.at === at) return lastStart.day;
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  lastStart = { days, at, day: new Date(today - (days - 1) * DAY_MS).toISOString().slice(0, 10) };
  return lastStart.day;
}

/**
 * The rollups of a lookback, oldest day first: select once per cluster, then
 * aggregate each metric with aggregateWindow. A cluster has one rollup per day
 * (the storage key), and the repositories return them in day order.
 */
export function lookbackRollups(rollups: readonly StoredRollup[], fromDay: string): readonly StoredRollup[] {
  // Usually every rollup read is inside the lookback and in order: then no copy is needed.
  let prior = '';
  for (const r of rollups) {
    if (r.day < fromDay || r.day < prior) return rollups.filter((x) => x.day >= fromDay).sort((a, b) => byName(a.day, b.day));
    prior = r.day;
  }
  return rollups;
}

/** The metric over the lookback, or null when there is no sample in it. */
export function aggregate(rollups: readonly StoredRollup[], key: MetricKey, how: Aggregation, fromDay: string): number | null {
  return aggregateWindow(lookbackRollups(rollups, fromDay), key, how);
}

/**
 * The metric over a window from lookbackRollups (oldest day first); one pass,
 * allocating nothing. `last` is the latest day's last sample, so it reads one
 * rollup instead of comparing every day's timestamps.
 */
export function aggregateWindow(rollups: readonly StoredRollup[], key: MetricKey, how: Aggregation): number | null {
  if (how === 'last') {
    for (let i = rollups.length - 1; i >= 0; i--) {
      const part = rollups[i]!.metrics[key];
      if (part !== undefined) return part.last;
    }
    return null;
  }
  let found = false;
  let acc = 0;
  let count = 0;
  // An average's bounds: a sum past 2^53 is rounded, and its mean must not pass the window's min or max.
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < rollups.length; i++) {
    const part = rollups[i]!.metrics[key];
    if (part === undefined) continue;
    if (!found) {
      found = true;
      acc = how === 'max' ? part.max : how === 'min' ? part.min : part.sum;
      count = part.count;
      lo = part.min;
      hi = part.max;
      continue;
    }
    switch (how) {
      case 'max':
        if (part.max > acc) acc = part.max;
        break;
      case 'min':
        if (part.min < acc) acc = part.min;
        break;
      default:
        acc += part.sum;
        count += part.count;
        if (part.min < lo) lo = part.min;
        if (part.max > hi) hi = part.max;
    }
  }
  if (!found) return null;
  const value = how === 'avg' ? meanWithin(acc, count, lo, hi) : acc;
  return Number.isFinite(acc) ? value : overflowed(rollups, key, how, count);
}

/**
 * The rare window whose sum overflowed (or met +∞ and −∞): the mean is taken
 * as Σ(day's sum / samples), whose partial sums stay finite for finite days;
 * a sum beyond the double range is the largest double of its sign. A value
 * that still is not a number is treated as no data. The engine never sees ±∞ or NaN.
 */
function overflowed(rollups: readonly StoredRollup[], key: MetricKey, how: Aggregation, count: number): number | null {
  let mean = 0;
  for (let i = 0; i < rollups.length; i++) {
    const part = rollups[i]!.metrics[key];
    if (part !== undefined) mean += part.sum / count;
  }
  const value = how === 'avg' ? mean : mean * count;
  if (Number.isNaN(value)) return null;
  return Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, value));
}

/**
 * The newest sample's time (ISO) among the rollups, or null when they hold
 * none: the max `last_at`. A rollup's samples all fall on its day (ingest keys
 * it by the sample's UTC day), so a rollup of a day before the newest time
 * found cannot hold a newer one and is skipped unread: in practice one
 * rollup's metrics are compared, and every other rollup costs one string compare.
 */
export function newestSampleAt(rollups: readonly StoredRollup[]): string | null {
  let newest: string | null = null;
  for (let i = rollups.length - 1; i >= 0; i--) {
    const r = rollups[i]!;
    // "2026-11-19" < "2026-11-20T…": an earlier day (its own day is the rollup already read).
    if (newest !== null && r.day < newest) continue;
    for (const key in r.metrics) {
      const at = r.metrics[key as MetricKey]?.last_at;
      if (at !== undefined && (newest === null || at > newest)) newest = at;
    }
  }
  return newest;
}

/** Each metric key's index in the columnar aggregates (METRIC_KEYS order, as in the rollup columns). */
export const METRIC_INDEX = METRIC_INDEX_OF as Readonly<Record<MetricKey, number>>;

/**
 * One cluster's metrics over one lookback, columnar: per metric index (METRIC_INDEX)
 * `SLOTS` doubles (present 0/1, min, max, sum, count, last: the rollup columns' slots)
 * at `base + index × SLOTS` of a Float64Array shared by the fleet, folded in one pass
 * over the lookback (aggregateFleet). Every view (unified, health, risk metrics, fleet
 * metrics, staleness) reads its values here instead of walking the rollups again.
 */
export interface ClusterAggregates {
  /** The first day of the lookback the aggregates cover. */
  fromDay: string;
  values: Float64Array;
  base: number;
  /** The newest sample's time in the lookback (ISO), or null. */
  lastMetricAt: string | null;
  // What the values were folded from, kept for the rare value that is not finite (aggregatedValue):
  /** The lookback's rollups, oldest first, when the cluster came with objects only; else null. */
  window: readonly StoredRollup[] | null;
  /** Else the fleet's columns, the cluster's row (−1: none) and the lookback's first day in them. */
  columns: RollupColumns | null;
  row: number;
  firstDay: number;
}

/**
 * Folds a window (oldest day first) into `values` at `base`: one pass over its
 * rollups, a fixed loop over the metric keys per rollup. The comparisons and
 * additions are aggregateWindow's, in its order, so every value is the same double.
 * For clusters given as objects only (tests, fixtures); the refresh folds columns (foldRow).
 */
function foldWindow(window: readonly StoredRollup[], values: Float64Array, base: number): void {
  for (let r = 0; r < window.length; r++) {
    const metrics = window[r]!.metrics;
    // for-in walks the keys a rollup holds (V8's enum cache makes metrics[key] a field load here).
    for (const key in metrics) {
      const m = METRIC_INDEX_OF[key];
      if (m === undefined) continue;
      const part = metrics[key as MetricKey];
      if (part === undefined) continue;
      const at = base + m * SLOTS;
      if (values[at + PRESENT] === 0) {
        setSlots(values, at, part);
        continue;
      }
      if (part.max > values[at + MAX]!) values[at + MAX] = part.max;
      if (part.min < values[at + MIN]!) values[at + MIN] = part.min;
      values[at + SUM] = values[at + SUM]! + part.sum;
      values[at + COUNT] = values[at + COUNT]! + part.count;
      values[at + LAST] = part.last;
    }
  }
}

/**
 * Folds the columns' days from `firstDay` on, oldest first, into the aggregates of the clusters
 * with a row: `fleetOf[row]` is the cluster's place in the fleet (−1: none), its aggregates at
 * place × METRICS × SLOTS of `out`, its newest sample's time (epoch ms) at `newest[place]`.
 * Row by row, each row's days in turn, so the first rows run both paths (a cell's first day, a
 * day merged in) before V8 optimises the loop mid-run. Walked day by day, the merge first ran
 * after a whole day, in code optimised without it: it deoptimised, and a fresh process (a new
 * recompute container) ran the loop interpreted until it was compiled again (the fold alone
 * 26–35 → 19–24 ms at 10,000 clusters; warm, 7 days, 28–29 → 23–24 ms). Each day's rows are
 * still read in order, one sequential stream per day. Per cell a fixed loop over the metrics'
 * doubles, no object read. The comparisons and additions are foldWindow's (so
 * aggregateWindow's), in its order, so every value is the same double.
 */
function foldColumns(columns: RollupColumns, firstDay: number, fleetOf: Int32Array, out: Float64Array, newest: Float64Array): void {
  const { values, lastAt } = columns;
  const rows = fleetOf.length;
  const days = columns.days.length;
  for (let row = 0; row < rows; row++) {
    const place = fleetOf[row]!;
    if (place < 0) continue;
    let latest = newest[place]!;
    const base = place * METRICS * SLOTS;
    const end = base + METRICS * SLOTS;
    for (let day = firstDay; day < days; day++) {
      const cell = day * rows + row;
      let from = cell * METRICS * SLOTS;
      let metric = cell * METRICS;
      for (let at = base; at < end; at += SLOTS, from += SLOTS, metric++) {
        if (values[from + PRESENT] === 0) continue;
        // A day's samples all fall on that day, so this max is newestSampleAt's answer.
        if (lastAt[metric]! > latest) latest = lastAt[metric]!;
        if (out[at + PRESENT] === 0) {
          out[at + PRESENT] = 1;
          out[at + MIN] = values[from + MIN]!;
          out[at + MAX] = values[from + MAX]!;
          out[at + SUM] = values[from + SUM]!;
          out[at + COUNT] = values[from + COUNT]!;
          out[at + LAST] = values[from + LAST]!;
          continue;
        }
        if (values[from + MAX]! > out[at + MAX]!) out[at + MAX] = values[from + MAX]!;
        if (values[from + MIN]! < out[at + MIN]!) out[at + MIN] = values[from + MIN]!;
        out[at + SUM] = out[at + SUM]! + values[from + SUM]!;
        out[at + COUNT] = out[at + COUNT]! + values[from + COUNT]!;
        out[at + LAST] = values[from + LAST]!;
      }
    }
    newest[place] = latest;
  }
}

/** The first of the columns' days (oldest first) on or after `fromDay`; of a window's, only its first day. */
function firstDayFrom(columns: RollupColumns, fromDay: string): number {
  const days = columns.days;
  if (columns.window && fromDay !== days[0]) throw new WindowedColumns(columns, `a lookback from ${fromDay}`);
  let day = 0;
  while (day < days.length && days[day]! < fromDay) day++;
  return day;
}

/** One cluster's aggregates over the lookback starting `fromDay`, from its rollup objects (its own small array). */
export function aggregateCluster(rollups: readonly StoredRollup[], fromDay: string): ClusterAggregates {
  return aggregateWindowInto(rollups, fromDay, new Float64Array(METRICS * SLOTS), 0);
}

function aggregateWindowInto(rollups: readonly StoredRollup[], fromDay: string, values: Float64Array, base: number): ClusterAggregates {
  const window = lookbackRollups(rollups, fromDay);
  foldWindow(window, values, base);
  return { fromDay, values, base, lastMetricAt: newestSampleAt(window), window, columns: null, row: -1, firstDay: 0 };
}

/**
 * Every cluster's aggregates over the lookback starting `fromDay`, in fleet order, in one
 * Float64Array: folded from the columns (the refresh), or from the rollup objects of a cluster
 * given without columns.
 */
export function aggregateFleet(fleet: readonly ClusterData[], fromDay: string): ClusterAggregates[] {
  const values = new Float64Array(fleet.length * METRICS * SLOTS);
  const newest = new Float64Array(fleet.length).fill(Number.NEGATIVE_INFINITY);
  // Per columns object (the fleet's clusters share one), each row's place in the fleet.
  const places = new Map<RollupColumns, Int32Array>();
  for (let i = 0; i < fleet.length; i++) {
    const { columns, row = -1 } = fleet[i]!;
    if (columns === undefined || row < 0) continue;
    let fleetOf = places.get(columns);
    if (fleetOf === undefined) places.set(columns, (fleetOf = new Int32Array(columns.clusterIds.length).fill(-1)));
    if (fleetOf[row] === -1) fleetOf[row] = i;
  }
  for (const [columns, fleetOf] of places) foldColumns(columns, firstDayFrom(columns, fromDay), fleetOf, values, newest);
  const out = new Array<ClusterAggregates>(fleet.length);
  let columns: RollupColumns | undefined;
  let firstDay = 0;
  // Clusters fed by the same pull share their newest sample's time (the query's step): each time
  // is written out once. The bench's 10,000 clusters: fold 34–36 → 28–30 ms; were every time
  // distinct (pushes stamped by each agent's clock), the lookups would add ≈ 1.5 ms.
  const times = new Map<number, string>();
  const timeText = (ms: number): string => {
    let text = times.get(ms);
    if (text === undefined) times.set(ms, (text = new Date(ms).toISOString()));
    return text;
  };
  for (let i = 0; i < fleet.length; i++) {
    const data = fleet[i]!;
    const base = i * METRICS * SLOTS;
    if (data.columns === undefined) {
      out[i] = aggregateWindowInto(data.rollups, fromDay, values, base);
      continue;
    }
    // The fleet's clusters share one columns object: find the lookback's first day once.
    if (data.columns !== columns) {
      columns = data.columns;
      firstDay = firstDayFrom(columns, fromDay);
    }
    const row = data.row ?? -1;
    // A cluster listed twice (the same row) was folded once, at its first place: copied here.
    const place = row < 0 ? i : places.get(columns)![row]!;
    if (place !== i) values.copyWithin(base, place * METRICS * SLOTS, (place + 1) * METRICS * SLOTS);
    const latest = newest[place]!;
    out[i] = {
      fromDay,
      values,
      base,
      lastMetricAt: latest === Number.NEGATIVE_INFINITY ? null : timeText(latest),
      window: null,
      columns,
      row,
      firstDay,
    };
  }
  return out;
}

/**
 * A metric (its index) over a row's days from `firstDay` on: aggregateWindow's answer
 * over the same rollups, computed from the columns the same way (and so the same double).
 */
function aggregateRow(columns: RollupColumns, row: number, firstDay: number, metric: number, how: Aggregation): number | null {
  if (row < 0) return null;
  const values = columns.values;
  const clusters = columns.clusterIds.length;
  const slotOf = (day: number) => ((day * clusters + row) * METRICS + metric) * SLOTS;
  if (how === 'last') {
    for (let day = columns.days.length - 1; day >= firstDay; day--) {
      const at = slotOf(day);
      if (values[at + PRESENT] !== 0) return values[at + LAST]!;
    }
    return null;
  }
  let found = false;
  let acc = 0;
  let count = 0;
  let lo = 0;
  let hi = 0;
  for (let day = firstDay; day < columns.days.length; day++) {
    const at = slotOf(day);
    if (values[at + PRESENT] === 0) continue;
    if (!found) {
      found = true;
      acc = how === 'max' ? values[at + MAX]! : how === 'min' ? values[at + MIN]! : values[at + SUM]!;
      count = values[at + COUNT]!;
      lo = values[at + MIN]!;
      hi = values[at + MAX]!;
      continue;
    }
    switch (how) {
      case 'max':
        if (values[at + MAX]! > acc) acc = values[at + MAX]!;
        break;
      case 'min':
        if (values[at + MIN]! < acc) acc = values[at + MIN]!;
        break;
      default:
        acc += values[at + SUM]!;
        count += values[at + COUNT]!;
        if (values[at + MIN]! < lo) lo = values[at + MIN]!;
        if (values[at + MAX]! > hi) hi = values[at + MAX]!;
    }
  }
  if (!found) return null;
  const value = how === 'avg' ? meanWithin(acc, count, lo, hi) : acc;
  if (Number.isFinite(acc)) return value;
  // overflowed's answer, from the columns: Σ(day's sum / samples), clamped to the double range;
  // it needs each day's sum, which a window's first cell has folded (the refresh reads per day then).
  if (columns.window) throw new WindowedColumns(columns, 'a sum beyond the double range');
  let mean = 0;
  for (let day = firstDay; day < columns.days.length; day++) {
    const at = slotOf(day);
    if (values[at + PRESENT] !== 0) mean += values[at + SUM]! / count;
  }
  const overflowed = how === 'avg' ? mean : mean * count;
  if (Number.isNaN(overflowed)) return null;
  return Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, overflowed));
}

/**
 * The metric over the lookback starting `fromDay`, or null when there is no sample in it:
 * aggregate's answer, read from the cluster's columns when it has them (no object built).
 */
export function aggregateOf(data: ClusterData, key: MetricKey, how: Aggregation, fromDay: string): number | null {
  if (data.columns === undefined) return aggregate(data.rollups, key, how, fromDay);
  return aggregateRow(data.columns, data.row ?? -1, firstDayFrom(data.columns, fromDay), METRIC_INDEX[key], how);
}

/**
 * Whether any aggregate holds a number that is not finite (a sum beyond the double range):
 * its exact answer (aggregatedValue's fallback) reads each day, which a window does not hold.
 */
export function anyNotFinite(aggregates: readonly ClusterAggregates[]): boolean {
  for (const { values, base } of aggregates)
    for (let at = base; at < base + METRICS * SLOTS; at += SLOTS)
      if (
        values[at + PRESENT] !== 0 &&
        !(Number.isFinite(values[at + MIN]) && Number.isFinite(values[at + MAX]) && Number.isFinite(values[at + SUM]) && Number.isFinite(values[at + LAST]))
      )
        return true;
  return false;
}

/** Aggregation names as small integers, for the hot loops (aggregatedValue). */
export const HOW: Readonly<Record<Aggregation, number>> = { last: LAST, max: MAX, min: MIN, sum: SUM, avg: -1 };

/**
 * The metric (its METRIC_INDEX) aggregated `how` (its HOW code), or null when it has no
 * sample in the window: exactly aggregateWindow's answer. A value that is not finite
 * (an overflowed sum, or bounds no parsed rollup has) is answered by aggregateWindow
 * itself, or its columnar twin when the cluster was folded from columns.
 */
export function aggregatedValue(agg: ClusterAggregates, index: number, how: number): number | null {
  const values = agg.values;
  const at = agg.base + index * SLOTS;
  if (values[at + PRESENT] === 0) return null;
  if (how === LAST) return values[at + LAST]!;
  const value = how === -1 ? values[at + SUM]! / values[at + COUNT]! : values[at + how]!;
  // finite; a mean held within the window's min and max, as aggregateWindow's (meanWithin)
  if (value - value === 0) return how === -1 ? meanWithin(values[at + SUM]!, values[at + COUNT]!, values[at + MIN]!, values[at + MAX]!) : value;
  const name = how === -1 ? 'avg' : how === MAX ? 'max' : how === MIN ? 'min' : 'sum';
  if (agg.columns !== null) return aggregateRow(agg.columns, agg.row, agg.firstDay, index, name);
  return aggregateWindow(agg.window!, METRIC_KEYS[index]!, name);
}

/** aggregatedValue by key and aggregation name. */
export const aggregatedMetric = (agg: ClusterAggregates, key: MetricKey, how: Aggregation): number | null => aggregatedValue(agg, METRIC_INDEX[key], HOW[how]);

/** Whether a cluster's metrics stopped arriving, and the risk reason that says so. */
export interface Staleness {
  /** The newest sample in the lookback (ISO), or null when it has none. */
  last_metric_at: string | null;
  /** No sample in the lookback, or the newest older than `stale_after_minutes`. */
  metrics_stale: boolean;
  /** The first risk reason (and risk signal) of a stale cluster; undefined when fresh. */
  reason: string | undefined;
}

/**
 * "no metrics since 2026-11-19 08:00 UTC", or "no metrics in the last 7 UTC days" when the lookback holds no sample:
 * the lookback is whole UTC days, today's so far included, so at 00:05 UTC a sample of 6½ days ago is outside "7 days".
 */
export function staleReason(lastMetricAt: string | null, lookbackDays: number): string {
  if (lastMetricAt === null) return `no metrics in the last ${lookbackDays} UTC day${lookbackDays === 1 ? '' : 's'}`;
  return `no metrics since ${lastMetricAt.slice(0, 10)} ${lastMetricAt.slice(11, 16)} UTC`;
}

/** Staleness of a lookback window (from lookbackRollups): one max per cluster, no other pass. */
export function staleness(window: readonly StoredRollup[], staleAfterMinutes: number, lookbackDays: number, now: Date): Staleness {
  return stalenessOf(newestSampleAt(window), staleAfterMinutes, lookbackDays, now);
}

/** Staleness from the newest sample's time (ClusterAggregates.lastMetricAt). */
export function stalenessOf(last: string | null, staleAfterMinutes: number, lookbackDays: number, now: Date): Staleness {
  const stale = last === null || now.getTime() - Date.parse(last) > staleAfterMinutes * 60_000;
  return { last_metric_at: last, metrics_stale: stale, reason: stale ? staleReason(last, lookbackDays) : undefined };
}

/** How many alerts fired during the lookback (see alertsInLookback), without building the list. */
export function countAlertsInLookback(alerts: readonly AlertFacts[], days: number, now: Date): number {
  return alerts.length === 0 ? 0 : countAlertsSince(alerts, new Date(now.getTime() - days * DAY_MS).toISOString());
}

/** How many alerts started at or after `since` (ISO) or are still firing: countAlertsInLookback with its bound worked out. */
export function countAlertsSince(alerts: readonly AlertFacts[], since: string): number {
  let n = 0;
  for (let i = 0; i < alerts.length; i++) {
    const a = alerts[i]!;
    if (a.starts_at >= since || a.status === 'Firing') n++;
  }
  return n;
}

/** Alerts that fired during the lookback: started in it, or still firing. */
export function alertsInLookback<A extends AlertFacts>(alerts: readonly A[], days: number, now: Date): A[] {
  if (alerts.length === 0) return [];
  const since = new Date(now.getTime() - days * DAY_MS).toISOString();
  return alerts.filter((a) => a.starts_at >= since || a.status === 'Firing');
}

/** Code-point order of names: stable across machines and much cheaper than localeCompare in large sorts. */
export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// Made on first use, not at import: a collator loads ICU's collation data (≈ 10 MB RSS and
// 10–40 ms here), which a route group that never sorts by name would pay on every cold start.
let collator: Intl.Collator | undefined;

/**
 * localeCompare's order (a collator with the same default locale and options,
 * so the same answers) without its per-call cost, for sorts whose order the
 * contract pins to it.
 */
export const byLocale = (a: string, b: string): number => (collator ??= new Intl.Collator()).compare(a, b);

/**
 * Names made only of these characters collate in code-unit order (checked below
 * against the collator on every pair and prefix), so a sort of such names can
 * compare them with `<` and stay in localeCompare's order.
 */
const PLAIN = /^[-0-9a-z]*$/;
const PLAIN_ALPHABET = '-0123456789abcdefghijklmnopqrstuvwxyz';
let plainChecked: boolean | undefined;
const plainCollates = (): boolean => (plainChecked ??= checkPlainCollates());

function checkPlainCollates(): boolean {
  for (const x of PLAIN_ALPHABET)
    for (const y of PLAIN_ALPHABET)
      for (const [p, q] of [
        [x, y],
        [`${x}a`, y],
        [x, `${y}a`],
        [`a${x}b`, `a${y}`],
      ] as const)
        if (Math.sign(byLocale(p, q)) !== byName(p, q)) return false;
  return true;
}

/**
 * A comparator in localeCompare's order for these names: the plain code-unit
 * compare when every name is lowercase letters, digits and hyphens (the fleet's
 * cluster names in practice), the collator otherwise.
 */
export function localeOrderOf(names: Iterable<string>): (a: string, b: string) => number {
  if (!plainCollates()) return byLocale;
  for (const n of names) if (!PLAIN.test(n)) return byLocale;
  return byName;
}

/** Beyond this magnitude a double has no decimals to round, and n × 100 could overflow. */
const ROUNDING_LIMIT = 2 ** 52 / 100;
export const round1 = (n: number) => (Math.abs(n) < ROUNDING_LIMIT ? Math.round(n * 10) / 10 : n);
export const round2 = (n: number) => (Math.abs(n) < ROUNDING_LIMIT ? Math.round(n * 100) / 100 : n);

const SCALES = [1, 10, 100, 1e3, 1e4, 1e5, 1e6];
/** `n` rounded to `places` decimals (0 to 6); a magnitude with no decimals left to round is kept, as round2 keeps it. */
export const roundAt = (n: number, places: number) => {
  const scale = SCALES[places]!;
  return Math.abs(n) < 2 ** 52 / scale ? Math.round(n * scale) / scale : n;
};

/**
 * The decimals a metric is judged (and answered) at against these thresholds: 2, or as many as the finest of
 * them is written with, up to 6. Rounded coarser than its thresholds, 0.0049 judged against a critical 0.004
 * would read 0, healthy.
 */
export function judgedDecimals(thresholds: readonly number[]): number {
  let places = 2;
  for (const t of thresholds) while (places < THRESHOLD_DECIMALS && roundAt(t, places) !== t) places++;
  return places;
}
/** n within lo..hi; NaN becomes lo (the worst score), so no score can ever be NaN. */
export const clamp = (n: number, lo = 0, hi = 100) => (n >= lo ? Math.min(n, hi) : lo);
