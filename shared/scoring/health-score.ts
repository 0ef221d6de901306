// The health group: the metrics-only view of the same dimensions (DESIGN §8).
import type * as z from '../zod.js';
import type { ScoringRules } from '../rules/schemas.js';
import { DIMENSION_STATUSES, NO_DATA } from './dimensions.js';
import { classCounts, classify, mean, placesOf, reasonsAt, scoreColumns, topRisk, worstFirstOrder, type ScoreColumns } from './fleet-score.js';
import { aggregatedMetric, aggregateOf, localeOrderOf, lookbackStart, round1, type ClusterAggregates, type ClusterData } from './inputs.js';
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

// A dimension's description depends only on its rule, the lookback and its status: built once per rule set, by dimension and status code.
const descriptions = new WeakMap<ScoringRules, readonly (readonly string[])[]>();

function descriptionsOf(rules: ScoringRules): readonly (readonly string[])[] {
  let texts = descriptions.get(rules);
  if (!texts) {
    texts = rules.dimensions.map((r) => {
      const direction = r.inverted ? 'lower is worse' : 'higher is worse';
      return DIMENSION_STATUSES.map(
        (status) => `${r.aggregation} over ${rules.lookback_days} days; green ${r.green}, yellow ${r.yellow}, red ${r.red} (${direction}); status ${status}`,
      );
    });
    descriptions.set(rules, texts);
  }
  return texts;
}

/**
 * Cluster i's health score from the unified score's columns (same rules, same lookback):
 * its metrics score, dimensions, reasons and staleness are those columns', and
 * `risk_metrics` is every dimension's value there (null: no data).
 */
function healthScoreAt(columns: ScoreColumns, i: number, riskLevelOf?: (clusterId: string) => RiskLevel | undefined): HealthScore {
  const { cluster } = columns.fleet[i]!;
  const { rules, status, value } = columns;
  const texts = descriptionsOf(rules);
  const dimensions: HealthDimension[] = [];
  const riskMetrics: HealthScore['risk_metrics'] = {};
  for (let d = 0, at = i * columns.dimensions; d < columns.dimensions; d++, at++) {
    const r = rules.dimensions[d]!;
    const code = status[at]!;
    if (code === NO_DATA) {
      riskMetrics[r.metric_key] = null;
      continue;
    }
    const v = value[at]!; // rounded as judged (shared/scoring/fleet-score.ts)
    riskMetrics[r.metric_key] = v;
    dimensions.push({ name: r.display_name, score: round1(columns.raw[at]!), value: v, weight: r.weight, description: texts[d]![code]! });
  }
  const score = columns.metricsScore[i]!;
  const classification = classify(score, rules.classification);
  const reasons: string[] = [];
  const actions: string[] = [];
  reasonsAt(columns, i, reasons, actions);
  return {
    cluster_id: cluster.cluster_id,
    cluster_name: cluster.cluster_name,
    customer_name: cluster.customer_name,
    account_id: cluster.account_id,
    overall_score: score,
    classification,
    top_risk: topRisk(dimensions),
    cluster_type: cluster.cluster_type,
    region: cluster.region,
    dimension_scores: dimensions,
    risk_level: riskLevelOf?.(cluster.cluster_id) ?? classification,
    risk_reasons: reasons,
    suggested_actions: actions,
    risk_metrics: riskMetrics,
    last_metric_at: columns.aggregates[i]!.lastMetricAt,
    metrics_stale: columns.stale[i] === 1,
  };
}

/**
 * The health scores from the unified score's columns, worst first by metrics score, ties by name:
 * the fleet view passes the columns it scored the fleet into, so the dimensions are scored once.
 */
export function healthScoresFrom(columns: ScoreColumns, riskLevelOf?: (clusterId: string) => RiskLevel | undefined): HealthScore[] {
  const places = placesOf(worstFirstOrder(columns.metricsScore, columns.names));
  const scores = new Array<HealthScore>(places.length);
  for (let i = 0; i < places.length; i++) scores[places[i]!] = healthScoreAt(columns, i, riskLevelOf);
  return scores;
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
  return healthScoreAt(scoreColumns([data], rules, now, aggregates === undefined ? undefined : [aggregates]), 0, riskLevelOf);
}

export function healthScores(
  fleet: readonly ClusterData[],
  rules: ScoringRules,
  now: Date,
  riskLevelOf?: (clusterId: string) => RiskLevel | undefined,
  aggregates?: readonly ClusterAggregates[],
): HealthScore[] {
  return healthScoresFrom(scoreColumns(fleet, rules, now, aggregates), riskLevelOf);
}

/**
 * `aggregates`: the fleet's over the rules' lookback (those its scores were computed from). The
 * p99 latency is read there, and from a cluster's rollup columns (or objects) only where there
 * are none given for this lookback.
 */
export function healthKpis(
  scores: readonly HealthScore[],
  fleet: readonly ClusterData[],
  rules: ScoringRules,
  now: Date,
  aggregates?: readonly ClusterAggregates[],
): HealthKpis {
  const from = lookbackStart(rules.lookback_days, now);
  const latencies: number[] = [];
  const aggs = aggregates?.length === fleet.length ? aggregates : undefined;
  for (let i = 0; i < fleet.length; i++) {
    const agg = aggs?.[i];
    const v = agg?.fromDay === from ? aggregatedMetric(agg, 'p99_latency_ms', 'avg') : aggregateOf(fleet[i]!, 'p99_latency_ms', 'avg', from);
    if (v !== null) latencies.push(v);
  }
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
