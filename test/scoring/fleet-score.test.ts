// The unified score (DESIGN §8, rules/health-rules.yaml) and the health group
// (its metrics-only view), with hand-computed expectations.
import { describe, expect, it } from 'vitest';
import { fleetKpis, scoreCluster, scoreFleet, topRisk, worstFirst, type DimensionScore } from '../../shared/scoring/fleet-score.js';
import { enrichment, healthKpis, healthScore, healthScores } from '../../shared/scoring/health-score.js';
import { FleetClusterScore } from '../../shared/scoring/schemas.js';
import { alert, clusterData, daysAgo, defaultHealthRules, dimension, hoursAgo, NOW, scoringRules } from './fixtures.js';

const DISK = dimension({
  metric_key: 'disk_used_pct',
  display_name: 'Disk Usage',
  weight: 2,
  green: 70,
  yellow: 80,
  red: 90,
  aggregation: 'last',
  action: 'Expand storage.',
});
const QER = dimension({
  metric_key: 'query_error_pct',
  display_name: 'Query Error Rate',
  weight: 1,
  green: 0.5,
  yellow: 2.5,
  red: 5,
  aggregation: 'avg',
  action: 'Inspect failing queries.',
});
/** Inverted: fewer live nodes is worse. */
const NODES = dimension({
  metric_key: 'node_count',
  display_name: 'Live Nodes',
  weight: 1,
  green: 6,
  yellow: 4,
  red: 2,
  inverted: true,
  aggregation: 'min',
  action: 'Replace lost nodes.',
});
const RULES = scoringRules([DISK, QER, NODES]); // weights 7/3, tiers S 1.5 A 1.2 B 1, default bands, 80/60

/**
 * disk last of [90, 84] = 84 → 60 − 40 × 4/10 = 44 (warning)
 * query errors avg of [1, 2] = 1.5 → 100 − 40 × 1/2 = 80 (watch)
 * live nodes min of [5, 3, 6] = 3 → inverted, between yellow 4 and red 2: 60 − 40 × 1/2 = 40 (warning)
 * metrics = (44×2 + 80×1 + 40×1) / 4 = 52
 * 3 alerts in the lookback → band "≤ 5" → 50; an alert 10 days old and resolved does not count
 * overall = (52×7 + 50×3) / 10 = 51.4
 */
function troubled(name: string, tier: 'S' | 'A' | 'B' = 'B') {
  return clusterData(name, {
    cluster: { customer_tier: tier },
    today: { disk_used_pct: [90, 84], query_error_pct: [1, 2], node_count: [5, 3, 6] },
    alertCount: 3,
    alerts: (id) => [alert(id, 'OldAlert', hoursAgo(24 * 10))],
  });
}

