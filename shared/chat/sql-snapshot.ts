// The fleet snapshot the run_sql tool loads (shared/chat/sql.ts), and its
// packing for the worker thread (sql-worker.ts): the main thread keeps the
// packed snapshot, posts it to the worker, and posts it again to a replacement
// worker after a runaway query.
import type { AlertRecord } from '../db/alerts.js';
import type { ClusterRecord } from '../db/clusters.js';
import type { IssueRecord } from '../db/issues.js';
import type { StoredRollup } from '../db/metrics.js';
import type { MetricRollup } from '../fleet/rollup.js';
import type { FleetClusterScore } from '../scoring/fleet-score.js';
import type { RiskSnapshot } from '../scoring/risk.js';
import { cutText } from '../text.js';
import { num, text } from './sql-values.js';

/**
 * The rollups as metric_daily's rows, in columns and in the table's key order
 * (cluster id, metric key, day). A snapshot's ~14,000 rollup objects hold
 * ~180,000 metric objects, which postMessage's structured clone copies ten
 * times slower than these arrays; and SQLite stores rows given in key order
 * fastest. Of rollups with the same cluster and day, the last given wins.
 */
export interface PackedRollups {
  clusterIds: string[];
  /** Sorted. */
  days: string[];
  /** Sorted. */
  keys: string[];
  /** Per group (one cluster's one metric, its days ascending): index into clusterIds and keys, first row; one more entry: the end. */
  groupCluster: Uint32Array;
  groupKey: Uint32Array;
  groupStart: Uint32Array;
  /** Per row: index into days; min, max, sum, count, last (METRIC_VALUES.length per row; NaN: none); last_at. */
  rowDay: Uint32Array;
  values: Float64Array;
  lastAt: (string | null)[];
}

/** What the SQL tool loads: the fleet as the dashboards see it (sql.ts opens it). */
export interface FleetSnapshot {
  clusters: ClusterRecord[];
  scores: FleetClusterScore[];
  risks: RiskSnapshot[];
  rollups: StoredRollup[];
  alerts: AlertRecord[];
  issues: IssueRecord[];
}

/** A FleetSnapshot with its rollups packed: what the SQL worker loads. */
export interface SnapshotInput extends Omit<FleetSnapshot, 'rollups'> {
  rollups: PackedRollups;
}

/** The numbers of a packed row, in order (PackedRollups.values). */
export const METRIC_VALUES = ['min', 'max', 'sum', 'count', 'last'] as const;

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The snapshot with its rollups packed (PackedRollups); the other lists are passed as they are. */
export function packSnapshot(snapshot: FleetSnapshot): SnapshotInput {
  type Item = { metrics: Record<string, MetricRollup | undefined>; at: number; cluster: string; day: string };
  const sorted: Item[] = snapshot.rollups
    .map((r, at) => ({ metrics: (r.metrics ?? {}) as Record<string, MetricRollup | undefined>, at, cluster: String(r.cluster_id), day: String(r.day) }))
    .sort((a, b) => byText(a.cluster, b.cluster) || byText(a.day, b.day) || a.at - b.at);
  const items = sorted.filter((r, i) => i + 1 === sorted.length || sorted[i + 1]!.cluster !== r.cluster || sorted[i + 1]!.day !== r.day);
  const daySet = new Set<string>();
  const keySet = new Set<string>();
  let rowCount = 0;
  for (const item of items) {
    daySet.add(item.day);
    for (const key in item.metrics) {
      // A NUL would end an INSERT's text early (keys become literals there): such a key is no metric.
      if (item.metrics[key] && !key.includes('\0')) {
        keySet.add(key);
        rowCount++;
      }
    }
  }
  const days = [...daySet].sort(byText);
  const keys = [...keySet].sort(byText);
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const clusterIds: string[] = [];
  const groupCluster: number[] = [];
  const groupKey: number[] = [];
  const groupStart: number[] = [];
  const rowDay = new Uint32Array(rowCount);
  const width = METRIC_VALUES.length;
  const values = new Float64Array(rowCount * width);
  const lastAt = new Array<string | null>(rowCount);
  let row = 0;
  for (let from = 0; from < items.length; ) {
    const cluster = items[from]!.cluster;
    let to = from;
    while (to < items.length && items[to]!.cluster === cluster) to++;
    clusterIds.push(cluster);
    keys.forEach((key, k) => {
      const start = row;
      for (let i = from; i < to; i++) {
        const m = items[i]!.metrics[key];
        if (!m) continue;
        rowDay[row] = dayIndex.get(items[i]!.day)!;
        const o = row * width;
        values[o] = num(m.min) ?? Number.NaN;
        values[o + 1] = num(m.max) ?? Number.NaN;
        values[o + 2] = num(m.sum) ?? Number.NaN;
        values[o + 3] = num(m.count) ?? Number.NaN;
        values[o + 4] = num(m.last) ?? Number.NaN;
        lastAt[row] = text(m.last_at);
        row++;
      }
      if (row > start) {
        groupCluster.push(clusterIds.length - 1);
        groupKey.push(k);
        groupStart.push(start);
      }
    });
    from = to;
  }
  groupStart.push(row);
  const packed: PackedRollups = {
    clusterIds,
    days,
    keys,
    groupCluster: Uint32Array.from(groupCluster),
    groupKey: Uint32Array.from(groupKey),
    groupStart: Uint32Array.from(groupStart),
    rowDay,
    values,
    lastAt,
  };
  const { rollups: _rollups, alerts, ...rest } = snapshot;
  return { ...rest, alerts: alerts.map(keptAlert), rollups: packed };
}

/**
 * How much of an alert's texts the snapshot keeps: each of summary, detail, and every label and annotation
 * value, at most this many characters (a cut ends in …). An alert may carry 64 KB of them, and 30 days of a
 * noisy fleet's alerts, copied to the worker and again into SQLite, outgrew the chat Lambda's memory.
 */
export const ALERT_TEXT_KEPT = 500;

const keptMap = (map: Record<string, string>) => Object.fromEntries(Object.entries(map).map(([k, v]) => [k, cutText(v, ALERT_TEXT_KEPT)]));
const keptAlert = (a: AlertRecord): AlertRecord => ({
  ...a,
  summary: cutText(a.summary, ALERT_TEXT_KEPT),
  detail: cutText(a.detail, ALERT_TEXT_KEPT),
  labels: keptMap(a.labels),
  annotations: keptMap(a.annotations),
});
