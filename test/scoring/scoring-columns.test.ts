// The columnar scoring pass (scoreColumns) and the answers built from its columns
// agree with a per-cluster reference: the unified and health scores as they were
// computed cluster by cluster from the aggregates before the pass existed, on
// randomised fleets that reach every status, classification, tier, staleness and
// alert band, with ties in score and name. And the worst-first order's two paths.
import { describe, expect, it } from 'vitest';
import type { AlertRecord } from '../../shared/db/alerts.js';
import { windowDays } from '../../shared/db/days.js';
import { METRIC_KEYS, type MetricKey } from '../../shared/fleet/records.js';
import { columnsFromRollups } from '../../shared/fleet/rollup-columns.js';
import type { DimensionRule, ScoringRules } from '../../shared/rules/schemas.js';
import { DIMENSION_STATUSES, dimensionScore, dimensionStatus } from '../../shared/scoring/dimensions.js';
import {
  alertsScore,
  classify,
  type DimensionScore,
  type FleetClusterScore,
  fleetScoresFrom,
  mean,
  scoreColumns,
  scoreFleet,
  topRisk,
  unifiedScore,
  worstFirstOrder,
} from '../../shared/scoring/fleet-score.js';
import { healthKpis, healthScores, healthScoresFrom, type HealthScore } from '../../shared/scoring/health-score.js';
import { riskSnapshot } from '../../shared/scoring/risk.js';
import {
  aggregate,
  aggregatedMetric,
  aggregateFleet,
  byLocale,
  byName,
  clamp,
  columnarClusterData,
  countAlertsInLookback,
  lookbackStart,
  judgedDecimals,
  round1,
  round2,
  roundAt,
  stalenessOf,
  type ClusterAggregates,
  type ClusterData,
} from '../../shared/scoring/inputs.js';
import { alert, clusterRecord, daysAgo, defaultHealthRules, defaultRiskRules, dimension, NOW, rollup, scoringRules } from './fixtures.js';

/** A seeded generator (mulberry32), so a failure is reproducible. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Clusters whose metrics sit anywhere from better than green to far past red (on the
 * thresholds exactly too), some metrics or days missing, days out of order or outside the
 * lookback, newest samples hours apart (stale or not), alerts firing or resolved, tiers S, A,
 * B and one the rules do not name, and names that repeat (some clusters twice under two ids).
 */
function randomFleet(size: number, rules: ScoringRules, seed: number): ClusterData[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const byKey = new Map<MetricKey, DimensionRule>(rules.dimensions.map((d) => [d.metric_key, d]));
  const fleet = Array.from({ length: size }, (_, i): ClusterData => {
    const cluster = clusterRecord(`c-${Math.floor(rnd() * size * 0.6)}`, { customer_tier: pick(['S', 'A', 'B', 'X'] as 'S'[]), node_count: i % 9 });
    const severity = pick([0, 0, 0.5, 1, 1.5, 3]);
    const days = [0, 1, 2, 3, 5, 6, 9].filter(() => rnd() > 0.3);
    if (rnd() < 0.3) days.reverse();
    const rollups =
      rnd() < 0.05
        ? []
        : days.map((day) => {
            const samples: Partial<Record<MetricKey, number[]>> = {};
            for (const key of METRIC_KEYS) {
              if (rnd() < 0.15) continue;
              const t = byKey.get(key) ?? { green: 10, yellow: 20, red: 30, inverted: false };
              const span = Math.abs(t.red - t.green);
              const dir = t.inverted ? -1 : 1;
              samples[key] = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () =>
                rnd() < 0.1 ? pick([t.green, t.yellow, t.red]) : t.green + dir * (severity === 0 ? -rnd() * span * 0.3 : (rnd() - 0.3) * span * severity),
              );
            }
            const r = rollup(cluster.cluster_id, daysAgo(day), samples);
            // Today's newest sample anywhere in the last 12 hours: some clusters fresh, some stale.
            if (day === 0) for (const m of Object.values(r.metrics)) m!.last_at = `${daysAgo(0)}T${String(Math.floor(rnd() * 12)).padStart(2, '0')}:30:00.000Z`;
            return r;
          });
    const alerts: AlertRecord[] = Array.from({ length: rnd() < 0.5 ? 0 : Math.floor(rnd() * 30) }, (_, j) => ({
      ...alert(cluster.cluster_id, `A${j}`, new Date(NOW.getTime() - rnd() * 20 * 86_400_000).toISOString(), rnd() < 0.3 ? 'Firing' : 'Resolved'),
    }));
    return { cluster, rollups, alerts };
  });
  // Twins of a few clusters (another id, the same name and data): ties in both score and name, kept in fleet order.
  const twins = fleet.slice(0, 5).map((d) => ({ ...d, cluster: { ...d.cluster, cluster_id: clusterRecord('twin').cluster_id } }));
  return [...fleet, ...twins];
}