describe('scoreCluster: hand-computed unified score', () => {
  it('scores each dimension, the weighted metrics score, the alert band and the normalised overall', () => {
    const s = scoreCluster(troubled('main'), RULES, NOW);
    expect(s.dimension_scores).toEqual([
      { name: 'Disk Usage', metric_key: 'disk_used_pct', score: 44, value: 84, weight: 2, status: 'warning' },
      { name: 'Query Error Rate', metric_key: 'query_error_pct', score: 80, value: 1.5, weight: 1, status: 'watch' },
      { name: 'Live Nodes', metric_key: 'node_count', score: 40, value: 3, weight: 1, status: 'warning' },
    ]);
    expect(s.metrics_score).toBe(52);
    expect(s.alerts_score).toBe(50);
    expect(s.firing_alert_count_7d).toBe(3);
    expect(s.overall_score).toBe(51.4);
    expect(s.tier_adjusted_score).toBe(51.4); // tier B: multiplier 1
    expect(s.classification).toBe('Critical');
    expect(s.top_risk).toBe('Live Nodes (40)');
  });

  it('scores the value it answers: 89.996 is answered 90, and so is at red (90) with its score, status and reason', () => {
    const rules = scoringRules([dimension({ metric_key: 'disk_used_pct', display_name: 'Disk Usage', green: 70, yellow: 80, red: 90 })]);
    const s = scoreCluster(clusterData('edge', { today: { disk_used_pct: 89.996 } }), rules, NOW);
    expect(s.dimension_scores).toEqual([{ name: 'Disk Usage', metric_key: 'disk_used_pct', score: 20, value: 90, weight: 1, status: 'critical' }]);
    expect(s.risk_reasons).toEqual(['Disk Usage at 90 (red >= 90)']);
  });

  it('scores at the precision its thresholds are written with, when finer than 2 decimals: 0.0049 is past a red 0.004', () => {
    const rules = scoringRules([dimension({ metric_key: 'query_error_pct', display_name: 'Errors', green: 0.001, yellow: 0.002, red: 0.004 })]);
    const s = scoreCluster(clusterData('fine', { today: { query_error_pct: 0.0049 } }), rules, NOW);
    expect(s.dimension_scores).toMatchObject([{ value: 0.005, status: 'critical' }]); // at the thresholds' 3 decimals
    expect(s.risk_reasons).toEqual(['Errors at 0.005 (red >= 0.004)']);
  });

  it('names every off-green dimension worst first (inverted thresholds with ≤), then the alerts', () => {
    const s = scoreCluster(troubled('main'), RULES, NOW);
    expect(s.risk_reasons).toEqual([
      'Live Nodes at 3 (yellow <= 4)',
      'Disk Usage at 84 (yellow >= 80)',
      'Query Error Rate at 1.5 (green <= 0.5)',
      '3 alerts fired in the last 7 days',
    ]);
    expect(s.suggested_actions).toEqual(['Replace lost nodes.', 'Expand storage.', 'Inspect failing queries.']);
  });

  it('keeps the whole-number headline metrics safe integers when a rule sums them past 2^53', () => {
    const rules = scoringRules([dimension({ metric_key: 'query_errors_7d', aggregation: 'sum' }), dimension({ metric_key: 'node_count', aggregation: 'sum' })]);
    // Samples are 0 to 1e15 (shared/fleet/records.ts), so a sum passes 2^53 upward only; the answer's counts are never negative.
    const data = clusterData('loud', { today: { query_errors_7d: Array(10).fill(1e15), node_count: Array(10).fill(1e15) } });
    const s = scoreCluster(data, rules, NOW);
    expect(s.metrics).toMatchObject({ query_errors_7d: Number.MAX_SAFE_INTEGER, node_count: Number.MAX_SAFE_INTEGER });
    expect(FleetClusterScore.safeParse(s).success).toBe(true);
  });

  it('carries inventory fields and the headline metrics (null where there is no data)', () => {
    const data = troubled('main', 'A');
    const s = scoreCluster(data, RULES, NOW);
    expect(s).toMatchObject({
      cluster_id: data.cluster.cluster_id,
      cluster_name: 'main',
      customer_name: 'Acme Retail',
      account_id: '123456789012',
      customer_tier: 'A',
      cluster_type: 'ELASTIC',
      region: 'US East (us-east-1)',
    });
    expect(s.metrics).toEqual({ compaction_score: null, disk_used_pct: 84, query_errors_7d: null, query_error_pct: 1.5, qps: null, node_count: 3 });
  });

  it.each([
    ['B', 51.4, 'Critical'], // 100 − 48.6 × 1.0
    ['A', 41.7, 'Critical'], // 100 − 48.6 × 1.2 = 41.68
    ['S', 27.1, 'Critical'], // 100 − 48.6 × 1.5 = 27.1
  ] as const)('tier %s: tier_adjusted = 100 − (100 − overall) × multiplier = %d', (tier, expected, cls) => {
    const s = scoreCluster(troubled(`t-${tier}`, tier), RULES, NOW);
    expect(s.overall_score).toBe(51.4);
    expect(s.tier_adjusted_score).toBe(expected);
    expect(s.classification).toBe(cls);
  });

  it('the tier multiplier can move a cluster across a class boundary; classification uses tier_adjusted', () => {
    // disk 80 → 60; the rest green → metrics (60×2 + 100 + 100)/4 = 80; no alerts → 100; overall (80×7 + 100×3)/10 = 86
    const at = (tier: 'S' | 'A' | 'B') =>
      scoreCluster(
        clusterData(`x-${tier}`, { cluster: { customer_tier: tier }, today: { disk_used_pct: 80, query_error_pct: 0.5, node_count: 6 } }),
        RULES,
        NOW,
      );
    expect(at('B')).toMatchObject({ overall_score: 86, tier_adjusted_score: 86, classification: 'Healthy' });
    expect(at('A')).toMatchObject({ overall_score: 86, tier_adjusted_score: 83.2, classification: 'Healthy' }); // 100 − 14 × 1.2
    expect(at('S')).toMatchObject({ overall_score: 86, tier_adjusted_score: 79, classification: 'Warning' }); // 100 − 14 × 1.5
  });

  it('clamps tier_adjusted at 0 (big multiplier) and a 0 multiplier forgives everything', () => {
    const harsh = scoringRules([DISK, QER, NODES], { tier_multipliers: { S: 3, A: 0, B: 1 } });
    const s = scoreCluster(troubled('harsh', 'S'), harsh, NOW); // 100 − 48.6 × 3 = −45.8 → 0
    expect(s.tier_adjusted_score).toBe(0);
    expect(s.classification).toBe('Critical');
    const a = scoreCluster(troubled('lenient', 'A'), harsh, NOW); // 100 − 48.6 × 0 = 100
    expect(a.tier_adjusted_score).toBe(100);
    expect(a.classification).toBe('Healthy');
    expect(a.overall_score).toBe(51.4);
  });

  it('normalises the weights: 0.7/0.3 and 7/3 give the same scores; alerts weight 0 → overall = metrics', () => {
    const a = scoreCluster(troubled('w'), scoringRules([DISK, QER, NODES], { weights: { metrics: 0.7, alerts: 0.3 } }), NOW);
    expect(a.overall_score).toBe(51.4);
    const metricsOnly = scoreCluster(troubled('m'), scoringRules([DISK, QER, NODES], { weights: { metrics: 5, alerts: 0 } }), NOW);
    expect(metricsOnly.overall_score).toBe(52);
    const alertsOnly = scoreCluster(troubled('a'), scoringRules([DISK, QER, NODES], { weights: { metrics: 0, alerts: 2 } }), NOW);
    expect(alertsOnly.overall_score).toBe(50);
  });

  it.each([
    [75, 80, 'Healthy'], // disk 75 → 80: exactly at healthy
    [80, 60, 'Warning'], // disk 80 → 60: exactly at warning
    [80.1, 59.6, 'Critical'], // 60 − 40 × 0.1/10
  ] as const)('classification boundaries: disk %d scores %d → %s', (disk, score, cls) => {
    const rules = scoringRules([DISK], { weights: { metrics: 1, alerts: 0 } });
    const s = scoreCluster(clusterData('edge', { today: { disk_used_pct: disk } }), rules, NOW);
    expect(s.tier_adjusted_score).toBe(score);
    expect(s.classification).toBe(cls);
  });

  it('alert bands by the number of alerts in the lookback, still-firing old alerts included', () => {
    const rules = scoringRules([DISK], { weights: { metrics: 0, alerts: 1 } });
    const withAlerts = (n: number, extra = false) =>
      scoreCluster(
        clusterData(`a${n}`, {
          today: { disk_used_pct: 50 },
          alertCount: n,
          alerts: extra ? (id) => [alert(id, 'Stuck', hoursAgo(24 * 20), 'Firing')] : undefined,
        }),
        rules,
        NOW,
      );
    expect(withAlerts(0).alerts_score).toBe(100);
    expect(withAlerts(2).alerts_score).toBe(80);
    expect(withAlerts(2, true)).toMatchObject({ alerts_score: 50, firing_alert_count_7d: 3 });
    expect(withAlerts(10).alerts_score).toBe(25);
    expect(withAlerts(11).alerts_score).toBe(0);
    expect(withAlerts(1).risk_reasons).toEqual(['1 alert fired in the last 7 days']);
  });

  it('firing_alert_count_7d counts 7 days whatever the lookback; the band and the reason count the lookback', () => {
    const rules = scoringRules([DISK], { lookback_days: 30, weights: { metrics: 0, alerts: 1 } });
    const s = scoreCluster(
      clusterData('month', {
        today: { disk_used_pct: 50 },
        alertCount: 1,
        alerts: (id) => [alert(id, 'TenDaysAgo', hoursAgo(24 * 10)), alert(id, 'TwentyDaysAgo', hoursAgo(24 * 20))],
      }),
      rules,
      NOW,
    );
    expect(s.firing_alert_count_7d).toBe(1);
    expect(s.alerts_score).toBe(50); // 3 alerts in 30 days: the "≤ 5" band
    expect(s.risk_reasons).toEqual(['3 alerts fired in the last 30 days']);
    // A lookback shorter than 7 days: the field still counts the week.
    const short = scoreCluster(
      clusterData('days', { today: { disk_used_pct: 50 }, alertCount: 1, alerts: (id) => [alert(id, 'FiveDaysAgo', hoursAgo(24 * 5))] }),
      scoringRules([DISK], { lookback_days: 3, weights: { metrics: 0, alerts: 1 } }),
      NOW,
    );
    expect([short.firing_alert_count_7d, short.alerts_score]).toEqual([2, 80]); // 1 alert in 3 days: the "≤ 2" band
  });
});

