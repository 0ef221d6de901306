// Critical clusters: Warning/Critical risk snapshots ranked by
// severity_score = risk signals × 10 + alerts of the last 14 days + max(0, classification.healthy − overall_score),
// at most 15, ties by cluster name.
import { describe, expect, it } from 'vitest';
import type { ClusterData } from '../../shared/scoring/inputs.js';
import { CRITICAL_ALERT_DAYS, CRITICAL_LIMIT, criticalClusters } from '../../shared/scoring/critical.js';
import { scoreFleet, type FleetClusterScore } from '../../shared/scoring/fleet-score.js';
import { riskSnapshot, type RiskSnapshot } from '../../shared/scoring/risk.js';
import { alert, clusterData, defaultHealthRules, defaultRiskRules, dimension, hoursAgo, NOW, scoringRules } from './fixtures.js';

const RULES = scoringRules([dimension({ metric_key: 'disk_used_pct', display_name: 'Disk Usage' })]); // healthy threshold 80

function snapshotOf(d: ClusterData, level: RiskSnapshot['risk_level'], signals: number, overall: number): RiskSnapshot {
  return {
    cluster_id: d.cluster.cluster_id,
    cluster_name: d.cluster.cluster_name,
    customer_name: d.cluster.customer_name,
    risk_level: level,
    overall_score: overall,
    risk_signals: Array.from({ length: signals }, (_, i) => `signal ${i + 1}`),
    suggested_actions: signals ? ['Do something.'] : [],
    metrics: {},
    metrics_stale: false,
  };
}

function scoreOf(d: ClusterData, overall: number): FleetClusterScore {
  const c = d.cluster;
  return {
    cluster_id: c.cluster_id,
    cluster_name: c.cluster_name,
    customer_name: c.customer_name,
    account_id: c.account_id,
    customer_tier: c.customer_tier,
    overall_score: overall,
    metrics_score: overall,
    alerts_score: 100,
    tier_adjusted_score: overall,
    classification: overall >= 80 ? 'Healthy' : overall >= 60 ? 'Warning' : 'Critical',
    top_risk: 'Disk Usage (44)',
    cluster_type: c.cluster_type,
    region: c.region,
    dimension_scores: [{ name: 'Disk Usage', metric_key: 'disk_used_pct', score: 44, value: 84, weight: 1, status: 'warning' }],
    risk_reasons: [],
    suggested_actions: [],
    firing_alert_count_7d: 0,
    metrics: { compaction_score: null, disk_used_pct: 84, query_errors_7d: null, query_error_pct: null, qps: null, node_count: c.node_count },
    last_metric_at: '2026-11-20T11:00:00.000Z',
    metrics_stale: false,
  };
}

interface Row {
  data: ClusterData;
  level: RiskSnapshot['risk_level'];
  signals: number;
  overall: number;
}

function run(rows: Row[]) {
  return criticalClusters(
    rows.map((r) => r.data),
    rows.map((r) => snapshotOf(r.data, r.level, r.signals, r.overall)),
    rows.map((r) => scoreOf(r.data, r.overall)),
    RULES,
    NOW,
  );
}