/** The unified score of one cluster as it was computed before the columns: cluster by cluster, objects all the way. */
function referenceScore(data: ClusterData, agg: ClusterAggregates, rules: ScoringRules): FleetClusterScore {
  const { scores, metricsScore, reasons, actions } = referenceDimensions(agg, rules);
  const firing = countAlertsInLookback(data.alerts, rules.lookback_days, NOW);
  const alerts = alertsScore(rules.alert_bands, firing);
  const overall = unifiedScore(metricsScore, alerts, rules.weights);
  const tierAdjusted = clamp(100 - (100 - overall) * (rules.tier_multipliers[data.cluster.customer_tier as 'S'] ?? 1));
  const stale = stalenessOf(agg.lastMetricAt, rules.stale_after_minutes, rules.lookback_days, NOW);
  const allReasons = stale.reason === undefined ? reasons : [stale.reason, ...reasons];
  if (firing > 0) allReasons.push(`${firing} alert${firing === 1 ? '' : 's'} fired in the last ${rules.lookback_days} days`);
  const metric = (key: MetricKey) => {
    const v = aggregatedMetric(agg, key, rules.dimensions.find((d) => d.metric_key === key)?.aggregation ?? 'last');
    return v === null ? null : round2(v);
  };
  const integer = (v: number | null) => (v === null ? null : Math.round(v));
  const c = data.cluster;
  return {
    cluster_id: c.cluster_id,
    cluster_name: c.cluster_name,
    customer_name: c.customer_name,
    account_id: c.account_id,
    customer_tier: c.customer_tier,
    overall_score: round1(overall),
    metrics_score: round1(metricsScore),
    alerts_score: round1(alerts),
    tier_adjusted_score: round1(tierAdjusted),
    classification: classify(round1(tierAdjusted), rules.classification),
    top_risk: topRisk(scores),
    cluster_type: c.cluster_type,
    region: c.region,
    dimension_scores: scores,
    risk_reasons: allReasons,
    suggested_actions: actions,
    // Seven days whatever the lookback (the alert band counts over the lookback).
    firing_alert_count_7d: countAlertsInLookback(data.alerts, 7, NOW),
    metrics: {
      compaction_score: metric('compaction_score'),
      disk_used_pct: metric('disk_used_pct'),
      query_errors_7d: integer(metric('query_errors_7d')),
      query_error_pct: metric('query_error_pct'),
      qps: metric('qps'),
      node_count: integer(metric('node_count')) ?? c.node_count,
    },
    last_metric_at: stale.last_metric_at,
    metrics_stale: stale.metrics_stale,
  };
}

function referenceDimensions(agg: ClusterAggregates, rules: ScoringRules) {
  const scores: DimensionScore[] = [];
  const offGreen: { rule: DimensionRule; raw: number; score: DimensionScore }[] = [];
  const missing: string[] = [];
  let weighted = 0;
  let totalWeight = 0;
  for (const rule of rules.dimensions) {
    const aggregated = aggregatedMetric(agg, rule.metric_key, rule.aggregation);
    if (aggregated === null) {
      missing.push(`No ${rule.display_name} data in the last ${rules.lookback_days} days`);
      continue;
    }
    const value = roundAt(aggregated, judgedDecimals([rule.green, rule.yellow, rule.red])); // scored as answered
    const raw = dimensionScore(rule, value);
    const score: DimensionScore = {
      name: rule.display_name,
      metric_key: rule.metric_key,
      score: round1(raw),
      value: round2(value),
      weight: rule.weight,
      status: dimensionStatus(rule, value),
    };
    scores.push(score);
    weighted += raw * rule.weight;
    totalWeight += rule.weight;
    if (score.status !== 'healthy') offGreen.push({ rule, raw, score });
  }
  offGreen.sort((a, b) => a.raw - b.raw || b.rule.weight - a.rule.weight || byName(a.rule.display_name, b.rule.display_name));
  const threshold = (rule: DimensionRule, status: string) => {
    const cmp = rule.inverted ? '<=' : '>=';
    if (status === 'critical') return `red ${cmp} ${rule.red}`;
    if (status === 'warning') return `yellow ${cmp} ${rule.yellow}`;
    return `green ${rule.inverted ? '>=' : '<='} ${rule.green}`;
  };
  const reasons = [...offGreen.map((d) => `${d.rule.display_name} at ${round2(d.score.value)} (${threshold(d.rule, d.score.status)})`), ...missing];
  const actions = [...new Set(offGreen.map((d) => d.rule.action))];
  return { scores, metricsScore: totalWeight > 0 ? clamp(weighted / totalWeight) : 100, reasons, actions };
}

