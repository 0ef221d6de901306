// The unified score of a cluster (DESIGN §8) and the fleet KPIs: what
// /api/fleet/scores and /api/fleet/kpis answer. Scoring is one numeric pass over the
// fleet's columnar aggregates into typed arrays (scoreColumns); the answers' objects and
// strings are built from those columns afterwards (fleetScoresFrom), a cost of its own.
import type * as z from '../zod.js';
import type { MetricKey } from '../fleet/records.js';
import type { AlertBand, DimensionRule, ScoringRules } from '../rules/schemas.js';
import { DIMENSION_STATUSES, dimensionScore, dimensionStatusCode, NO_DATA, type DimensionStatus } from './dimensions.js';
import type * as contract from './schemas.js';
import type { Narrowed } from './schemas.js';
import {
  aggregateFleet,
  aggregatedValue,
  byName,
  clamp,
  countAlertsSince,
  HOW,
  lookbackStart,
  METRIC_INDEX,
  round1,
  judgedDecimals,
  round2,
  roundAt,
  staleReason,
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

const CLASSIFICATIONS = ['Healthy', 'Warning', 'Critical'] as const satisfies readonly Classification[];

/** classify as its index in CLASSIFICATIONS, for the columns. */
function classCode(score: number, thresholds: ScoringRules['classification']): number {
  if (score >= thresholds.healthy) return 0;
  if (score >= thresholds.warning) return 1;
  return 2;
}

export function classify(score: number, thresholds: ScoringRules['classification']): Classification {
  return CLASSIFICATIONS[classCode(score, thresholds)]!;
}

/** The score of the first band whose max_alerts covers `firing` (a loop: once per cluster). */
export function alertsScore(bands: readonly AlertBand[], firing: number): number {
  for (let b = 0; b < bands.length; b++) {
    const band = bands[b]!;
    if (band.max_alerts === null || firing <= band.max_alerts) return band.score;
  }
  return bands.at(-1)!.score;
}

function thresholdText(rule: DimensionRule, status: DimensionStatus): string {
  const cmp = rule.inverted ? '<=' : '>=';
  if (status === 'critical') return `red ${cmp} ${rule.red}`;
  if (status === 'warning') return `yellow ${cmp} ${rule.yellow}`;
  return `green ${rule.inverted ? '>=' : '<='} ${rule.green}`;
}

const FLEET_METRIC_KEYS = ['compaction_score', 'disk_used_pct', 'query_errors_7d', 'query_error_pct', 'qps', 'node_count'] as const;

/** A rule set's dimension with its metric index, aggregation code and the fixed parts of its reasons. */
interface CompiledDimension {
  rule: DimensionRule;
  index: number;
  how: number;
  /** An off-green reason is `reasonAt` + the value + `reasonThreshold[status code]`: "Disk Usage at " "84" " (yellow >= 80)". */
  reasonAt: string;
  reasonThreshold: readonly string[];
  /** The reason of the dimension without data. */
  missing: string;
  /** The decimals its value is judged and answered at (judgedDecimals of its thresholds). */
  places: number;
}

interface CompiledRules {
  dimensions: CompiledDimension[];
  /**
   * Per fleet metric (FLEET_METRIC_KEYS order): the place of its dimension, whose value (the same
   * aggregate) it answers, or -1 when it has none: then the metric's `last` is read.
   */
  fleetMetricDimension: number[];
}

const compiledRules = new WeakMap<ScoringRules, CompiledRules>();

/** Worked out once per rule set, so the per-cluster loops only index and concatenate. */
function compiledOf(rules: ScoringRules): CompiledRules {
  let compiled = compiledRules.get(rules);
  if (!compiled) {
    compiled = {
      dimensions: rules.dimensions.map((rule) => ({
        rule,
        index: METRIC_INDEX[rule.metric_key],
        how: HOW[rule.aggregation],
        reasonAt: `${rule.display_name} at `,
        reasonThreshold: DIMENSION_STATUSES.map((status) => ` (${thresholdText(rule, status)})`),
        missing: `No ${rule.display_name} data in the last ${rules.lookback_days} days`,
        places: judgedDecimals([rule.green, rule.yellow, rule.red]),
      })),
      fleetMetricDimension: FLEET_METRIC_KEYS.map((key) => rules.dimensions.findIndex((d) => d.metric_key === key)),
    };
    compiledRules.set(rules, compiled);
  }
  return compiled;
}

/** The aggregates of a cluster over the rules' lookback: the ones given, or folded from its rollups. */
export function aggregatesFor(data: ClusterData, lookbackDays: number, now: Date, given?: ClusterAggregates): ClusterAggregates {
  const from = lookbackStart(lookbackDays, now);
  // aggregateFleet folds a cluster from whatever form its rollups come in.
  return given !== undefined && given.fromDay === from ? given : aggregateFleet([data], from)[0]!;
}

/** The fleet's aggregates over the lookback: the ones given (a cluster's folded here where they cover another), or the fleet folded here. */
function lookbackAggregates(
  fleet: readonly ClusterData[],
  lookbackDays: number,
  now: Date,
  given?: readonly ClusterAggregates[],
): readonly ClusterAggregates[] {
  const from = lookbackStart(lookbackDays, now);
  if (given === undefined) return aggregateFleet(fleet, from);
  for (let i = 0; i < fleet.length; i++) {
    if (given[i]?.fromDay !== from) return fleet.map((d, j) => aggregatesFor(d, lookbackDays, now, given[j]));
  }
  return given;
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
 * A fleet's unified scores as columns, cluster i in fleet order (scoreColumns). Per dimension
 * of a cluster, at i × `dimensions` + the dimension's place in the rules: its aggregated value,
 * raw (unrounded) score and status code (DIMENSION_STATUSES index, NO_DATA without data). Per
 * cluster: the scores as answered (one decimal), the classification (CLASSIFICATIONS index),
 * the alerts counted, staleness, and `order`: cluster indexes worst first.
 */
export interface ScoreColumns {
  fleet: readonly ClusterData[];
  aggregates: readonly ClusterAggregates[];
  rules: ScoringRules;
  /** The rules worked out once (compiledOf), for the answers built from the columns. */
  compiled: CompiledRules;
  /** The time scored at (epoch ms). */
  now: number;
  /** The clusters' names, read with their tiers (the inventory is read once). */
  names: string[];
  dimensions: number;
  value: Float64Array;
  raw: Float64Array;
  status: Uint8Array;
  metricsScore: Float64Array;
  alertsScore: Float64Array;
  overall: Float64Array;
  tierAdjusted: Float64Array;
  classification: Uint8Array;
  /** Alerts in the rules' lookback: the alert band's count and the reason's. */
  firing: Uint32Array;
  /** Alerts in the last FIRING_COUNT_DAYS (`firing_alert_count_7d`): `firing` itself when the lookback is that long. */
  firing7d: Uint32Array;
  stale: Uint8Array;
  order: Uint32Array;
}

const DAY_MS = 86_400_000;

/**
 * The window of `firing_alert_count_7d`, whatever the rules' lookback (1..30 days) the alert band
 * counts over. The fleet view reads alerts over the longer of the lookback and the critical
 * clusters' 14 days (loadFleetInputs), so these 7 are always there.
 */
export const FIRING_COUNT_DAYS = 7;

/**
 * stalenessOf's flag (inputs.ts): no sample in the lookback, or the newest older than the
 * threshold. `parsed` holds the times already parsed in this pass: clusters fed on the same
 * schedule share their newest sample's time.
 */
function isStale(last: string | null, staleAfterMinutes: number, nowMs: number, parsed: Map<string, number>): boolean {
  if (last === null) return true;
  let ms = parsed.get(last);
  if (ms === undefined) parsed.set(last, (ms = Date.parse(last)));
  return nowMs - ms > staleAfterMinutes * 60_000;
}

/**
 * The scoring itself: one numeric pass over the fleet's aggregates (`aggregates`: aggregateFleet
 * over the rules' lookback, folded here when not given) into typed arrays, allocating nothing
 * per cluster; then the worst-first order.
 */
export function scoreColumns(fleet: readonly ClusterData[], rules: ScoringRules, now: Date, aggregates?: readonly ClusterAggregates[]): ScoreColumns {
  const aggs = lookbackAggregates(fleet, rules.lookback_days, now, aggregates);
  const compiled = compiledOf(rules);
  const dims = compiled.dimensions;
  const perCluster = dims.length;
  const n = fleet.length;
  const value = new Float64Array(n * perCluster);
  const raw = new Float64Array(n * perCluster);
  const status = new Uint8Array(n * perCluster);
  const metricsScore = new Float64Array(n);
  const alerts = new Float64Array(n);
  const overall = new Float64Array(n);
  const tierAdjusted = new Float64Array(n);
  const classification = new Uint8Array(n);
  const firing = new Uint32Array(n);
  // The same counts when the lookback is 7 days (the shipped rules): no second count then.
  const firing7d = rules.lookback_days === FIRING_COUNT_DAYS ? firing : new Uint32Array(n);
  const stale = new Uint8Array(n);
  const names = new Array<string>(n);
  const nowMs = now.getTime();
  const parsedTimes = new Map<string, number>();
  // The tiers' multipliers read once; a cluster's tier is compared with S, A and B, and any other looked up as the rules have it.
  const multipliers = rules.tier_multipliers;
  const multiplierS = multipliers.S ?? 1;
  const multiplierA = multipliers.A ?? 1;
  const multiplierB = multipliers.B ?? 1;
  // countAlertsInLookback's bound, worked out once for the fleet.
  const alertsSince = new Date(nowMs - rules.lookback_days * DAY_MS).toISOString();
  const alertsSince7d = new Date(nowMs - FIRING_COUNT_DAYS * DAY_MS).toISOString();
  // The inventory and alerts first, in a loop of their own: each cluster's objects are a few
  // dependent reads from memory, which a short loop lets the processor overlap across clusters.
  const multiplier = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const data = fleet[i]!;
    const cluster = data.cluster;
    names[i] = cluster.cluster_name;
    const tier = cluster.customer_tier;
    multiplier[i] = tier === 'S' ? multiplierS : tier === 'A' ? multiplierA : tier === 'B' ? multiplierB : (multipliers[tier as 'S' | 'A' | 'B'] ?? 1);
    firing[i] = countAlertsSince(data.alerts, alertsSince);
    if (firing7d !== firing) firing7d[i] = countAlertsSince(data.alerts, alertsSince7d);
  }
  for (let i = 0; i < n; i++) {
    const agg = aggs[i]!;
    let weighted = 0;
    let totalWeight = 0;
    for (let d = 0, at = i * perCluster; d < perCluster; d++, at++) {
      const dim = dims[d]!;
      const aggregated = aggregatedValue(agg, dim.index, dim.how);
      if (aggregated === null) {
        status[at] = NO_DATA;
        continue;
      }
      // Scored as answered (two decimals, or its thresholds' finer ones): 89.996 shown as 90 is at a threshold of 90.
      const v = roundAt(aggregated, dim.places);
      const score = dimensionScore(dim.rule, v);
      value[at] = v;
      raw[at] = score;
      status[at] = dimensionStatusCode(dim.rule, v);
      weighted += score * dim.rule.weight;
      totalWeight += dim.rule.weight;
    }
    // No data at all: nothing to hold against the cluster, and the reasons say so.
    const metrics = totalWeight > 0 ? clamp(weighted / totalWeight) : 100;
    const alertScore = alertsScore(rules.alert_bands, firing[i]!);
    const unified = unifiedScore(metrics, alertScore, rules.weights);
    const adjusted = round1(clamp(100 - (100 - unified) * multiplier[i]!));
    metricsScore[i] = round1(metrics);
    alerts[i] = round1(alertScore);
    overall[i] = round1(unified);
    tierAdjusted[i] = adjusted;
    classification[i] = classCode(adjusted, rules.classification);
    stale[i] = isStale(agg.lastMetricAt, rules.stale_after_minutes, nowMs, parsedTimes) ? 1 : 0;
  }
  const order = worstFirstOrder(tierAdjusted, names);
  return {
    fleet,
    aggregates: aggs,
    rules,
    compiled,
    now: nowMs,
    names,
    dimensions: perCluster,
    value,
    raw,
    status,
    metricsScore,
    alertsScore: alerts,
    overall,
    tierAdjusted,
    classification,
    firing,
    firing7d,
    stale,
    order,
  };
}

/** Highest score key of worstFirstOrder's buckets: a score of one decimal in 0..100, times 10. */
const SCORE_KEYS = 1000;

/**
 * Indexes worst first: ascending `groups` when given (small integers, such as a risk level's
 * rank), then ascending `scores`, ties by name (`compareNames`, code-point order unless
 * given), then index (where a stable sort leaves them). Scores as answered (one decimal,
 * 0..100) are first put in their bucket in one counting pass, so only ties are sorted by
 * comparing names; any other scores are sorted by comparison. Names already in order (a
 * refresh's fleet: listClusters answers in name order) need no tie sorted at all: the
 * counting pass keeps index order within a bucket, which is then name order.
 */
export function worstFirstOrder(
  scores: Float64Array,
  names: readonly string[],
  compareNames: (a: string, b: string) => number = byName,
  groups?: Uint8Array,
): Uint32Array {
  const n = scores.length;
  const order = new Uint32Array(n);
  const byNameThenIndex = (a: number, b: number) => compareNames(names[a]!, names[b]!) || a - b;
  let groupCount = 1;
  if (groups) for (let i = 0; i < n; i++) if (groups[i]! >= groupCount) groupCount = groups[i]! + 1;
  const keys = new Uint32Array(n);
  // starts[k + 1] counts the clusters of key k, then starts[k] becomes where bucket k begins.
  const starts = new Uint32Array(groupCount * (SCORE_KEYS + 1) + 1);
  for (let i = 0; i < n; i++) {
    const key = Math.round(scores[i]! * 10);
    if (!(key >= 0 && key <= SCORE_KEYS && key / 10 === scores[i])) {
      for (let j = 0; j < n; j++) order[j] = j;
      return order.sort((a, b) => (groups ? groups[a]! - groups[b]! : 0) || scores[a]! - scores[b]! || byNameThenIndex(a, b));
    }
    keys[i] = (groups ? groups[i]! * (SCORE_KEYS + 1) : 0) + key;
    starts[keys[i]! + 1]!++;
  }
  for (let k = 1; k < starts.length; k++) starts[k]! += starts[k - 1]!;
  const next = starts.slice(0, starts.length - 1);
  for (let i = 0; i < n; i++) order[next[keys[i]!]!++] = i;
  if (inOrder(names, compareNames)) return order;
  for (let k = 0; k + 1 < starts.length; k++) if (starts[k + 1]! - starts[k]! > 1) order.subarray(starts[k], starts[k + 1]).sort(byNameThenIndex);
  return order;
}

/** Whether `names` are in `compare`'s order as they stand: one compare per name, and the first one out of order ends it. */
function inOrder(names: readonly string[], compare: (a: string, b: string) => number): boolean {
  for (let i = 1; i < names.length; i++) if (compare(names[i - 1]!, names[i]!) > 0) return false;
  return true;
}

/** Worst first: ascending score, ties by cluster name. */
export function worstFirst<T extends { cluster_name: string }>(items: T[], score: (t: T) => number): T[] {
  const order = worstFirstOrder(
    Float64Array.from(items, score),
    items.map((t) => t.cluster_name),
  );
  return Array.from(order, (i) => items[i]!);
}

/** Cluster i's dimension scores from the columns: those with data, in the rules' order. */
function dimensionScoresAt(columns: ScoreColumns, i: number): DimensionScore[] {
  const dims = columns.compiled.dimensions;
  const scores: DimensionScore[] = [];
  for (let d = 0, at = i * columns.dimensions; d < dims.length; d++, at++) {
    const code = columns.status[at]!;
    if (code === NO_DATA) continue;
    const { rule } = dims[d]!;
    scores.push({
      name: rule.display_name,
      metric_key: rule.metric_key,
      score: round1(columns.raw[at]!),
      value: columns.value[at]!, // rounded as judged
      weight: rule.weight,
      status: DIMENSION_STATUSES[code]!,
    });
  }
  return scores;
}

// The off-green dimensions of the cluster whose reasons are being built (reasonsAt), reused.
const offGreen: number[] = [];

/**
 * Cluster i's risk reasons and suggested actions, appended to `reasons` and `actions`: its
 * staleness first (its score stands on data that stopped arriving), then the dimensions off
 * green worst first (raw score, then heavier weight, then name), then those without data;
 * actions once each, in the reasons' order.
 */
export function reasonsAt(columns: ScoreColumns, i: number, reasons: string[], actions: string[]): void {
  const dims = columns.compiled.dimensions;
  const base = i * columns.dimensions;
  const { raw, status, value } = columns;
  if (columns.stale[i] === 1) reasons.push(staleReason(columns.aggregates[i]!.lastMetricAt, columns.rules.lookback_days));
  offGreen.length = 0;
  for (let d = 0; d < dims.length; d++) {
    const code = status[base + d]!;
    if (code === NO_DATA || code === 0) continue;
    // Inserted into the worst-first order (a handful of dimensions; stable like the sort it replaces).
    let at = offGreen.length;
    offGreen.push(d);
    for (; at > 0 && worseDimension(dims, raw, base, d, offGreen[at - 1]!) < 0; at--) offGreen[at] = offGreen[at - 1]!;
    offGreen[at] = d;
  }
  for (let k = 0; k < offGreen.length; k++) {
    const d = offGreen[k]!;
    const dim = dims[d]!;
    reasons.push(dim.reasonAt + String(value[base + d]!) + dim.reasonThreshold[status[base + d]!]!);
    if (!actions.includes(dim.rule.action)) actions.push(dim.rule.action);
  }
  for (let d = 0; d < dims.length; d++) if (status[base + d] === NO_DATA) reasons.push(dims[d]!.missing);
}

/** Negative when dimension p is worse than q: lower raw score, then heavier weight, then name. */
function worseDimension(dims: readonly CompiledDimension[], raw: Float64Array, base: number, p: number, q: number): number {
  const a = dims[p]!.rule;
  const b = dims[q]!.rule;
  return raw[base + p]! - raw[base + q]! || b.weight - a.weight || byName(a.display_name, b.display_name);
}

/**
 * "Disk Usage (32)": the lowest-scoring dimension (ties: heavier weight, then
 * name), also when all are at 100 (spec: "dimension name and score"); "None"
 * only for a cluster with no dimension at all.
 */
export function topRisk(scores: readonly Pick<DimensionScore, 'name' | 'score' | 'weight'>[]): string {
  let worst: Pick<DimensionScore, 'name' | 'score' | 'weight'> | undefined;
  for (const d of scores) {
    if (!worst || d.score < worst.score || (d.score === worst.score && (d.weight > worst.weight || (d.weight === worst.weight && d.name < worst.name))))
      worst = d;
  }
  return worst ? `${worst.name} (${Math.round(worst.score)})` : 'None';
}

/** A fleet metric of cluster i (its place in FLEET_METRIC_KEYS), rounded like its dimension's value; null without data. */
function fleetMetricAt(columns: ScoreColumns, i: number, metric: number): number | null {
  const d = columns.compiled.fleetMetricDimension[metric]!;
  if (d >= 0) {
    const at = i * columns.dimensions + d;
    return columns.status[at] === NO_DATA ? null : columns.value[at]!;
  }
  const v = aggregatedValue(columns.aggregates[i]!, METRIC_INDEX[FLEET_METRIC_KEYS[metric]!], HOW.last);
  return v === null ? null : round2(v);
}

/**
 * A whole-number headline metric. A rule may sum one over its lookback past 2^53 (each sample is
 * within ±1e15): the answer then saturates at the largest safe integer, which the contract's
 * integer field and JSON readers keep exact, rather than carry an integer no reader can trust.
 */
const integer = (v: number | null) => (v === null ? null : Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.round(v))));

