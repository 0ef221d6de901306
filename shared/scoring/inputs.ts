// What the scoring engine reads for one cluster, and how a metric is
// aggregated over a lookback. Pure: the repositories load these inputs.
import type { AlertRecord } from '../db/alerts.js';
import type { ClusterRecord } from '../db/clusters.js';
import type { StoredRollup } from '../db/metrics.js';
import { METRIC_KEYS, type MetricKey } from '../fleet/records.js';
import type { Aggregation } from '../rules/schemas.js';

export interface ClusterData {
  cluster: ClusterRecord;
  /** Daily rollups covering at least the longest lookback, any order. */
  rollups: StoredRollup[];
  /** Alerts that started in, or are still firing during, the longest alert window. */
  alerts: AlertRecord[];
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

interface WindowSummary {
  min: number;
  max: number;
  sum: number;
  count: number;
  last: number;
  last_at: string;
}

// Each cluster's rollups are summarised once per lookback start and metric key:
// scoring asks for ~14 aggregates per cluster, and a fleet can be 10,000 clusters.
/** Indexed like METRIC_KEYS: a fixed-size array is much cheaper than an object with dynamic keys. */
type Summaries = (WindowSummary | undefined)[];
const KEY_INDEX = Object.fromEntries(METRIC_KEYS.map((k, i) => [k, i])) as Record<MetricKey, number>;
// Cached on the rollups array itself (a symbol property): a WeakMap costs more
// than the summary when a refresh scores 10,000 clusters.
const SUMMARY = Symbol('window summaries');
type WithSummary = { [SUMMARY]?: { fromDay: string; byKey: Summaries } };

function summariesFrom(rollups: readonly StoredRollup[], fromDay: string): Summaries {
  const cached = (rollups as WithSummary)[SUMMARY];
  if (cached && cached.fromDay === fromDay) return cached.byKey;
  const byKey: Summaries = new Array(METRIC_KEYS.length);
  for (const rollup of rollups) {
    if (rollup.day < fromDay) continue;
    const metrics = rollup.metrics;
    for (let i = 0; i < METRIC_KEYS.length; i++) {
      const part = metrics[METRIC_KEYS[i]!];
      if (part === undefined) continue;
      const s = byKey[i];
      if (s === undefined) byKey[i] = { min: part.min, max: part.max, sum: part.sum, count: part.count, last: part.last, last_at: part.last_at };
      else {
        if (part.min < s.min) s.min = part.min;
        if (part.max > s.max) s.max = part.max;
        s.sum += part.sum;
        s.count += part.count;
        if (part.last_at >= s.last_at) {
          s.last = part.last;
          s.last_at = part.last_at;
        }
      }
    }
  }
  (rollups as WithSummary)[SUMMARY] = { fromDay, byKey };
  return byKey;
}

/** The metric over the lookback, or null when there is no sample in it. */
export function aggregate(rollups: readonly StoredRollup[], key: MetricKey, how: Aggregation, fromDay: string): number | null {
  const s = summariesFrom(rollups, fromDay)[KEY_INDEX[key]];
  if (!s) return null;
  switch (how) {
    case 'max':
      return s.max;
    case 'min':
      return s.min;
    case 'sum':
      return s.sum;
    case 'avg':
      return s.sum / s.count;
    case 'last':
      return s.last;
  }
}

/** Alerts that fired during the lookback: started in it, or still firing. */
export function alertsInLookback(alerts: readonly AlertRecord[], days: number, now: Date): AlertRecord[] {
  if (alerts.length === 0) return [];
  const since = new Date(now.getTime() - days * DAY_MS).toISOString();
  return alerts.filter((a) => a.starts_at >= since || a.status === 'Firing');
}

/** Code-point order of names: stable across machines and much cheaper than localeCompare in large sorts. */
export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const round1 = (n: number) => Math.round(n * 10) / 10;
export const round2 = (n: number) => Math.round(n * 100) / 100;
export const clamp = (n: number, lo = 0, hi = 100) => Math.min(hi, Math.max(lo, n));