function referenceHealth(agg: ClusterAggregates, data: ClusterData, rules: ScoringRules): HealthScore {
  const { scores, metricsScore, reasons, actions } = referenceDimensions(agg, rules);
  const stale = stalenessOf(agg.lastMetricAt, rules.stale_after_minutes, rules.lookback_days, NOW);
  const score = round1(metricsScore);
  const classification = classify(score, rules.classification);
  const c = data.cluster;
  return {
    cluster_id: c.cluster_id,
    cluster_name: c.cluster_name,
    customer_name: c.customer_name,
    account_id: c.account_id,
    overall_score: score,
    classification,
    top_risk: topRisk(scores),
    cluster_type: c.cluster_type,
    region: c.region,
    dimension_scores: scores.map((d) => {
      const r = rules.dimensions.find((x) => x.metric_key === d.metric_key)!;
      const direction = r.inverted ? 'lower is worse' : 'higher is worse';
      return {
        name: d.name,
        score: d.score,
        value: d.value,
        weight: d.weight,
        description: `${r.aggregation} over ${rules.lookback_days} days; green ${r.green}, yellow ${r.yellow}, red ${r.red} (${direction}); status ${d.status}`,
      };
    }),
    risk_level: classification,
    risk_reasons: stale.reason === undefined ? reasons : [stale.reason, ...reasons],
    suggested_actions: actions,
    risk_metrics: Object.fromEntries(
      rules.dimensions.map((r) => {
        const v = aggregatedMetric(agg, r.metric_key, r.aggregation);
        return [r.metric_key, v === null ? null : roundAt(v, judgedDecimals([r.green, r.yellow, r.red]))];
      }),
    ),
    last_metric_at: stale.last_metric_at,
    metrics_stale: stale.metrics_stale,
  };
}

const worstFirstByReference = <T extends { cluster_name: string }>(items: T[], score: (t: T) => number) =>
  [...items].sort((a, b) => score(a) - score(b) || byName(a.cluster_name, b.cluster_name));

const CUSTOM = scoringRules(
  [
    dimension({ metric_key: 'disk_used_pct', display_name: 'Disk', weight: 2, aggregation: 'max' }),
    dimension({ metric_key: 'memory_pct', display_name: 'Mem', weight: 2, aggregation: 'avg' }),
    dimension({ metric_key: 'qps', display_name: 'QPS', aggregation: 'min', inverted: true, green: 90, yellow: 80, red: 70 }),
    // Two dimensions with one action: the action is suggested once.
    dimension({ metric_key: 'query_errors_7d', display_name: 'Errors', aggregation: 'sum', action: 'Act on memory_pct.' }),
    dimension({ metric_key: 'node_count', display_name: 'Nodes', aggregation: 'last' }),
    dimension({ metric_key: 'p99_latency_ms', display_name: 'P99', weight: 3, aggregation: 'avg', green: 100, yellow: 200, red: 400 }),
  ],
  { lookback_days: 5, stale_after_minutes: 300 },
);

