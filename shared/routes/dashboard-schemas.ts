// Response schemas of the dashboard groups, field for field from spec §2.
// They document the API (OpenAPI) and the e2e tests check every answer
// against them. Numbers that can be missing for lack of data are nullable.
import * as z from 'zod';

// Spec §1: `source` is `unified` for the fleet group, `live` for data computed from live data.
const Unified = { source: z.literal('unified'), generated_at: z.iso.datetime() };
const Stamp = { source: z.literal('live'), generated_at: z.iso.datetime() };
const Classification = z.enum(['Healthy', 'Warning', 'Critical']);
const Num = z.number();
const Int = z.number().int();
const NullableNum = z.number().nullable();

export const FleetMetrics = z.object({
  compaction_score: NullableNum,
  disk_used_pct: NullableNum,
  query_errors_7d: z.number().int().nullable(),
  query_error_pct: NullableNum,
  qps: NullableNum,
  node_count: z.number().int().nullable(),
});

export const FleetClusterScore = z.object({
  cluster_id: z.uuid(),
  cluster_name: z.string(),
  customer_name: z.string(),
  account_id: z.string(),
  customer_tier: z.string(),
  overall_score: Num,
  metrics_score: Num,
  alerts_score: Num,
  tier_adjusted_score: Num,
  classification: Classification,
  top_risk: z.string(),
  cluster_type: z.string(),
  region: z.string(),
  // metric_key is beyond the contract's fields: the metric the dimension scores (links a dimension to its series).
  dimension_scores: z.array(z.object({ name: z.string(), metric_key: z.string(), score: Num, value: Num, weight: Num, status: z.string() })),
  risk_reasons: z.array(z.string()),
  suggested_actions: z.array(z.string()),
  firing_alert_count_7d: Int,
  metrics: FleetMetrics,
});

export const FleetKpis = z.object({
  total_clusters: Int,
  healthy_count: Int,
  warning_count: Int,
  critical_count: Int,
  tier_s_at_risk: Int,
  avg_score: Num,
  avg_metrics_score: Num,
  avg_alerts_score: Num,
});

export const FleetScoresResponse = z.object({ scores: z.array(FleetClusterScore), ...Unified });
export const FleetKpisResponse = z.object({ kpis: FleetKpis, ...Unified });
export const FleetCriticalResponse = z.object({ clusters: z.array(FleetClusterScore), total: Int, ...Unified });
export const FleetRulesResponse = z.object({
  lookback_days: Int,
  weights: z.object({ metrics: Num, alerts: Num }),
  tier_multipliers: z.record(z.string(), Num),
  alert_bands: z.array(z.object({ max_alerts: z.number().int().nullable(), score: Num })),
  classification: z.object({ healthy: Num, warning: Num }),
  ai_trigger: z.object({}).loose(),
  dimensions: z.array(
    z.object({
      metric_key: z.string(),
      display_name: z.string(),
      category: z.string(),
      weight: Num,
      green: Num,
      yellow: Num,
      red: Num,
      inverted: z.boolean(),
      aggregation: z.string(),
      action: z.string(),
    }),
  ),
});
export const RefreshResponse = z.object({ status: z.literal('ok'), clusters_scored: Int, critical: Int, warning: Int });

export const HealthScore = z.object({
  cluster_id: z.uuid(),
  cluster_name: z.string(),
  customer_name: z.string(),
  account_id: z.string(),
  overall_score: Num,
  classification: Classification,
  top_risk: z.string(),
  cluster_type: z.string(),
  region: z.string(),
  dimension_scores: z.array(z.object({ name: z.string(), score: Num, value: Num, weight: Num, description: z.string() })),
  risk_level: z.string(),
  risk_reasons: z.array(z.string()),
  suggested_actions: z.array(z.string()),
  risk_metrics: z.record(z.string(), NullableNum),
});
export const HealthScoresResponse = z.object({ scores: z.array(HealthScore), ...Stamp });
export const HealthRefreshResponse = HealthScoresResponse.extend({ refreshed: z.literal(true) });
export const HealthKpisResponse = z.object({
  kpis: z.object({ total_clusters: Int, healthy_count: Int, warning_count: Int, critical_count: Int, avg_score: Num, avg_p99_latency: Num }),
  ...Stamp,
});
export const EnrichmentResponse = z.object({
  clusters: z.array(z.object({ cluster_id: z.uuid(), cluster_name: z.string(), cluster_type: z.string(), region_name: z.string() })),
  ...Stamp,
});

