// The unified score of a cluster (DESIGN §8) and the fleet KPIs: what
// /api/fleet/scores and /api/fleet/kpis answer.
import type * as z from 'zod';
import type { MetricKey } from '../fleet/records.js';
import type { AlertBand, DimensionRule, ScoringRules } from '../rules/schemas.js';
import { dimensionScore, dimensionStatus, type DimensionStatus } from './dimensions.js';
import type * as contract from './schemas.js';
import type { Narrowed } from './schemas.js';
import {
  aggregateCluster,
  aggregateFleet,
  aggregatedValue,
  byName,
  countAlertsInLookback,
  clamp,
  HOW,
  lookbackStart,
  METRIC_INDEX,
  round1,
  round2,
  stalenessOf,
  type ClusterAggregates,
  type ClusterData,
} from './inputs.js';

/** The answers' shapes are the zod schemas in schemas.ts; these are inferred from them. */
export type Classification = z.infer<typeof contract.Classification>;

/** `metric_key` and `status` are strings in the contract; the engine answers a metric key and one of its four statuses. */
export type DimensionScore = Narrowed<z.infer<typeof contract.DimensionScore>, { metric_key: MetricKey; status: DimensionStatus }>;

export type FleetMetrics = z.infer<typeof contract.FleetMetrics>;

export type FleetClusterScore = Narrowed<z.infer<typeof contract.FleetClusterScore>, { dimension_scores: DimensionScore[] }>;

export type FleetKpis = z.infer<typeof contract.FleetKpis>;

export function classify(score: number, thresholds: ScoringRules['classification']): Classification {
  if (score >= thresholds.healthy) return 'Healthy';
  if (score >= thresholds.warning) return 'Warning';
  return 'Critical';
}

export function alertsScore(bands: readonly AlertBand[], firing: number): number {
  return (bands.find((b) => b.max_alerts === null || firing <= b.max_alerts) ?? bands.at(-1)!).score;
}

const fmt = (n: number) => String(round2(n));

function thresholdText(rule: DimensionRule, status: DimensionStatus): string {
  const cmp = rule.inverted ? '≤' : '≥';
  if (status === 'critical') return `red ${cmp} ${rule.red}`;
  if (status === 'warning') return `yellow ${cmp} ${rule.yellow}`;
  return `green ${rule.inverted ? '≥' : '≤'} ${rule.green}`;
}

export interface DimensionsResult {
  scores: DimensionScore[];
  metricsScore: number;
  /** Dimensions that are not green, worst first, and those without data. */
  reasons: string[];
  actions: string[];
}

/** A rule set's dimensions with their metric index and aggregation code, worked out once per rule set. */
interface CompiledDimension {
  rule: DimensionRule;
  index: number;
  how: number;
}

const compiledDimensions = new WeakMap<ScoringRules, CompiledDimension[]>();

function dimensionsOf(rules: ScoringRules): CompiledDimension[] {
  let dims = compiledDimensions.get(rules);
  if (!dims) {
    dims = rules.dimensions.map((rule) => ({ rule, index: METRIC_INDEX[rule.metric_key], how: HOW[rule.aggregation] }));
    compiledDimensions.set(rules, dims);
  }
  return dims;
}

/** The aggregates of a cluster over the rules' lookback: the ones given, or folded from its rollups. */
export function aggregatesFor(data: ClusterData, lookbackDays: number, now: Date, given?: ClusterAggregates): ClusterAggregates {
  const from = lookbackStart(lookbackDays, now);
  return given !== undefined && given.fromDay === from ? given : aggregateCluster(data.rollups, from);
}

/** Scores every dimension with data; reasons name what is off green and what has no data. */
export function scoreDimensions(data: ClusterData, rules: ScoringRules, now: Date, aggregates?: ClusterAggregates): DimensionsResult {
  return scoreDimensionsOf(aggregatesFor(data, rules.lookback_days, now, aggregates), rules);
}