describe('scoreColumns and the answers built from them', () => {
  const cases: [string, ScoringRules, number][] = [
    ['the shipped rules', defaultHealthRules(), 1],
    ['hand-written rules (inverted, every aggregation, a shared action)', CUSTOM, 2],
  ];
  for (const [name, rules, seed] of cases) {
    it(`answer exactly what the per-cluster reference answers: ${name}`, () => {
      const fleet = randomFleet(600, rules, seed);
      const aggs = aggregateFleet(fleet, lookbackStart(rules.lookback_days, NOW));
      const columns = scoreColumns(fleet, rules, NOW, aggs);
      const expected = worstFirstByReference(
        fleet.map((d, i) => referenceScore(d, aggs[i]!, rules)),
        (s) => s.tier_adjusted_score,
      );
      const health = worstFirstByReference(
        fleet.map((d, i) => referenceHealth(aggs[i]!, d, rules)),
        (s) => s.overall_score,
      );
      // From the unified score's columns (as the fleet view builds both), and scored afresh.
      expect(healthScoresFrom(columns)).toEqual(health);
      expect(fleetScoresFrom(columns)).toEqual(expected);
      expect(scoreFleet(fleet, rules, NOW)).toEqual(expected);
      expect(healthScores(fleet, rules, NOW, undefined, aggs)).toEqual(health);
      expect(healthScores(fleet, rules, NOW)).toEqual(health);

      // The fleets reach every status, classification, tier, staleness and alert band, and ties.
      const statuses = new Set(expected.flatMap((s) => s.dimension_scores.map((d) => d.status)));
      expect([...statuses].sort()).toEqual([...DIMENSION_STATUSES].sort());
      expect(new Set(expected.map((s) => s.classification))).toEqual(new Set(['Healthy', 'Warning', 'Critical']));
      expect(new Set(expected.map((s) => s.customer_tier))).toEqual(new Set(['S', 'A', 'B', 'X']));
      expect(new Set(expected.map((s) => s.metrics_stale))).toEqual(new Set([true, false]));
      expect(new Set(expected.map((s) => s.alerts_score)).size).toBe(new Set(rules.alert_bands.map((b) => b.score)).size);
      expect(expected.some((s) => s.dimension_scores.length === 0)).toBe(true);
      expect(
        expected.some((s, k) => k > 0 && expected[k - 1]!.tier_adjusted_score === s.tier_adjusted_score && expected[k - 1]!.cluster_name === s.cluster_name),
      ).toBe(true);

      // The columns themselves: cluster i's place in the order, and its numbers.
      const byId = new Map(expected.map((s) => [s.cluster_id, s]));
      expect(Array.from(columns.order, (i) => fleet[i]!.cluster.cluster_id)).toEqual(expected.map((s) => s.cluster_id));
      fleet.forEach((d, i) => {
        const s = byId.get(d.cluster.cluster_id)!;
        expect([columns.overall[i], columns.metricsScore[i], columns.alertsScore[i], columns.tierAdjusted[i]]).toEqual([
          s.overall_score,
          s.metrics_score,
          s.alerts_score,
          s.tier_adjusted_score,
        ]);
        expect(['Healthy', 'Warning', 'Critical'][columns.classification[i]!]).toBe(s.classification);
        expect([columns.firing7d[i], columns.stale[i] === 1]).toEqual([s.firing_alert_count_7d, s.metrics_stale]);
        const present = rules.dimensions.flatMap((_, k) => {
          const at = i * columns.dimensions + k;
          return columns.status[at] === 255
            ? []
            : [{ status: DIMENSION_STATUSES[columns.status[at]!], value: round2(columns.value[at]!), score: round1(columns.raw[at]!) }];
        });
        expect(present).toEqual(s.dimension_scores.map(({ status, value, score }) => ({ status, value, score })));
      });
    });
  }

  it('healthKpis reads the p99 latency from the aggregates given, not from the rollups', () => {
    const rules = defaultHealthRules();
    const fleet = randomFleet(200, rules, 3);
    const from = lookbackStart(rules.lookback_days, NOW);
    const latencies = fleet.map((d) => aggregate(d.rollups, 'p99_latency_ms', 'avg', from)).filter((v): v is number => v !== null);
    const aggs = aggregateFleet(fleet, from);
    const scores = healthScores(fleet, rules, NOW, undefined, aggs);
    // Rollups built on each read (lazily materialised) must not be read again.
    for (const d of fleet) {
      Object.defineProperty(d, 'rollups', {
        get() {
          throw new Error('rollups read');
        },
      });
    }
    expect(healthKpis(scores, fleet, rules, NOW, aggs).avg_p99_latency).toBe(mean(latencies));
  });
});

