// Hand-made fleet snapshots for the run_sql tests (sql.test.ts) and its bench
// (test/bench/chat-sql.ts): a small fleet whose every figure the tests know,
// a fleet of any size with regular metrics, and a query that runs for hours.
import type { AlertRecord } from '../../shared/db/alerts.js';
import type { ClusterRecord } from '../../shared/db/clusters.js';
import type { IssueRecord } from '../../shared/db/issues.js';
import type { StoredRollup } from '../../shared/db/metrics.js';
import { columnsFromRollups, emptyColumns, putDay, type RollupColumns } from '../../shared/fleet/rollup-columns.js';
import { METRIC_KEYS, type MetricKey } from '../../shared/fleet/records.js';
import type { MetricRollup } from '../../shared/fleet/rollup.js';
import type { FleetClusterScore } from '../../shared/scoring/fleet-score.js';
import type { RiskSnapshot } from '../../shared/scoring/risk.js';
import type { FleetSnapshot } from '../../shared/chat/sql-snapshot.js';

// ---------------------------------------------------------------- a small fleet

export const ORDERS = '11111111-1111-4111-8111-111111111111';
export const ANALYTICS = '22222222-2222-4222-8222-222222222222';
export const BILLING = '33333333-3333-4333-8333-333333333333';

function cluster(
  cluster_id: string,
  cluster_name: string,
  customer_name: string,
  customer_tier: 'S' | 'A' | 'B',
  region: string,
  node_count: number,
): ClusterRecord {
  return {
    cluster_id,
    cluster_name,
    customer_name,
    account_id: `acct-${customer_name}`,
    account_name: `${customer_name} prod`,
    email: `ops@${customer_name.toLowerCase()}.example`,
    customer_tier,
    cluster_type: 'shared-data',
    region,
    engine_version: '3.3.2',
    resource_state: 'running',
    node_count,
    created_at: '2026-01-05T10:00:00.000Z',
    updated_at: '2026-11-19T08:00:00.000Z',
  };
}

function score(
  c: ClusterRecord,
  tierAdjusted: number,
  classification: FleetClusterScore['classification'],
  over: Partial<FleetClusterScore> = {},
): FleetClusterScore {
  return {
    cluster_id: c.cluster_id,
    cluster_name: c.cluster_name,
    customer_name: c.customer_name,
    account_id: c.account_id,
    customer_tier: c.customer_tier,
    overall_score: tierAdjusted + 5,
    metrics_score: tierAdjusted,
    alerts_score: 100,
    tier_adjusted_score: tierAdjusted,
    classification,
    top_risk: 'None',
    cluster_type: c.cluster_type,
    region: c.region,
    dimension_scores: [],
    risk_reasons: [],
    suggested_actions: [],
    firing_alert_count_7d: 0,
    metrics: { compaction_score: 3, disk_used_pct: 40, query_errors_7d: 0, query_error_pct: 0, qps: 100, node_count: c.node_count },
    last_metric_at: '2026-11-20T11:00:00.000Z',
    metrics_stale: false,
    ...over,
  };
}

const m = (min: number, max: number, sum: number, count: number, last: number, last_at: string): MetricRollup => ({ min, max, sum, count, last, last_at });

function issue(over: Partial<IssueRecord> & Pick<IssueRecord, 'issue_id' | 'cluster_id'>): IssueRecord {
  return {
    group_key: `cluster=${over.cluster_id}|alert_name=DiskUsageHigh`,
    issue_name: 'DiskUsageHigh',
    severity: 'Critical',
    status: 'Ongoing',
    alert_count: 1,
    alert_names: ['DiskUsageHigh'],
    first_seen: '2026-11-19T01:00:00.000Z',
    last_seen: '2026-11-19T01:00:00.000Z',
    resolved_at: null,
    cluster_name: '',
    customer_name: '',
    triage_status: '',
    disposition_status: '',
    assignee: '',
    notes: '',
    ticket_key: '',
    ticket_url: '',
    updated_at: '',
    updated_by: '',
    grouped_at: '2026-11-20T00:00:00.000Z',
    grouping_version: 3,
    triage_version: 2,
    superseded_by: null,
    ticket_claim: 'claim-token',
    ticket_claimed_at: '2026-11-20T00:00:00.000Z',
    ...over,
  };
}