/** scoreDimensions from a cluster's aggregates over the rules' lookback. */
export function scoreDimensionsOf(agg: ClusterAggregates, rules: ScoringRules): DimensionsResult {
  const scores: DimensionScore[] = [];
  let offGreen: { score: DimensionScore; rule: DimensionRule; raw: number }[] | undefined;
  let missing: string[] | undefined;
  let weighted = 0;
  let totalWeight = 0;
  const dims = dimensionsOf(rules);
  for (let i = 0; i < dims.length; i++) {
    const { rule, index, how } = dims[i]!;
    const value = aggregatedValue(agg, index, how);
    if (value === null) {
      (missing ??= []).push(`No ${rule.display_name} data in the last ${rules.lookback_days} days`);
      continue;
    }
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
    if (score.status !== 'healthy') (offGreen ??= []).push({ score, rule, raw });
  }
  // No data at all: nothing to hold against the cluster, and the reasons say so.
  const metricsScore = totalWeight > 0 ? clamp(weighted / totalWeight) : 100;
  if (!offGreen) return { scores, metricsScore, reasons: missing ?? [], actions: [] };
  if (offGreen.length > 1) offGreen.sort((a, b) => a.raw - b.raw || b.rule.weight - a.rule.weight || byName(a.rule.display_name, b.rule.display_name));
  // Reasons worst first, then what has no data; actions once each, in the reasons' order (loops, not spreads and a Set: once per cluster).
  const reasons: string[] = [];
  const actions: string[] = [];
  for (const d of offGreen) {
    reasons.push(`${d.rule.display_name} at ${fmt(d.score.value)} (${thresholdText(d.rule, d.score.status)})`);
    if (!actions.includes(d.rule.action)) actions.push(d.rule.action);
  }
  if (missing) for (const m of missing) reasons.push(m);
  return { scores, metricsScore, reasons, actions };
}

/**
 * "Disk Usage (32)": the lowest-scoring dimension (ties: heavier weight, then
 * name), also when all are at 100 (spec: "dimension name and score"); "None"
 * only for a cluster with no dimension at all.
 */
export function topRisk(scores: readonly DimensionScore[]): string {
  let worst: DimensionScore | undefined;
  for (const d of scores) {
    if (!worst || d.score < worst.score || (d.score === worst.score && (d.weight > worst.weight || (d.weight === worst.weight && d.name < worst.name))))
      worst = d;
  }
  return worst ? `${worst.name} (${Math.round(worst.score)})` : 'None';
}

const FLEET_METRIC_KEYS = ['compaction_score', 'disk_used_pct', 'query_errors_7d', 'query_error_pct', 'qps', 'node_count'] as const;

// Each fleet metric is aggregated the way its dimension is (or `last`): its metric index and
// aggregation code, worked out once per rule set. A dimension's value is round2 of the same
// aggregate, so reading the aggregates gives the dimension's value when there is one.
const fleetMetricAggregation = new WeakMap<ScoringRules, { index: number; how: number }[]>();

function aggregationsOf(rules: ScoringRules): { index: number; how: number }[] {
  let hows = fleetMetricAggregation.get(rules);
  if (!hows) {
    hows = FLEET_METRIC_KEYS.map((key) => ({ index: METRIC_INDEX[key], how: HOW[rules.dimensions.find((d) => d.metric_key === key)?.aggregation ?? 'last'] }));
    fleetMetricAggregation.set(rules, hows);
  }
  return hows;
}

function fleetMetric(agg: ClusterAggregates, of: { index: number; how: number }): number | null {
  const v = aggregatedValue(agg, of.index, of.how);
  return v === null ? null : round2(v);
}

const integer = (v: number | null) => (v === null ? null : Math.round(v));

function fleetMetrics(agg: ClusterAggregates, rules: ScoringRules, nodeCount: number): FleetMetrics {
  const hows = aggregationsOf(rules);
  return {
    compaction_score: fleetMetric(agg, hows[0]!),
    disk_used_pct: fleetMetric(agg, hows[1]!),
    query_errors_7d: integer(fleetMetric(agg, hows[2]!)),
    query_error_pct: fleetMetric(agg, hows[3]!),
    qps: fleetMetric(agg, hows[4]!),
    node_count: integer(fleetMetric(agg, hows[5]!)) ?? nodeCount,
  };
}

/**
 * The weighted mean of the metrics and alerts scores, in 0..100 for any
 * weights: they are divided by the larger one first, so their sum is in 1..2
 * and nothing overflows whatever their size (the schema bounds them too).
 */
export function unifiedScore(metricsScore: number, alertsScore: number, weights: ScoringRules['weights']): number {
  const largest = Math.max(weights.metrics, weights.alerts);
  if (!(largest > 0)) return clamp(metricsScore);
  const m = weights.metrics / largest;
  const a = weights.alerts / largest;
  return clamp((metricsScore * m + alertsScore * a) / (m + a));
}

