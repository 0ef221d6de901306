// Critical clusters (spec §4): the most severe Warning/Critical clusters with
// their alerts, ranked by severity_score = reasons × 10 + alerts in the window
// + health_penalty, where health_penalty = max(0, classification.healthy − overall).
import type * as z from '../zod.js';
import type { ScoringRules } from '../rules/schemas.js';
import type { DimensionScore, FleetClusterScore } from './fleet-score.js';
import { alertsInLookback, byLocale, localeOrderOf, round1, type ClusterData } from './inputs.js';
import type { RiskSnapshot } from './risk.js';
import { CRITICAL_LIMIT } from './schemas.js';
import type * as contract from './schemas.js';
import type { Narrowed } from './schemas.js';

export { CRITICAL_LIMIT } from './schemas.js';
export const CRITICAL_ALERT_DAYS = 14;

type AlertGroup = z.infer<typeof contract.CriticalCluster>['alerts'][number];

// The answer's shape is the zod schema in schemas.ts; these are inferred from it.
/** The contract leaves a health dimension open; the engine answers these four fields of the cluster's dimension score. */
export type CriticalCluster = Narrowed<
  z.infer<typeof contract.CriticalCluster>,
  {
    health: Narrowed<z.infer<typeof contract.CriticalCluster>['health'], { dimensions: Pick<DimensionScore, 'name' | 'score' | 'value' | 'status'>[] }>;
  }
>;

/** The answer without `generated_at`, which the route adds (fleet-view.ts). */
export type CriticalClusters = Narrowed<Omit<z.infer<typeof contract.CriticalClusters>, 'generated_at'>, { clusters: CriticalCluster[] }>;

export function criticalClusters(
  fleet: readonly ClusterData[],
  snapshots: readonly RiskSnapshot[],
  scores: readonly FleetClusterScore[],
  rules: ScoringRules,
  now: Date,
): CriticalClusters {
  const data = new Map(fleet.map((d) => [d.cluster.cluster_id, d]));
  const score = new Map(scores.map((s) => [s.cluster_id, s]));
  const atRisk = snapshots.filter((s) => s.risk_level !== 'Healthy' && data.has(s.cluster_id) && score.has(s.cluster_id));
  const ranked = atRisk.map((snapshot): CriticalCluster => {
    const { cluster, alerts } = data.get(snapshot.cluster_id)!;
    const health = score.get(snapshot.cluster_id)!;
    const recent = alertsInLookback(alerts, CRITICAL_ALERT_DAYS, now);
    const byName = new Map<string, AlertGroup>();
    for (const a of recent) {
      const g = byName.get(a.alert_name) ?? { alert_name: a.alert_name, count: 0, first: a.starts_at, last: a.starts_at };
      g.count += 1;
      if (a.starts_at < g.first) g.first = a.starts_at;
      if (a.starts_at > g.last) g.last = a.starts_at;
      byName.set(a.alert_name, g);
    }
    const penalty = Math.max(0, rules.classification.healthy - health.overall_score);
    return {
      cluster_id: cluster.cluster_id,
      cluster_name: cluster.cluster_name,
      account_name: cluster.account_name,
      account_id: cluster.account_id,
      region: cluster.region,
      engine_version: cluster.engine_version,
      email: cluster.email,
      risk_level: snapshot.risk_level,
      risk_reasons: snapshot.risk_signals,
      suggested_actions: snapshot.suggested_actions,
      severity_score: round1(snapshot.risk_signals.length * 10 + recent.length + penalty),
      metrics: health.metrics,
      health: {
        overall_score: health.overall_score,
        classification: health.classification,
        dimensions: health.dimension_scores.map(({ name, score: s, value, status }) => ({ name, score: s, value, status })),
      },
      alerts: [...byName.values()].sort((a, b) => b.count - a.count || byLocale(a.alert_name, b.alert_name)),
      alert_total: recent.length,
    };
  });
  // localeCompare's order of names, with a plain compare when the names allow it (inputs.ts).
  const nameOrder = localeOrderOf(ranked.map((c) => c.cluster_name));
  ranked.sort((a, b) => b.severity_score - a.severity_score || nameOrder(a.cluster_name, b.cluster_name));
  return {
    clusters: ranked.slice(0, CRITICAL_LIMIT),
    total_critical: atRisk.filter((s) => s.risk_level === 'Critical').length,
    total_warning: atRisk.filter((s) => s.risk_level === 'Warning').length,
  };
}
