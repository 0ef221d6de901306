// Risk snapshots (rules/risk-rules.yaml): a metric at or beyond `critical` is
// critical, at or beyond `warning` a warning; inverted means beyond = below.
import { describe, expect, it } from 'vitest';
import { metricStatus, riskSnapshot, riskSummary, rulesTable, sortSnapshots, type RiskSnapshot } from '../../shared/scoring/risk.js';
import { clusterData, defaultRiskRules, NOW, riskRule, riskRules } from './fixtures.js';

const DISK = riskRule({ metric_key: 'disk_used_pct', category: 'capacity', warning: 80, critical: 90, aggregation: 'last', action: 'Expand storage.' });
const NODES = riskRule({
  metric_key: 'node_count',
  category: 'capacity',
  warning: 4,
  critical: 2,
  inverted: true,
  aggregation: 'min',
  action: 'Replace lost nodes.',
});
const COMPACTION = riskRule({
  metric_key: 'compaction_score',
  category: 'storage',
  warning: 500,
  critical: 1000,
  aggregation: 'max',
  action: 'Check compaction.',
});
const QPS = riskRule({ metric_key: 'qps', category: 'load', warning: 5000, critical: 10000, aggregation: 'max', action: 'Scale out.' });
const RULES = riskRules([DISK, NODES, COMPACTION, QPS]);

describe('metricStatus: at or beyond the threshold', () => {
  it.each([
    [0, 'healthy'],
    [79.99, 'healthy'],
    [80, 'warning'], // at warning
    [89.99, 'warning'],
    [90, 'critical'], // at critical
    [1e6, 'critical'],
  ] as const)('warning 80 / critical 90: %d → %s', (v, status) => {
    expect(metricStatus(DISK, v)).toBe(status);
  });

  it.each([
    [10, 'healthy'],
    [4.01, 'healthy'],
    [4, 'warning'], // at warning (below is worse)
    [2.01, 'warning'],
    [2, 'critical'],
    [0, 'critical'],
    [-1, 'critical'],
  ] as const)('inverted warning 4 / critical 2: %d → %s', (v, status) => {
    expect(metricStatus(NODES, v)).toBe(status);
  });
});

describe('riskSnapshot', () => {
  it('aggregates each rule over the lookback, rates it, and turns non-healthy metrics into signals, worst first', () => {
    const data = clusterData('r1', {
      cluster: { customer_name: 'Globex' },
      today: { disk_used_pct: [95, 85], node_count: [5, 2], compaction_score: [300, 100] }, // no qps data
    });
    const snap = riskSnapshot(data, RULES, 51.4, NOW);
    expect(snap).toEqual({
      cluster_id: data.cluster.cluster_id,
      cluster_name: 'r1',
      customer_name: 'Globex',
      risk_level: 'Critical', // the worst metric
      overall_score: 51.4, // passed through from the unified score
      risk_signals: ['node_count min 2 <= critical 2', 'disk_used_pct last 85 >= warning 80'],
      suggested_actions: ['Replace lost nodes.', 'Expand storage.'],
      metrics: {
        disk_used_pct: { value: 85, status: 'warning' },
        node_count: { value: 2, status: 'critical' },
        compaction_score: { value: 300, status: 'healthy' },
        // qps: no data → absent, not invented
      },
      metrics_stale: false, // no staleness reason passed in from the unified score
    });
  });

  it('signals of the same status are ordered by metric key; duplicate actions appear once', () => {
    const shared = 'Call the on-call engineer.';
    const rules = riskRules([
      riskRule({ metric_key: 'qps', warning: 1, critical: 2, aggregation: 'max', action: shared }),
      riskRule({ metric_key: 'compaction_score', warning: 1, critical: 2, aggregation: 'max', action: shared }),
      riskRule({ metric_key: 'memory_pct', warning: 1, critical: 2, aggregation: 'max', action: 'Add memory.' }),
    ]);
    const snap = riskSnapshot(clusterData('r', { today: { qps: 3, compaction_score: 2.5, memory_pct: 1.5 } }), rules, 70, NOW);
    expect(snap.risk_signals).toEqual(['compaction_score max 2.5 >= critical 2', 'qps max 3 >= critical 2', 'memory_pct max 1.5 >= warning 1']);
    expect(snap.suggested_actions).toEqual([shared, 'Add memory.']);
  });

  it('inverted warning-only: level Warning with a ≤ signal', () => {
    const snap = riskSnapshot(clusterData('n', { today: { node_count: [6, 3] } }), RULES, 90, NOW);
    expect(snap.risk_level).toBe('Warning');
    expect(snap.risk_signals).toEqual(['node_count min 3 <= warning 4']);
  });

  it('all healthy → Healthy, no signals, no actions; no data at all → Healthy with empty metrics', () => {
    const ok = riskSnapshot(clusterData('ok', { today: { disk_used_pct: 50, node_count: 6 } }), RULES, 100, NOW);
    expect(ok).toMatchObject({ risk_level: 'Healthy', risk_signals: [], suggested_actions: [] });
    expect(Object.keys(ok.metrics)).toEqual(['disk_used_pct', 'node_count']);
    const none = riskSnapshot(clusterData('none'), RULES, 100, NOW);
    expect(none).toMatchObject({ risk_level: 'Healthy', risk_signals: [], metrics: {} });
  });

  it('reads only its own lookback: an old breach does not count', () => {
    const rules = riskRules([DISK], 3); // today and the two days before
    const snap = riskSnapshot(clusterData('old', { days: { 3: { disk_used_pct: 99 }, 2: { disk_used_pct: 81 } } }), rules, 80, NOW);
    expect(snap.metrics).toEqual({ disk_used_pct: { value: 81, status: 'warning' } });
  });

  it('values are rounded to 2 decimals in metrics and signals', () => {
    const snap = riskSnapshot(clusterData('p', { today: { disk_used_pct: [80.1234, 81.1234] } }), riskRules([{ ...DISK, aggregation: 'avg' }]), 60, NOW);
    // avg = (80.1234 + 81.1234) / 2 = 80.6234
    expect(snap.metrics.disk_used_pct).toEqual({ value: 80.62, status: 'warning' });
    expect(snap.risk_signals).toEqual(['disk_used_pct avg 80.62 >= warning 80']);
  });

  it('judges the value it answers: 89.996 is answered 90, and so is at the critical threshold of 90', () => {
    const snap = riskSnapshot(clusterData('edge', { today: { disk_used_pct: 89.996 } }), riskRules([DISK]), 60, NOW);
    expect(snap.metrics.disk_used_pct).toEqual({ value: 90, status: 'critical' });
    expect(snap.risk_signals).toEqual(['disk_used_pct last 90 >= critical 90']);
    expect(snap.risk_level).toBe('Critical');
  });

  it('judges at the precision its thresholds are written with, when finer than 2 decimals: 0.0049 is past a critical 0.004', () => {
    const fine = riskRule({
      metric_key: 'query_error_pct',
      category: 'errors',
      warning: 0.002,
      critical: 0.004,
      aggregation: 'last',
      action: 'Look at the errors.',
    });
    const snap = riskSnapshot(clusterData('fine', { today: { query_error_pct: 0.0049 } }), riskRules([fine]), 60, NOW);
    expect(snap.metrics.query_error_pct).toEqual({ value: 0.005, status: 'critical' }); // at the thresholds' 3 decimals
    expect(snap.risk_signals).toEqual(['query_error_pct last 0.005 >= critical 0.004']);
  });

  it('with the shipped default rules', () => {
    const snap = riskSnapshot(clusterData('d', { today: { disk_used_pct: 85, memory_pct: [60, 96, 70], qps: 100 } }), defaultRiskRules(), 55, NOW);
    expect(snap.risk_level).toBe('Critical');
    expect(snap.risk_signals).toEqual(['memory_pct max 96 >= critical 95', 'disk_used_pct last 85 >= warning 80']);
    expect(snap.metrics.qps).toEqual({ value: 100, status: 'healthy' });
  });
});