describe('missing metrics: scored on what has data, the rest named, nothing invented', () => {
  it('a cluster with only disk data is scored on disk alone and names the other dimensions', () => {
    const data = clusterData('sparse', { today: { disk_used_pct: 84 } });
    const s = scoreCluster(data, RULES, NOW);
    expect(s.dimension_scores.map((d) => d.metric_key)).toEqual(['disk_used_pct']);
    expect(s.metrics_score).toBe(44); // disk alone, not averaged with made-up values
    expect(s.overall_score).toBe(60.8); // (44×7 + 100×3)/10
    expect(s.top_risk).toBe('Disk Usage (44)');
    expect(s.risk_reasons).toEqual(['Disk Usage at 84 (yellow >= 80)', 'No Query Error Rate data in the last 7 days', 'No Live Nodes data in the last 7 days']);
    expect(s.suggested_actions).toEqual(['Expand storage.']);
    // headline metrics: null without data; node_count falls back to the inventory's count
    expect(s.metrics).toEqual({ compaction_score: null, disk_used_pct: 84, query_errors_7d: null, query_error_pct: null, qps: null, node_count: 6 });
  });

  it('data older than the lookback counts as missing', () => {
    const s = scoreCluster(clusterData('stale', { days: { 7: { disk_used_pct: 99 } }, today: { query_error_pct: 0.2 } }), RULES, NOW);
    expect(s.dimension_scores.map((d) => d.metric_key)).toEqual(['query_error_pct']);
    expect(s.metrics_score).toBe(100);
    expect(s.risk_reasons).toContain('No Disk Usage data in the last 7 days');
    expect(s.metrics.disk_used_pct).toBeNull();
  });

  it('a cluster with no data at all does not crash: no dimensions, top_risk None, every dimension named', () => {
    const s = scoreCluster(clusterData('empty'), RULES, NOW);
    expect(s.dimension_scores).toEqual([]);
    expect(s.top_risk).toBe('None');
    expect(s.risk_reasons).toEqual([
      'no metrics in the last 7 UTC days', // stale: nothing arrives, which comes first
      'No Disk Usage data in the last 7 days',
      'No Query Error Rate data in the last 7 days',
      'No Live Nodes data in the last 7 days',
    ]);
    expect(s).toMatchObject({ last_metric_at: null, metrics_stale: true });
    expect(s.suggested_actions).toEqual([]);
    // Engine choice (see report): with nothing measured there is nothing to hold against the cluster.
    expect(s.metrics_score).toBe(100);
    for (const n of [s.overall_score, s.metrics_score, s.alerts_score, s.tier_adjusted_score]) expect(Number.isFinite(n)).toBe(true);
  });

  it('with the shipped default rules: disk only → scored on disk, the seven other dimensions named', () => {
    const rules = defaultHealthRules();
    const s = scoreCluster(clusterData('defaults', { cluster: { customer_tier: 'S' }, today: { disk_used_pct: 84 } }), rules, NOW);
    expect(s.metrics_score).toBe(44);
    expect(s.overall_score).toBe(60.8); // 44 × 0.7 + 100 × 0.3
    expect(s.tier_adjusted_score).toBe(41.2); // 100 − 39.2 × 1.5
    expect(s.classification).toBe('Critical');
    expect(s.top_risk).toBe('Disk Usage (44)');
    expect(s.risk_reasons.filter((r) => r.startsWith('No '))).toHaveLength(7);
  });
});