function fleetMetricsAt(columns: ScoreColumns, i: number, nodeCount: number): FleetMetrics {
  return {
    compaction_score: fleetMetricAt(columns, i, 0),
    disk_used_pct: fleetMetricAt(columns, i, 1),
    query_errors_7d: integer(fleetMetricAt(columns, i, 2)),
    query_error_pct: fleetMetricAt(columns, i, 3),
    qps: fleetMetricAt(columns, i, 4),
    node_count: integer(fleetMetricAt(columns, i, 5)) ?? nodeCount,
  };
}

/** Cluster i's unified score, built from the columns. */
function clusterScoreAt(columns: ScoreColumns, i: number): FleetClusterScore {
  const { cluster } = columns.fleet[i]!;
  const { rules } = columns;
  const scores = dimensionScoresAt(columns, i);
  const reasons: string[] = [];
  const actions: string[] = [];
  reasonsAt(columns, i, reasons, actions);
  const firing = columns.firing[i]!;
  if (firing > 0) reasons.push(`${firing} alert${firing === 1 ? '' : 's'} fired in the last ${rules.lookback_days} days`);
  return {
    cluster_id: cluster.cluster_id,
    cluster_name: cluster.cluster_name,
    customer_name: cluster.customer_name,
    account_id: cluster.account_id,
    customer_tier: cluster.customer_tier,
    overall_score: columns.overall[i]!,
    metrics_score: columns.metricsScore[i]!,
    alerts_score: columns.alertsScore[i]!,
    tier_adjusted_score: columns.tierAdjusted[i]!,
    classification: CLASSIFICATIONS[columns.classification[i]!]!,
    top_risk: topRisk(scores),
    cluster_type: cluster.cluster_type,
    region: cluster.region,
    dimension_scores: scores,
    risk_reasons: reasons,
    suggested_actions: actions,
    firing_alert_count_7d: columns.firing7d[i]!,
    metrics: fleetMetricsAt(columns, i, cluster.node_count),
    last_metric_at: columns.aggregates[i]!.lastMetricAt,
    metrics_stale: columns.stale[i] === 1,
  };
}

