// The health group: the metrics-only view of the same dimensions (DESIGN §8).
import type * as z from 'zod';
import type { DimensionRule, ScoringRules } from '../rules/schemas.js';
import { aggregatesFor, classCounts, classify, mean, scoreDimensionsOf, topRisk, worstFirst } from './fleet-score.js';
import {
  aggregate,
  aggregateFleet,
  aggregatedMetric,
  localeOrderOf,
  lookbackStart,
  round1,
  round2,
  stalenessOf,
  type ClusterAggregates,
  type ClusterData,
} from './inputs.js';
import type { RiskLevel } from './risk.js';
import type * as contract from './schemas.js';
import type { Narrowed } from './schemas.js';

// The answers' shapes are the zod schemas in schemas.ts; these are inferred from them.
export type HealthDimension = z.infer<typeof contract.HealthDimension>;

/**
 * `risk_level` is a string in the contract; the engine answers the risk rules'
 * level, as in the cluster's risk snapshot. `risk_metrics`: every dimension's
 * metric value by metric key (null: no data in the lookback).
 */
export type HealthScore = Narrowed<z.infer<typeof contract.HealthScore>, { risk_level: RiskLevel }>;

export type HealthKpis = z.infer<typeof contract.HealthKpis>;

export type EnrichmentItem = z.infer<typeof contract.EnrichmentItem>;

// A dimension's description depends only on its rule, the lookback and its status: built once per rule set and status.
const descriptions = new WeakMap<ScoringRules, Map<DimensionRule, Partial<Record<string, string>>>>();

function description(rules: ScoringRules, r: DimensionRule, status: string): string {
  let byRule = descriptions.get(rules);
  if (!byRule) descriptions.set(rules, (byRule = new Map()));
  let texts = byRule.get(r);
  if (!texts) byRule.set(r, (texts = {}));
  const direction = r.inverted ? 'lower is worse' : 'higher is worse';
  texts[status] ??= `${r.aggregation} over ${rules.lookback_days} days; green ${r.green}, yellow ${r.yellow}, red ${r.red} (${direction}); status ${status}`;
  return texts[status];
}

/** Every dimension's metric value by metric key, read from the unified score's aggregates (null: no data). */
function riskMetrics(agg: ClusterAggregates, rules: ScoringRules): HealthScore['risk_metrics'] {
  const metrics: HealthScore['risk_metrics'] = {};
  for (const r of rules.dimensions) {
    const v = aggregatedMetric(agg, r.metric_key, r.aggregation);
    metrics[r.metric_key] = v === null ? null : round2(v);
  }
  return metrics;
}

/**
 * `riskLevelOf` answers the cluster's risk level from the risk rules (the one
 * /api/risk/snapshots shows); without it, the health classification stands in.
 * `aggregates`: the unified score's aggregates of the cluster (same rules, same
 * lookback), so dimensions and risk_metrics read them instead of the rollups.
 */
export function healthScore(
  data: ClusterData,
  rules: ScoringRules,
  now: Date,
  riskLevelOf?: (clusterId: string) => RiskLevel | undefined,
  aggregates?: ClusterAggregates,
): HealthScore {
  const { cluster } = data;
  const agg = aggregatesFor(data, rules.lookback_days, now, aggregates);
  const dims = scoreDimensionsOf(agg, rules);
  // The same staleness, reason and all, as the unified score's (same rules, same window).
  const stale = stalenessOf(agg.lastMetricAt, rules.stale_after_minutes, rules.lookback_days, now);
  const score = round1(dims.metricsScore);
  const classification = classify(score, rules.classification);
  const byKey = new Map(dims.scores.map((d) => [d.metric_key, d]));
  return {
    cluster_id: cluster.cluster_id,
    cluster_name: cluster.cluster_name,
    customer_name: cluster.customer_name,
    account_id: cluster.account_id,
    overall_score: score,
    classification,
    top_risk: topRisk(dims.scores),
    cluster_type: cluster.cluster_type,
    region: cluster.region,
    dimension_scores: rules.dimensions
      .filter((r) => byKey.has(r.metric_key))
      .map((r) => {
        const d = byKey.get(r.metric_key)!;
        return { name: d.name, score: d.score, value: d.value, weight: d.weight, description: description(rules, r, d.status) };
      }),
    risk_level: riskLevelOf?.(cluster.cluster_id) ?? classification,
    risk_reasons: stale.reason === undefined ? dims.reasons : [stale.reason, ...dims.reasons],
    suggested_actions: dims.actions,
    risk_metrics: riskMetrics(agg, rules),
    last_metric_at: stale.last_metric_at,
    metrics_stale: stale.metrics_stale,
  };
}

export function healthScores(
  fleet: readonly ClusterData[],
  rules: ScoringRules,
  now: Date,
  riskLevelOf?: (clusterId: string) => RiskLevel | undefined,
  aggregates?: readonly ClusterAggregates[],
): HealthScore[] {
  const aggs = aggregates ?? aggregateFleet(fleet, lookbackStart(rules.lookback_days, now));
  return worstFirst(
    fleet.map((d, i) => healthScore(d, rules, now, riskLevelOf, aggs[i])),
    (s) => s.overall_score,
  );
}

export function healthKpis(scores: readonly HealthScore[], fleet: readonly ClusterData[], rules: ScoringRules, now: Date): HealthKpis {
  const from = lookbackStart(rules.lookback_days, now);
  const latencies = fleet.map((d) => aggregate(d.rollups, 'p99_latency_ms', 'avg', from)).filter((v): v is number => v !== null);
  return { ...classCounts(scores), avg_score: mean(scores.map((s) => s.overall_score)), avg_p99_latency: mean(latencies) };
}

export function enrichment(fleet: readonly ClusterData[]): EnrichmentItem[] {
  const items = fleet.map(({ cluster: c }) => ({
    cluster_id: c.cluster_id,
    cluster_name: c.cluster_name,
    cluster_type: c.cluster_type,
    region_name: c.region,
  }));
  const order = localeOrderOf(items.map((i) => i.cluster_name));
  return items.sort((a, b) => order(a.cluster_name, b.cluster_name));
}