describe('topRisk: "Disk Usage (32)"', () => {
  const d = (name: string, score: number, weight = 1): DimensionScore => ({ name, metric_key: 'qps', score, value: 0, weight, status: 'warning' });

  it('names the lowest-scoring dimension with its score rounded', () => {
    expect(topRisk([d('Memory Usage', 55), d('Disk Usage', 31.6), d('Error Rate', 100)])).toBe('Disk Usage (32)');
    expect(topRisk([d('Disk Usage', 32.4)])).toBe('Disk Usage (32)');
    expect(topRisk([d('Disk Usage', 0)])).toBe('Disk Usage (0)');
  });

  it('end to end: disk at 87.1 scores 60 − 40 × 7.1/10 = 31.6 → "Disk Usage (32)"', () => {
    const s = scoreCluster(clusterData('d', { today: { disk_used_pct: 87.1 } }), scoringRules([DISK]), NOW);
    expect(s.dimension_scores[0]!.score).toBe(31.6);
    expect(s.top_risk).toBe('Disk Usage (32)');
  });

  it('ties: the heavier dimension first, then by name', () => {
    expect(topRisk([d('B', 40, 1), d('A', 40, 1)])).toBe('A (40)');
    expect(topRisk([d('A', 40, 1), d('Z', 40, 5)])).toBe('Z (40)');
  });

  it('spec: top_risk is the "dimension name and score", also when every dimension is at 100; "None" only without any', () => {
    expect(topRisk([d('A', 100, 1), d('B', 100, 3)])).toBe('B (100)');
    expect(topRisk([])).toBe('None');
  });
});