describe('criticalClusters', () => {
  const alpha = clusterData('alpha', {
    cluster: { account_name: 'Alpha Prod', email: 'dba@alpha.example.com', engine_version: '3.3.1', region: 'EU (eu-west-1)' },
    alerts: (id) => [
      alert(id, 'DiskFull', hoursAgo(24 * 13)),
      alert(id, 'HighLatency', hoursAgo(5)),
      alert(id, 'DiskFull', hoursAgo(2), 'Firing'),
      alert(id, 'Ancient', hoursAgo(24 * 15)), // resolved, started before the 14 days: not counted
    ],
  });
  const rows: Row[] = [
    { data: clusterData('bravo'), level: 'Warning', signals: 1, overall: 85 }, // 10 + 0 + 0 = 10
    { data: alpha, level: 'Critical', signals: 2, overall: 50 }, // 20 + 3 + (80 − 50) = 53
    { data: clusterData('charlie'), level: 'Healthy', signals: 0, overall: 30 }, // Healthy: never listed
    { data: clusterData('delta'), level: 'Warning', signals: 1, overall: 79.5 }, // 10 + 0 + 0.5 = 10.5
    { data: clusterData('foxtrot', { alertCount: 1 }), level: 'Warning', signals: 1, overall: 90 }, // 11
    { data: clusterData('echo', { alertCount: 1 }), level: 'Warning', signals: 1, overall: 90 }, // 11 (tie with foxtrot)
  ];

  it('ranks by severity_score, highest first, ties by cluster name; Healthy clusters are left out', () => {
    const out = run(rows);
    expect(out.clusters.map((c) => [c.cluster_name, c.severity_score])).toEqual([
      ['alpha', 53],
      ['echo', 11],
      ['foxtrot', 11],
      ['delta', 10.5],
      ['bravo', 10],
    ]);
    expect(out.total_critical).toBe(1);
    expect(out.total_warning).toBe(4);
  });

  it('groups the alerts of the last 14 days by name with count, first and last', () => {
    const a = run(rows).clusters[0]!;
    expect(a.alerts).toEqual([
      { alert_name: 'DiskFull', count: 2, first: hoursAgo(24 * 13), last: hoursAgo(2) },
      { alert_name: 'HighLatency', count: 1, first: hoursAgo(5), last: hoursAgo(5) },
    ]);
    expect(a.alert_total).toBe(3);
  });

  it('carries the inventory, the snapshot and the health score', () => {
    const a = run(rows).clusters[0]!;
    expect(a).toMatchObject({
      cluster_id: alpha.cluster.cluster_id,
      cluster_name: 'alpha',
      account_name: 'Alpha Prod',
      account_id: '123456789012',
      region: 'EU (eu-west-1)',
      engine_version: '3.3.1',
      email: 'dba@alpha.example.com',
      risk_level: 'Critical',
      risk_reasons: ['signal 1', 'signal 2'],
      suggested_actions: ['Do something.'],
      health: { overall_score: 50, classification: 'Critical', dimensions: [{ name: 'Disk Usage', score: 44, value: 84, status: 'warning' }] },
    });
    expect(a.metrics.disk_used_pct).toBe(84);
  });

  it(`returns at most ${CRITICAL_LIMIT}, while the totals count every at-risk cluster`, () => {
    const many: Row[] = Array.from({ length: 20 }, (_, i) => ({
      data: clusterData(`c${String(i).padStart(2, '0')}`),
      level: i < 4 ? 'Critical' : 'Warning',
      signals: 1,
      overall: 60 + i, // penalty 20 − i for i < 20: c00 is the most severe
    }));
    const out = run(many);
    expect(CRITICAL_LIMIT).toBe(15);
    expect(out.clusters).toHaveLength(15);
    expect(out.clusters.map((c) => c.cluster_name)).toEqual(many.slice(0, 15).map((r) => r.data.cluster.cluster_name));
    expect(out.clusters[0]!.severity_score).toBe(30); // 10 + 0 + (80 − 60)
    expect(out.clusters[14]!.severity_score).toBe(16); // 10 + 0 + (80 − 74)
    expect(out.total_critical).toBe(4);
    expect(out.total_warning).toBe(16);
  });

  it('an alert still firing from before the 14-day window counts (it fired during the window; see report)', () => {
    expect(CRITICAL_ALERT_DAYS).toBe(14);
    const d = clusterData('stuck', { alerts: (id) => [alert(id, 'Stuck', hoursAgo(24 * 20), 'Firing')] });
    const out = run([{ data: d, level: 'Warning', signals: 1, overall: 90 }]);
    expect(out.clusters[0]).toMatchObject({ severity_score: 11, alert_total: 1 });
  });

  it('a snapshot without its cluster data or score is skipped, not crashed on', () => {
    const d = clusterData('orphan');
    const out = criticalClusters([], [snapshotOf(d, 'Critical', 3, 10)], [], RULES, NOW);
    expect(out).toEqual({ clusters: [], total_critical: 0, total_warning: 0 });
  });

  it('end to end with the shipped default rules', () => {
    // disk 95 → 20 − 20 × 5/10 = 10 (weight 20); memory max 90 → 60 − 40 × 5/10 = 40 (weight 10)
    // metrics = (10×20 + 40×10)/30 = 20; 2 alerts → 80; overall = 20×0.7 + 80×0.3 = 38
    // risk: disk last 95 >= critical 90, memory max 90 >= warning 85 → 2 signals
    // severity = 2×10 + 2 + (80 − 38) = 64
    const health = defaultHealthRules();
    const risk = defaultRiskRules();
    const fleet = [
      clusterData('hot', { today: { disk_used_pct: 95, memory_pct: [50, 90] }, alertCount: 2 }),
      clusterData('cool', { today: { disk_used_pct: 30, memory_pct: 40 } }),
    ];
    const scores = scoreFleet(fleet, health, NOW);
    const snapshots = fleet.map((d) => riskSnapshot(d, risk, scores.find((s) => s.cluster_id === d.cluster.cluster_id)!.overall_score, NOW));
    const out = criticalClusters(fleet, snapshots, scores, health, NOW);
    expect(out.clusters.map((c) => [c.cluster_name, c.severity_score, c.risk_level])).toEqual([['hot', 64, 'Critical']]);
    expect(out.clusters[0]!.health.overall_score).toBe(38);
    expect(out.clusters[0]!.risk_reasons).toEqual(['disk_used_pct last 95 >= critical 90', 'memory_pct max 90 >= warning 85']);
    expect(out).toMatchObject({ total_critical: 1, total_warning: 0 });
  });
});
