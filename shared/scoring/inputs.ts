// What the scoring engine reads for one cluster, and how a metric is
// aggregated over a lookback. Pure: the repositories load these inputs.
import type { AlertRecord } from '../db/alerts.js';
import type { ClusterRecord } from '../db/clusters.js';
import type { StoredRollup } from '../db/metrics.js';
import type { MetricKey } from '../fleet/records.js';
import type { Aggregation } from '../rules/schemas.js';

export interface ClusterData {
  cluster: ClusterRecord;
  /** Daily rollups covering at least the longest lookback, any order. */
  rollups: StoredRollup[];
  /** Alerts that started in, or are still firing during, the longest alert window. */
  alerts: AlertRecord[];
}

const DAY_MS = 86_400_000;

/** The first UTC day (YYYY-MM-DD) of a lookback of `days` days ending today. */
export function lookbackStart(days: number, now: Date): string {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - (days - 1) * DAY_MS).toISOString().slice(0, 10);
}

/** The metric over the lookback, or null when there is no sample in it. */
export function aggregate(rollups: readonly StoredRollup[], key: MetricKey, how: Aggregation, fromDay: string): number | null {
  const days = rollups.filter((r) => r.day >= fromDay && r.metrics[key]).sort((a, b) => a.day.localeCompare(b.day));
  if (days.length === 0) return null;
  const parts = days.map((d) => d.metrics[key]!);
  switch (how) {
    case 'max':
      return Math.max(...parts.map((p) => p.max));
    case 'min':
      return Math.min(...parts.map((p) => p.min));
    case 'sum':
      return parts.reduce((s, p) => s + p.sum, 0);
    case 'avg':
      return parts.reduce((s, p) => s + p.sum, 0) / parts.reduce((n, p) => n + p.count, 0);
    case 'last':
      return parts.reduce((a, b) => (b.last_at >= a.last_at ? b : a)).last;
  }
}

/** Alerts that fired during the lookback: started in it, or still firing. */
export function alertsInLookback(alerts: readonly AlertRecord[], days: number, now: Date): AlertRecord[] {
  const since = now.getTime() - days * DAY_MS;
  return alerts.filter((a) => Date.parse(a.starts_at) >= since || a.status === 'Firing');
}

export const round1 = (n: number) => Math.round(n * 10) / 10;
export const round2 = (n: number) => Math.round(n * 100) / 100;
export const clamp = (n: number, lo = 0, hi = 100) => Math.min(hi, Math.max(lo, n));