describe('worst first, ties by cluster name', () => {
  it('scoreFleet orders by ascending tier_adjusted_score, ties alphabetically', () => {
    const same = (name: string) => clusterData(name, { today: { disk_used_pct: 80, query_error_pct: 0.5, node_count: 6 } }); // 86
    const fleet = [same('charlie'), troubled('zulu'), same('alpha'), clusterData('healthy', { today: { disk_used_pct: 10 } }), same('bravo')];
    const scores = scoreFleet(fleet, RULES, NOW);
    expect(scores.map((s) => [s.cluster_name, s.tier_adjusted_score])).toEqual([
      ['zulu', 51.4],
      ['alpha', 86],
      ['bravo', 86],
      ['charlie', 86],
      ['healthy', 100],
    ]);
  });

  it('worstFirst does not mutate its input', () => {
    const items = [
      { cluster_name: 'b', s: 1 },
      { cluster_name: 'a', s: 1 },
    ];
    expect(worstFirst(items, (i) => i.s).map((i) => i.cluster_name)).toEqual(['a', 'b']);
    expect(items.map((i) => i.cluster_name)).toEqual(['b', 'a']);
  });
});

describe('fleetKpis', () => {
  it('counts classes, tier S at risk, and averages overall/metrics/alerts scores', () => {
    const calm = (name: string, tier: 'S' | 'B') =>
      clusterData(name, { cluster: { customer_tier: tier }, today: { disk_used_pct: 80, query_error_pct: 0.5, node_count: 6 } });
    // overall 51.4 / 51.4 / 86 / 86; tier_adjusted 51.4 (C), 27.1 (C), 79 (W), 86 (H)
    const scores = scoreFleet([troubled('t-b'), troubled('t-s', 'S'), calm('c-s', 'S'), calm('c-b', 'B')], RULES, NOW);
    expect(fleetKpis(scores)).toEqual({
      total_clusters: 4,
      healthy_count: 1,
      warning_count: 1,
      critical_count: 2,
      tier_s_at_risk: 2,
      avg_score: 68.7, // (51.4 + 51.4 + 86 + 86) / 4
      avg_metrics_score: 66, // (52 + 52 + 80 + 80) / 4
      avg_alerts_score: 75, // (50 + 50 + 100 + 100) / 4
    });
  });

  it('an empty fleet is all zeros', () => {
    expect(fleetKpis([])).toEqual({
      total_clusters: 0,
      healthy_count: 0,
      warning_count: 0,
      critical_count: 0,
      tier_s_at_risk: 0,
      avg_score: 0,
      avg_metrics_score: 0,
      avg_alerts_score: 0,
    });
  });
});