describe('riskSnapshot without aggregates', () => {
  it('folds a cluster given as a row of rollup columns from the columns, never building its rollup objects', () => {
    const risk = defaultRiskRules();
    const fleet = randomFleet(100, defaultHealthRules(), 6);
    const days = windowDays(14, NOW);
    const columns = columnsFromRollups(
      days,
      fleet.map((d) => d.cluster.cluster_id),
      // Keyed by each cluster's id (a twin shares its original's rollup objects).
      fleet.flatMap((d) => d.rollups.filter((r) => days.includes(r.day)).map((r) => ({ ...r, cluster_id: d.cluster.cluster_id }))),
    );
    for (const d of fleet) {
      const columnar = columnarClusterData(d.cluster, columns, d.alerts);
      Object.defineProperty(columnar, 'rollups', {
        get() {
          throw new Error('rollups read');
        },
      });
      const objects = { ...d, rollups: d.rollups.filter((r) => days.includes(r.day)) };
      expect(riskSnapshot(columnar, risk, 50, NOW)).toEqual(riskSnapshot(objects, risk, 50, NOW));
    }
  });
});

describe('worstFirstOrder', () => {
  const reference = (scores: number[], names: string[]) =>
    scores.map((_, i) => i).sort((a, b) => scores[a]! - scores[b]! || byName(names[a]!, names[b]!) || a - b);

  it('scores as answered (one decimal, 0..100) are bucketed, any others compared; both give the comparison sort’s order', () => {
    const rnd = random(4);
    const names = Array.from({ length: 500 }, () => `n${Math.floor(rnd() * 50)}`);
    const tenths = names.map(() => round1(rnd() < 0.5 ? Math.floor(rnd() * 5) * 20 : rnd() * 100));
    const others = names.map(() => (rnd() < 0.5 ? Math.floor(rnd() * 5) * 20 : rnd() * 100));
    others[7] = 100.05;
    for (const scores of [tenths, others, [0, 100, 0, 100], []]) {
      const n = names.slice(0, scores.length);
      expect(Array.from(worstFirstOrder(Float64Array.from(scores), n))).toEqual(reference(scores, n));
    }
  });

  it('names already in order (a refresh’s fleet) give the same order, ties by name then index, in the comparator’s order only', () => {
    const rnd = random(6);
    const names = Array.from({ length: 600 }, () => `n${Math.floor(rnd() * 80)}`).sort(byName);
    const scores = names.map(() => round1(Math.floor(rnd() * 6) * 20));
    expect(Array.from(worstFirstOrder(Float64Array.from(scores), names))).toEqual(reference(scores, names));
    // In code-point order (Z before a), not in the collator’s: ties are still sorted by the collator.
    const mixed = ['Zeta', 'Zeta', 'alpha', 'beta', 'élan'];
    const level = Uint8Array.from(mixed, () => 0);
    const expected = mixed.map((_, i) => i).sort((a, b) => byLocale(mixed[a]!, mixed[b]!) || a - b);
    expect(
      Array.from(
        worstFirstOrder(
          Float64Array.from(mixed, () => 50),
          mixed,
          byLocale,
          level,
        ),
      ),
    ).toEqual(expected);
  });

  it('groups first (a risk level’s rank), then score, then names in the order given (the collator’s for sortSnapshots)', () => {
    const rnd = random(5);
    const names = Array.from({ length: 400 }, () => ['Zeta', 'alpha', 'Alpha', 'élan', 'b c', 'b-c', 'B_c'][Math.floor(rnd() * 7)]!);
    const levels = Uint8Array.from(names, () => Math.floor(rnd() * 3));
    for (const scores of [names.map(() => round1(Math.floor(rnd() * 4) * 25)), names.map(() => Math.floor(rnd() * 4) * 25 + 0.05)]) {
      const expected = scores.map((_, i) => i).sort((a, b) => levels[a]! - levels[b]! || scores[a]! - scores[b]! || byLocale(names[a]!, names[b]!) || a - b);
      expect(Array.from(worstFirstOrder(Float64Array.from(scores), names, byLocale, levels))).toEqual(expected);
    }
  });
});
