// Risk snapshots from the risk rules: each rule's metric with its status, the
// cluster's risk level (its worst metric), signals and actions.
import type * as z from '../zod.js';
import type { RiskRule, RiskRuleSet } from '../rules/schemas.js';
import { METRIC_KEYS } from '../fleet/records.js';
import { aggregatedValue, byLocale, HOW, judgedDecimals, localeOrderOf, METRIC_INDEX, roundAt, type ClusterAggregates, type ClusterData } from './inputs.js';
import { aggregatesFor, worstFirstOrder } from './fleet-score.js';
import type * as contract from './schemas.js';
import type { Narrowed } from './schemas.js';

// The answers' shapes are the zod schemas in schemas.ts; these are inferred from them.
export type MetricStatus = z.infer<typeof contract.MetricStatus>;
/** A cluster's risk level: the same three names as a classification. */
export type RiskLevel = z.infer<typeof contract.Classification>;

/** `risk_level` is a string in the contract; the engine answers one of the three levels. */
export type RiskSnapshot = Narrowed<z.infer<typeof contract.RiskSnapshot>, { risk_level: RiskLevel }>;

export type RiskSummary = z.infer<typeof contract.RiskSummary>;

export type RiskRuleRow = z.infer<typeof contract.RiskRuleRow>;

export type RiskRulesTable = z.infer<typeof contract.RiskRulesTable>;

export function metricStatus(rule: Pick<RiskRule, 'warning' | 'critical' | 'inverted'>, value: number): MetricStatus {
  const atOrBeyond = (threshold: number) => (rule.inverted ? value <= threshold : value >= threshold);
  if (atOrBeyond(rule.critical)) return 'critical';
  if (atOrBeyond(rule.warning)) return 'warning';
  return 'healthy';
}

const LEVEL: Record<MetricStatus, RiskLevel> = { critical: 'Critical', warning: 'Warning', healthy: 'Healthy' };
const RANK: Record<MetricStatus, number> = { critical: 0, warning: 1, healthy: 2 };

/**
 * Each metric key's place in localeCompare's order of the keys, by METRIC_INDEX: sorted once, compared as
 * numbers. On first use, not at import: sorting by locale makes the collator (inputs.ts), a cold-start cost.
 */
let keyOrder: number[] | undefined;
function keyOrderOf(): number[] {
  if (!keyOrder) {
    const order = new Array<number>(METRIC_KEYS.length);
    [...METRIC_KEYS].sort(byLocale).forEach((key, rank) => {
      order[METRIC_INDEX[key]] = rank;
    });
    keyOrder = order;
  }
  return keyOrder;
}

interface CompiledRule {
  rule: RiskRule;
  index: number;
  how: number;
  /** The decimals its value is judged and answered at (judgedDecimals of its thresholds). */
  places: number;
}

const compiledRules = new WeakMap<RiskRuleSet, CompiledRule[]>();

function rulesOf(rules: RiskRuleSet): CompiledRule[] {
  let compiled = compiledRules.get(rules);
  if (!compiled) {
    compiled = rules.rules.map((rule) => ({
      rule,
      index: METRIC_INDEX[rule.metric_key],
      how: HOW[rule.aggregation],
      places: judgedDecimals([rule.warning, rule.critical]),
    }));
    compiledRules.set(rules, compiled);
  }
  return compiled;
}

/**
 * `overallScore`: the cluster's unified overall score (from the health rules).
 * `staleReason`: the unified score's staleness reason when its metrics are
 * stale (the health rules set the threshold); it becomes the first risk signal.
 * Without it the snapshot is not flagged (the impact preview compares levels only).
 * `aggregates`: the cluster's aggregates over the risk rules' lookback (the unified
 * score's when the lookbacks are the same); folded here when not given.
 */
export function riskSnapshot(
  data: ClusterData,
  rules: RiskRuleSet,
  overallScore: number,
  now: Date,
  staleReason?: string,
  aggregates?: ClusterAggregates,
): RiskSnapshot {
  // Folded from the cluster's rollup columns when it has them: its rollup objects are built only when read.
  const agg = aggregatesFor(data, rules.lookback_days, now, aggregates);
  const metrics: RiskSnapshot['metrics'] = {};
  const hits: { rule: RiskRule; index: number; value: number; status: MetricStatus }[] = [];
  const compiled = rulesOf(rules);
  for (let i = 0; i < compiled.length; i++) {
    const { rule, index, how, places } = compiled[i]!;
    const aggregated = aggregatedValue(agg, index, how);
    if (aggregated === null) continue;
    // Judged as answered (two decimals, or its thresholds' finer ones): 89.996 shown as 90 is at a threshold of 90.
    const value = roundAt(aggregated, places);
    const status = metricStatus(rule, value);
    metrics[rule.metric_key] = { value, status };
    if (status !== 'healthy') hits.push({ rule, index, value, status });
  }
  if (hits.length > 1) {
    const order = keyOrderOf();
    hits.sort((a, b) => RANK[a.status] - RANK[b.status] || order[a.index]! - order[b.index]!);
  }
  const worst = hits[0]?.status ?? 'healthy';
  return {
    cluster_id: data.cluster.cluster_id,
    cluster_name: data.cluster.cluster_name,
    customer_name: data.cluster.customer_name,
    risk_level: LEVEL[worst],
    overall_score: overallScore,
    risk_signals: [
      ...(staleReason === undefined ? [] : [staleReason]),
      ...hits.map(({ rule, value, status }) => {
        const threshold = status === 'critical' ? rule.critical : rule.warning;
        return `${rule.metric_key} ${rule.aggregation} ${value} ${rule.inverted ? '<=' : '>='} ${status} ${threshold}`;
      }),
    ],
    suggested_actions: [...new Set(hits.map((h) => h.rule.action))],
    metrics,
    metrics_stale: staleReason !== undefined,
  };
}

export function riskSummary(snapshots: readonly RiskSnapshot[]): RiskSummary {
  const count = (l: RiskLevel) => snapshots.filter((s) => s.risk_level === l).length;
  return { total: snapshots.length, critical: count('Critical'), warning: count('Warning'), healthy: count('Healthy') };
}

const LEVEL_RANK: Record<RiskLevel, number> = { Critical: 0, Warning: 1, Healthy: 2 };

/** Worst level first, then lower overall score, then name (in localeCompare's order). */
export function sortSnapshots(snapshots: RiskSnapshot[]): RiskSnapshot[] {
  const n = snapshots.length;
  const names = new Array<string>(n);
  const levels = new Uint8Array(n);
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const s = snapshots[i]!;
    names[i] = s.cluster_name;
    levels[i] = LEVEL_RANK[s.risk_level];
    scores[i] = s.overall_score;
  }
  // Bucketed by level and score, names compared only within ties: localeCompare's order, with a plain compare when the names allow it (inputs.ts).
  const order = worstFirstOrder(scores, names, localeOrderOf(names), levels);
  return Array.from(order, (i) => snapshots[i]!);
}

export function rulesTable(rules: RiskRuleSet): RiskRulesTable {
  return {
    lookback_days: rules.lookback_days,
    rules: rules.rules.map(({ metric_key, category, warning, critical, inverted, aggregation, action }) => ({
      metric_key,
      category,
      warning,
      critical,
      inverted,
      aggregation,
      action,
    })),
  };
}
