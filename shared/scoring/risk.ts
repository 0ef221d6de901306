// Risk snapshots from the risk rules: each rule's metric with its status, the
// cluster's risk level (its worst metric), signals and actions.
import type * as z from 'zod';
import type { RiskRule, RiskRuleSet } from '../rules/schemas.js';
import { aggregate, lookbackStart, round2, type ClusterData } from './inputs.js';
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
 * `overallScore`: the cluster's unified overall score (from the health rules).
 * `staleReason`: the unified score's staleness reason when its metrics are
 * stale (the health rules set the threshold); it becomes the first risk signal.
 * Without it the snapshot is not flagged (the impact preview compares levels only).
 */
export function riskSnapshot(data: ClusterData, rules: RiskRuleSet, overallScore: number, now: Date, staleReason?: string): RiskSnapshot {
  const from = lookbackStart(rules.lookback_days, now);
  const metrics: RiskSnapshot['metrics'] = {};
  const hits: { rule: RiskRule; value: number; status: MetricStatus }[] = [];
  for (const rule of rules.rules) {
    const value = aggregate(data.rollups, rule.metric_key, rule.aggregation, from);
    if (value === null) continue;
    const status = metricStatus(rule, value);
    metrics[rule.metric_key] = { value: round2(value), status };
    if (status !== 'healthy') hits.push({ rule, value, status });
  }
  hits.sort((a, b) => RANK[a.status] - RANK[b.status] || a.rule.metric_key.localeCompare(b.rule.metric_key));
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
        return `${rule.metric_key} ${rule.aggregation} ${round2(value)} ${rule.inverted ? '≤' : '≥'} ${status} ${threshold}`;
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

/** Worst level first, then lower overall score, then name. */
export function sortSnapshots(snapshots: RiskSnapshot[]): RiskSnapshot[] {
  const rank = { Critical: 0, Warning: 1, Healthy: 2 } as const;
  return [...snapshots].sort(
    (a, b) => rank[a.risk_level] - rank[b.risk_level] || a.overall_score - b.overall_score || a.cluster_name.localeCompare(b.cluster_name),
  );
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