/**
 * Each cluster's place in `order`: answers are built in fleet order (each cluster's inventory,
 * aggregates and columns read in the order they lie in memory) and stored at their place.
 */
export function placesOf(order: Uint32Array): Uint32Array {
  const places = new Uint32Array(order.length);
  for (let k = 0; k < order.length; k++) places[order[k]!] = k;
  return places;
}

/** The answers of /api/fleet/scores from the columns: one object per cluster, worst first. */
export function fleetScoresFrom(columns: ScoreColumns): FleetClusterScore[] {
  const places = placesOf(columns.order);
  const scores = new Array<FleetClusterScore>(places.length);
  for (let i = 0; i < places.length; i++) scores[places[i]!] = clusterScoreAt(columns, i);
  return scores;
}

/**
 * `aggregates`: the cluster's aggregates over the rules' lookback (aggregateFleet), so the
 * views computed together fold the rollups once; without them (or for another lookback) they are folded here.
 */
export function scoreCluster(data: ClusterData, rules: ScoringRules, now: Date, aggregates?: ClusterAggregates): FleetClusterScore {
  return clusterScoreAt(scoreColumns([data], rules, now, aggregates === undefined ? undefined : [aggregates]), 0);
}

/** `aggregates`: aggregateFleet(fleet, …) over the rules' lookback, in fleet order; folded here when not given. Worst first. */
export function scoreFleet(fleet: readonly ClusterData[], rules: ScoringRules, now: Date, aggregates?: readonly ClusterAggregates[]): FleetClusterScore[] {
  return fleetScoresFrom(scoreColumns(fleet, rules, now, aggregates));
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