describe('summary, ordering and rules table', () => {
  const snap = (name: string, level: RiskSnapshot['risk_level'], overall: number): RiskSnapshot => ({
    cluster_id: name,
    cluster_name: name,
    customer_name: 'c',
    risk_level: level,
    overall_score: overall,
    risk_signals: [],
    suggested_actions: [],
    metrics: {},
    metrics_stale: false,
  });

  it('riskSummary counts each level and they add up to the total', () => {
    const all = [snap('a', 'Critical', 1), snap('b', 'Warning', 2), snap('c', 'Healthy', 3), snap('d', 'Warning', 4)];
    expect(riskSummary(all)).toEqual({ total: 4, critical: 1, warning: 2, healthy: 1 });
    expect(riskSummary([])).toEqual({ total: 0, critical: 0, warning: 0, healthy: 0 });
  });

  it('sortSnapshots: worst level, then lower overall score, then cluster name', () => {
    const all = [
      snap('h', 'Healthy', 10),
      snap('w2', 'Warning', 70),
      snap('c-b', 'Critical', 50),
      snap('w1', 'Warning', 70),
      snap('c-a', 'Critical', 50),
      snap('c-low', 'Critical', 20),
    ];
    expect(sortSnapshots(all).map((s) => s.cluster_name)).toEqual(['c-low', 'c-a', 'c-b', 'w1', 'w2', 'h']);
    expect(all[0]!.cluster_name).toBe('h'); // not mutated
  });

  it('rulesTable lists each rule with defaults applied', () => {
    const table = rulesTable(defaultRiskRules());
    expect(table.lookback_days).toBe(7);
    expect(table.rules.map((r) => r.metric_key)).toEqual([
      'compaction_score',
      'disk_used_pct',
      'query_errors_7d',
      'error_rate_pct',
      'memory_pct',
      'peak_jvm_heap_gb',
      'qps',
      'slow_queries_7d',
    ]);
    expect(table.rules[1]).toEqual({
      metric_key: 'disk_used_pct',
      category: 'capacity',
      warning: 80,
      critical: 90,
      inverted: false,
      aggregation: 'last',
      action: 'Expand storage or drop expired partitions before the disk fills.',
    });
  });
});
