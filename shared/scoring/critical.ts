// Critical clusters (spec §4): the most severe Warning/Critical clusters with
// their alerts, ranked by severity_score = reasons × 10 + alerts in the window
// + health_penalty, where health_penalty = max(0, classification.healthy − overall).
import type { ScoringRules } from '../rules/schemas.js';
import type { FleetClusterScore, FleetMetrics } from './fleet-score.js';
import { alertsInLookback, round1, type ClusterData } from './inputs.js';
import type { RiskSnapshot } from './risk.js';

export const CRITICAL_LIMIT = 15;
export const CRITICAL_ALERT_DAYS = 14;

export interface CriticalCluster {
  cluster_id: string;
  cluster_name: string;
  account_name: string;
  account_id: string;
  region: string;
  engine_version: string;
  email: string;
  risk_level: string;
  risk_reasons: string[];
  suggested_actions: string[];
  severity_score: number;
  metrics: FleetMetrics;
  health: { overall_score: number; classification: string; dimensions: { name: string; score: number; value: number; status: string }[] };
  alerts: { alert_name: string; count: number; first: string; last: string }[];
  alert_total: number;
}

export interface CriticalClusters {
  clusters: CriticalCluster[];
  total_critical: number;
  total_warning: number;
}

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
  const ranked = atRisk.map((snapshot) => {
    const { cluster, alerts } = data.get(snapshot.cluster_id)!;
    const health = score.get(snapshot.cluster_id)!;
    const recent = alertsInLookback(alerts, CRITICAL_ALERT_DAYS, now);
    const byName = new Map<string, { alert_name: string; count: number; first: string; last: string }>();
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
      alerts: [...byName.values()].sort((a, b) => b.count - a.count || a.alert_name.localeCompare(b.alert_name)),
      alert_total: recent.length,
    };
  });
  ranked.sort((a, b) => b.severity_score - a.severity_score || a.cluster_name.localeCompare(b.cluster_name));
  return {
    clusters: ranked.slice(0, CRITICAL_LIMIT),
    total_critical: atRisk.filter((s) => s.risk_level === 'Critical').length,
    total_warning: atRisk.filter((s) => s.risk_level === 'Warning').length,
  };
}