const MetricStatus = z.enum(['critical', 'warning', 'healthy']);
export const RiskSnapshot = z.object({
  cluster_id: z.uuid(),
  cluster_name: z.string(),
  customer_name: z.string(),
  risk_level: z.string(),
  overall_score: Num,
  risk_signals: z.array(z.string()),
  suggested_actions: z.array(z.string()),
  metrics: z.record(z.string(), z.object({ value: Num, status: MetricStatus })),
});
export const RiskSnapshotsResponse = z.object({
  clusters: z.array(RiskSnapshot),
  summary: z.object({ total: Int, critical: Int, warning: Int, healthy: Int }),
  ...Stamp,
});
export const RiskRulesTableResponse = z.object({
  lookback_days: Int,
  rules: z.array(
    z.object({ metric_key: z.string(), category: z.string(), warning: Num, critical: Num, inverted: z.boolean(), aggregation: z.string(), action: z.string() }),
  ),
});

export const BreakingResponse = z.object({
  thresholds: z.array(
    z.object({
      metric: z.string(),
      threshold: Num,
      unit: z.string(),
      count: Int,
      clusters: z.array(z.object({ cluster_name: z.string(), customer_name: z.string(), value: Num })),
    }),
  ),
  details: z.array(
    z.object({
      metric: z.string(),
      cluster_id: z.uuid(),
      cluster_name: z.string(),
      customer_name: z.string(),
      value: Num,
      threshold: Num,
      unit: z.string(),
      severity: z.string(),
    }),
  ),
  ...Stamp,
});
export const UsageResponse = z.object({
  health_distribution: z.object({ healthy: Int, warning: Int, critical: Int }),
  compaction_bars: z.array(z.object({ cluster_name: z.string(), value: Num, threshold: Num })),
  latency_trend: z.array(z.object({ cluster_name: z.string(), avg_latency: Num, max_latency: Num })),
  qps_bars: z.array(z.object({ cluster_name: z.string(), value: Num })),
  ...Stamp,
});
export const UpgradesResponse = z.object({
  clusters: z.array(
    z.object({
      cluster_id: z.uuid(),
      cluster_name: z.string(),
      customer_name: z.string(),
      cluster_type: z.string(),
      region: z.string(),
      engine_version: z.string(),
      resource_state: z.string(),
      node_count: Int,
    }),
  ),
  available_versions: z.array(z.string()),
  ...Stamp,
});

export const CriticalClustersResponse = z.object({
  clusters: z
    .array(
      z.object({
        cluster_id: z.uuid(),
        cluster_name: z.string(),
        account_name: z.string(),
        account_id: z.string(),
        region: z.string(),
        engine_version: z.string(),
        email: z.string(),
        risk_level: z.string(),
        risk_reasons: z.array(z.string()),
        suggested_actions: z.array(z.string()),
        severity_score: Num,
        metrics: FleetMetrics,
        health: z.object({ overall_score: Num, classification: z.string(), dimensions: z.array(z.object({}).loose()) }),
        alerts: z.array(z.object({ alert_name: z.string(), count: Int, first: z.string(), last: z.string() })),
        alert_total: Int,
      }),
    )
    .max(15),
  generated_at: z.iso.datetime(),
  total_critical: Int,
  total_warning: Int,
});

export const RecomputeResponse = z.object({ status: z.literal('ok'), cluster_count: Int });
export const RecomputeRiskResponse = RecomputeResponse.extend({ critical: Int, warning: Int });