/**
 * `aggregates`: the cluster's aggregates over the rules' lookback (aggregateFleet), so the
 * views computed together fold the rollups once; without them (or for another lookback) they are folded here.
 */
export function scoreCluster(data: ClusterData, rules: ScoringRules, now: Date, aggregates?: ClusterAggregates): FleetClusterScore {
  const { cluster } = data;
  const agg = aggregatesFor(data, rules.lookback_days, now, aggregates);
  const dims = scoreDimensionsOf(agg, rules);
  const firing = countAlertsInLookback(data.alerts, rules.lookback_days, now);
  const alerts = alertsScore(rules.alert_bands, firing);
  const overall = unifiedScore(dims.metricsScore, alerts, rules.weights);
  const multiplier = rules.tier_multipliers[cluster.customer_tier as 'S' | 'A' | 'B'] ?? 1;
  const tierAdjusted = clamp(100 - (100 - overall) * multiplier);
  const stale = stalenessOf(agg.lastMetricAt, rules.stale_after_minutes, rules.lookback_days, now);
  // A stale cluster's reasons say so first: its score stands on data that stopped arriving.
  const reasons = stale.reason === undefined ? dims.reasons : [stale.reason, ...dims.reasons];
  if (firing > 0) reasons.push(`${firing} alert${firing === 1 ? '' : 's'} fired in the last ${rules.lookback_days} days`);
  return {
    cluster_id: cluster.cluster_id,
    cluster_name: cluster.cluster_name,
    customer_name: cluster.customer_name,
    account_id: cluster.account_id,
    customer_tier: cluster.customer_tier,
    overall_score: round1(overall),
    metrics_score: round1(dims.metricsScore),
    alerts_score: round1(alerts),
    tier_adjusted_score: round1(tierAdjusted),
    classification: classify(round1(tierAdjusted), rules.classification),
    top_risk: topRisk(dims.scores),
    cluster_type: cluster.cluster_type,
    region: cluster.region,
    dimension_scores: dims.scores,
    risk_reasons: reasons,
    suggested_actions: dims.actions,
    firing_alert_count_7d: firing,
    metrics: fleetMetrics(agg, rules, cluster.node_count),
    last_metric_at: stale.last_metric_at,
    metrics_stale: stale.metrics_stale,
  };
}

/** Worst first: ascending tier-adjusted score, ties by cluster name. */
export function worstFirst<T extends { cluster_name: string }>(items: T[], score: (t: T) => number): T[] {
  return [...items].sort((a, b) => score(a) - score(b) || byName(a.cluster_name, b.cluster_name));
}

/** `aggregates`: aggregateFleet(fleet, …) over the rules' lookback, in fleet order; folded here when not given. */
export function scoreFleet(fleet: readonly ClusterData[], rules: ScoringRules, now: Date, aggregates?: readonly ClusterAggregates[]): FleetClusterScore[] {
  const aggs = aggregates ?? aggregateFleet(fleet, lookbackStart(rules.lookback_days, now));
  return worstFirst(
    fleet.map((d, i) => scoreCluster(d, rules, now, aggs[i])),
    (s) => s.tier_adjusted_score,
  );
}

/** Mean rounded to one decimal; 0 for no values. Values near the double range are divided before they are added, so it never overflows. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  if (Number.isFinite(sum)) return round1(sum / values.length);
  let m = 0;
  for (const v of values) m += v / values.length;
  return round1(m);
}

/** How many clusters are in each class; the three always add up to the total. */
export function classCounts(scores: readonly { classification: Classification }[]) {
  const count = (c: Classification) => scores.filter((s) => s.classification === c).length;
  return { total_clusters: scores.length, healthy_count: count('Healthy'), warning_count: count('Warning'), critical_count: count('Critical') };
}

export function fleetKpis(scores: readonly FleetClusterScore[]): FleetKpis {
  return {
    ...classCounts(scores),
    tier_s_at_risk: scores.filter((s) => s.customer_tier === 'S' && s.classification !== 'Healthy').length,
    avg_score: mean(scores.map((s) => s.overall_score)),
    avg_metrics_score: mean(scores.map((s) => s.metrics_score)),
    avg_alerts_score: mean(scores.map((s) => s.alerts_score)),
  };
}