function alert(
  alert_id: string,
  cluster_id: string,
  alert_name: string,
  starts_at: string,
  ends_at: string | null,
  labels: Record<string, string> = {},
): AlertRecord {
  return {
    alert_id,
    cluster_id,
    alert_name,
    severity: labels.severity ?? 'warning',
    status: ends_at ? 'Resolved' : 'Firing',
    starts_at,
    ends_at,
    fingerprint: `fp-${alert_name}`,
    labels: { alertname: alert_name, ...labels },
    annotations: { summary: `${alert_name} on ${cluster_id}` },
    summary: `${alert_name} on ${cluster_id}`,
    detail: 'details',
    dashboard_url: `https://grafana.example/d/${cluster_id}`,
    received_at: starts_at,
    updated_at: ends_at ?? starts_at,
  };
}

export function smallFleet(): FleetSnapshot {
  const orders = cluster(ORDERS, 'orders-prod', 'Acme', 'S', 'us-east-1', 6);
  const analytics = cluster(ANALYTICS, 'analytics-dev', 'Beta', 'B', 'eu-west-1', 3);
  const billing = cluster(BILLING, 'billing-prod', 'Acme', 'A', 'us-east-1', 9);
  const at = (day: string) => `${day}T23:55:00.000Z`;
  return {
    clusters: [orders, analytics, billing],
    scores: [
      score(orders, 41.5, 'Critical', {
        top_risk: 'Disk Usage (30)',
        firing_alert_count_7d: 2,
        dimension_scores: [
          { name: 'Disk Usage', metric_key: 'disk_used_pct', score: 30, value: 93.5, weight: 3, status: 'critical' },
          { name: 'Query Errors', metric_key: 'query_error_pct', score: 80, value: 1.2, weight: 2, status: 'warning' },
        ],
        risk_reasons: ['Disk Usage at 93.5 (red ≥ 90)', '2 alerts fired in the last 7 days'],
        suggested_actions: ['Expand storage, or clean up old partitions'],
        metrics: { compaction_score: 12, disk_used_pct: 93.5, query_errors_7d: 40, query_error_pct: 1.2, qps: 1200, node_count: 6 },
      }),
      score(analytics, 96, 'Healthy', {
        metrics: { compaction_score: null, disk_used_pct: null, query_errors_7d: null, query_error_pct: null, qps: 15, node_count: 3 },
      }),
      score(billing, 72, 'Warning', {
        top_risk: 'Disk Usage (70)',
        dimension_scores: [{ name: 'Disk Usage', metric_key: 'disk_used_pct', score: 70, value: 82, weight: 3, status: 'warning' }],
      }),
    ],
    risks: [
      {
        cluster_id: ORDERS,
        cluster_name: 'orders-prod',
        customer_name: 'Acme',
        risk_level: 'Critical',
        overall_score: 46.5,
        risk_signals: ['disk_used_pct max 93.5 ≥ critical 90'],
        suggested_actions: ['Expand storage'],
        metrics: { disk_used_pct: { value: 93.5, status: 'critical' }, qps: { value: 1200, status: 'healthy' } },
        metrics_stale: false,
      },
      {
        cluster_id: ANALYTICS,
        cluster_name: 'analytics-dev',
        customer_name: 'Beta',
        risk_level: 'Healthy',
        overall_score: 101,
        risk_signals: [],
        suggested_actions: [],
        metrics: {},
        metrics_stale: false,
      },
      {
        cluster_id: BILLING,
        cluster_name: 'billing-prod',
        customer_name: 'Acme',
        risk_level: 'Warning',
        overall_score: 77,
        risk_signals: ['disk_used_pct max 82 ≥ warning 80'],
        suggested_actions: ['Plan storage'],
        metrics: { disk_used_pct: { value: 82, status: 'warning' } },
        metrics_stale: false,
      },
    ] satisfies RiskSnapshot[],
    rollups: rollupColumns([
      {
        cluster_id: ORDERS,
        day: '2026-11-18',
        metrics: { disk_used_pct: m(80, 85, 830, 10, 84, at('2026-11-18')), qps: m(900, 1300, 11000, 10, 1000, at('2026-11-18')) },
      },
      {
        cluster_id: ORDERS,
        day: '2026-11-19',
        metrics: { disk_used_pct: m(85, 91, 880, 10, 90, at('2026-11-19')), qps: m(1000, 1400, 12000, 10, 1200, at('2026-11-19')) },
      },
      // The same cluster and day twice: the later one is the one stored.
      { cluster_id: ORDERS, day: '2026-11-20', metrics: { disk_used_pct: m(1, 2, 3, 2, 1, at('2026-11-20')) } },
      { cluster_id: ANALYTICS, day: '2026-11-19', metrics: { qps: m(5, 25, 150, 10, 15, at('2026-11-19')) } },
      { cluster_id: BILLING, day: '2026-11-19', metrics: { disk_used_pct: m(78, 82, 800, 10, 81, at('2026-11-19')) } },
      {
        cluster_id: ORDERS,
        day: '2026-11-20',
        metrics: { disk_used_pct: m(90, 93.5, 920, 10, 93, at('2026-11-20')), qps: m(1100, 1500, 12500, 10, 1250, at('2026-11-20')) },
      },
    ]),
    alerts: [
      alert('a1', ORDERS, 'DiskUsageHigh', '2026-11-19T01:00:00.000Z', null, { service: 'storage', severity: 'critical' }),
      alert('a2', ORDERS, 'DiskUsageHigh', '2026-11-17T01:00:00.000Z', '2026-11-17T03:30:00.000Z', { service: 'storage', severity: 'critical' }),
      alert('a3', BILLING, 'SlowQueries', '2026-11-18T05:00:00.000Z', '2026-11-18T05:20:00.000Z', { service: 'query' }),
    ],
    issues: [
      issue({
        issue_id: 'iss-orders-disk',
        cluster_id: ORDERS,
        cluster_name: 'orders-prod',
        customer_name: 'Acme',
        alert_count: 2,
        first_seen: '2026-11-17T01:00:00.000Z',
        last_seen: '2026-11-19T01:00:00.000Z',
        triage_status: 'investigating',
        assignee: 'dana',
        ticket_key: 'OPS-7',
        ticket_url: 'https://jira.example/OPS-7',
        updated_at: '2026-11-19T09:00:00.000Z',
        updated_by: 'dana',
      }),
      issue({
        issue_id: 'iss-billing-slow',
        cluster_id: BILLING,
        cluster_name: 'billing-prod',
        customer_name: 'Acme',
        severity: 'Warning',
        status: 'Resolved',
        issue_name: 'SlowQueries',
        alert_names: ['SlowQueries'],
        group_key: `cluster=${BILLING}|alert_name=SlowQueries`,
        first_seen: '2026-11-18T05:00:00.000Z',
        last_seen: '2026-11-18T05:00:00.000Z',
        resolved_at: '2026-11-18T05:20:00.000Z',
      }),
    ],
  };
}