describe('health group: the metrics-only view', () => {
  it('scores from the metrics alone (alerts ignored) and describes each dimension', () => {
    const data = troubled('main', 'S');
    const h = healthScore(data, RULES, NOW);
    expect(h).toMatchObject({
      cluster_id: data.cluster.cluster_id,
      cluster_name: 'main',
      overall_score: 52, // metrics_score; no alerts, no tier
      classification: 'Critical',
      risk_level: 'Critical',
      top_risk: 'Live Nodes (40)',
      region: 'US East (us-east-1)',
      cluster_type: 'ELASTIC',
    });
    expect(h.dimension_scores).toEqual([
      { name: 'Disk Usage', score: 44, value: 84, weight: 2, description: 'last over 7 days; green 70, yellow 80, red 90 (higher is worse); status warning' },
      {
        name: 'Query Error Rate',
        score: 80,
        value: 1.5,
        weight: 1,
        description: 'avg over 7 days; green 0.5, yellow 2.5, red 5 (higher is worse); status watch',
      },
      { name: 'Live Nodes', score: 40, value: 3, weight: 1, description: 'min over 7 days; green 6, yellow 4, red 2 (lower is worse); status warning' },
    ]);
    expect(h.risk_reasons).toEqual(['Live Nodes at 3 (yellow <= 4)', 'Disk Usage at 84 (yellow >= 80)', 'Query Error Rate at 1.5 (green <= 0.5)']);
    expect(h.risk_metrics).toEqual({ disk_used_pct: 84, query_error_pct: 1.5, node_count: 3 });
  });

  it('missing dimensions: left out of dimension_scores, null in risk_metrics, named in risk_reasons', () => {
    const h = healthScore(clusterData('sparse', { today: { disk_used_pct: 84 } }), RULES, NOW);
    expect(h.overall_score).toBe(44);
    expect(h.dimension_scores.map((d) => d.name)).toEqual(['Disk Usage']);
    expect(h.risk_metrics).toEqual({ disk_used_pct: 84, query_error_pct: null, node_count: null });
    expect(h.risk_reasons).toContain('No Live Nodes data in the last 7 days');
  });

  it('healthScores: worst first by overall_score, ties by name; KPIs add up; enrichment by name', () => {
    const fleet = [
      clusterData('c', { today: { disk_used_pct: 75, p99_latency_ms: [100, 300] } }), // 80
      clusterData('b', { today: { disk_used_pct: 75, p99_latency_ms: 400 }, cluster: { region: 'EU (eu-west-1)' } }), // 80
      clusterData('a', { today: { disk_used_pct: 95 } }), // 10
      clusterData('d', { today: { disk_used_pct: 80 } }), // 60
      clusterData('e', { today: { disk_used_pct: 10 } }), // 100
    ];
    const rules = scoringRules([DISK]);
    const scores = healthScores(fleet, rules, NOW);
    expect(scores.map((s) => [s.cluster_name, s.overall_score, s.classification])).toEqual([
      ['a', 10, 'Critical'],
      ['d', 60, 'Warning'],
      ['b', 80, 'Healthy'],
      ['c', 80, 'Healthy'],
      ['e', 100, 'Healthy'],
    ]);
    expect(healthKpis(scores, fleet, rules, NOW)).toEqual({
      total_clusters: 5,
      healthy_count: 3,
      warning_count: 1,
      critical_count: 1,
      avg_score: 66, // (10 + 60 + 80 + 80 + 100) / 5
      avg_p99_latency: 300, // mean of the clusters with data: (200 + 400) / 2
    });
    expect(enrichment(fleet).map((e) => [e.cluster_name, e.region_name])).toEqual([
      ['a', 'US East (us-east-1)'],
      ['b', 'EU (eu-west-1)'],
      ['c', 'US East (us-east-1)'],
      ['d', 'US East (us-east-1)'],
      ['e', 'US East (us-east-1)'],
    ]);
  });

  it('healthKpis of an empty fleet is all zeros', () => {
    expect(healthKpis([], [], RULES, NOW)).toEqual({
      total_clusters: 0,
      healthy_count: 0,
      warning_count: 0,
      critical_count: 0,
      avg_score: 0,
      avg_p99_latency: 0,
    });
  });
});

describe('the default YAML itself', () => {
  it('parses with the real schema and has the documented weights, tiers and classification', () => {
    const rules = defaultHealthRules();
    expect(rules.lookback_days).toBe(7);
    expect(rules.weights).toEqual({ metrics: 0.7, alerts: 0.3 });
    expect(rules.tier_multipliers).toEqual({ S: 1.5, A: 1.2, B: 1 });
    expect(rules.classification).toEqual({ healthy: 80, warning: 60 });
    expect(rules.dimensions.every((d) => d.inverted === false)).toBe(true); // default applied
    expect(daysAgo(0)).toBe('2026-11-20');
  });
});
