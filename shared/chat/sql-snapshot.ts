// The fleet snapshot the run_sql tool loads (shared/chat/sql.ts), and what of it
// the worker thread gets (sql-worker.ts): the main thread keeps that input,
// posts it to the worker, and posts it again to a replacement worker after a
// runaway query.
import type { AlertRecord } from '../db/alerts.js';
import type { ClusterRecord } from '../db/clusters.js';
import type { IssueRecord } from '../db/issues.js';
import { type RollupColumns, WindowedColumns } from '../fleet/rollup-columns.js';
import type { FleetClusterScore } from '../scoring/fleet-score.js';
import type { RiskSnapshot } from '../scoring/risk.js';
import { cutText } from '../text.js';

/**
 * The rollups as the refresh reads them (shared/fleet/rollup-columns.ts): one Float64Array of every
 * cluster-day-metric's numbers and one of its `last` sample's epoch ms. This is what the worker gets,
 * as it is: building metric_daily's rows as objects first (140,000 rollups and 1.8 million metric
 * objects for 10,000 clusters over 14 days) took more of a chat Lambda's memory than SQLite's tables.
 * Per day, not folded: columns read with a `window` are refused.
 */
export type SnapshotRollups = Pick<RollupColumns, 'days' | 'clusterIds' | 'values' | 'lastAt'>;

/** Days of rollups the snapshot holds (today and the 13 before); the scheduled recompute keeps their packs built (rollup-packs.ts packSettledDays). */
export const SQL_ROLLUP_DAYS = 14;

/** What the SQL tool loads: the fleet as the dashboards see it (sql.ts opens it). */
export interface FleetSnapshot {
  clusters: ClusterRecord[];
  scores: FleetClusterScore[];
  risks: RiskSnapshot[];
  rollups: RollupColumns;
  alerts: AlertRecord[];
  issues: IssueRecord[];
}

/** What the SQL worker loads: the snapshot with alert texts cut and the rollup columns without their lookup map. */
export interface SnapshotInput extends Omit<FleetSnapshot, 'rollups'> {
  rollups: SnapshotRollups;
}

/** The snapshot as the worker loads it; the lists are passed as they are, alerts with their texts cut. */
export function packSnapshot(snapshot: FleetSnapshot): SnapshotInput {
  const { days, clusterIds, values, lastAt, window } = snapshot.rollups;
  if (window) throw new WindowedColumns(snapshot.rollups, 'the SQL snapshot');
  const { rollups: _rollups, alerts, ...rest } = snapshot;
  return { ...rest, alerts: alerts.map(keptAlert), rollups: { days, clusterIds, values, lastAt } };
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