// ---------------------------------------------------------------- a runaway query

/** A runaway query: counts to 10^12 (hours). */
export const RUNAWAY = 'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1e12) SELECT count(*) FROM n';

// ---------------------------------------------------------------- a fleet of any size

/** `clusters` clusters with a score and `days` days of every metric (1,000 × 14: 182,000 metric_daily rows); no risks, alerts or issues. */
export function bigFleet(clusters: number, days: number): FleetSnapshot {
  const today = Date.UTC(2026, 10, 20);
  const dayList = Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
  const ids = Array.from({ length: clusters }, (_, i) => `${i.toString(16).padStart(8, '0')}-0000-4000-8000-${(i * 7919).toString(16).padStart(12, '0')}`);
  const snapshot: FleetSnapshot = { clusters: [], scores: [], risks: [], rollups: emptyColumns(dayList, ids), alerts: [], issues: [] };
  ids.forEach((id, i) => {
    const c = cluster(
      id,
      `cluster-${i}`,
      `Customer ${i % 97}`,
      (['S', 'A', 'B'] as const)[i % 3]!,
      ['us-east-1', 'eu-west-1', 'ap-south-1'][i % 3]!,
      3 + (i % 5),
    );
    snapshot.clusters.push(c);
    snapshot.scores.push(score(c, 40 + (i % 60), i % 60 < 20 ? 'Critical' : i % 60 < 40 ? 'Warning' : 'Healthy'));
    dayList.forEach((day, dayIndex) => {
      const d = days - 1 - dayIndex; // days before the last
      const metrics: Partial<Record<MetricKey, MetricRollup>> = {};
      METRIC_KEYS.forEach((key, k) => {
        const base = (i % 100) + k;
        metrics[key] = m(base, base + d, (base + d / 2) * 288, 288, base + 1, `${day}T23:5${k % 10}:00.000Z`);
      });
      putDay(snapshot.rollups, dayIndex, i, metrics);
    });
  });
  return snapshot;
}

/** Rollups in object form as the snapshot's columns: their days and clusters, in order; a later rollup of the same cluster and day replaces an earlier one. */
export function rollupColumns(rollups: StoredRollup[]): RollupColumns {
  const days = [...new Set(rollups.map((r) => r.day))].sort();
  return columnsFromRollups(days, [...new Set(rollups.map((r) => r.cluster_id))], rollups);
}
