// The one definition of every answer the scoring engine computes (issue 17),
// field for field from spec §2. The engine's result types are `z.infer` of
// these, and the route table (shared/routes/dashboard-schemas.ts, settings.ts)
// wraps them in their answers, so a field changed here changes both, and a
// drift between them fails `npm run typecheck`. This module imports only zod:
// route declarations can load it without loading the engine.
// Numbers that can be missing for lack of data are nullable. Each object is
// built on first use (z.lazy): production reads none of them (answers are
// checked outside production only), and building them at import was ≈ 230
// zod schemas of every dashboard group's cold start (issue 21 §4).
import * as z from '../zod.js';

const Num = z.number();
const Int = z.int();
const Count = z.count();
const NullableNum = z.nullable(z.number());

/**
 * Staleness (issue 20 §4), beyond the contract's fields like `metric_key`: the
 * newest metric sample in the health rules' lookback (null: none), and whether
 * it is older than `stale_after_minutes` (or missing). A stale cluster is still
 * scored on the data there is; its first risk reason says since when it is silent.
 */
const Staleness = { last_metric_at: z.nullable(z.iso.datetime()), metrics_stale: z.boolean() };

/**
 * A contract type with some fields narrowed to what the engine guarantees
 * (`status: string` in the contract, one of four words in the engine). Every
 * narrowed field must exist in the contract and fit its type, or this does not compile.
 */
export type Narrowed<T, N extends { [K in keyof N]: K extends keyof T ? T[K] : never }> = Omit<T, keyof N> & N;

// Spec §1: `source` is `unified` for the fleet group, `live` for data computed from live data.
export const UnifiedStamp = { source: z.literal('unified'), generated_at: z.iso.datetime() };
export const LiveStamp = { source: z.literal('live'), generated_at: z.iso.datetime() };

/** Classification and risk level: the same three names (the impact preview compares either). */
export const Classification = z.enum(['Healthy', 'Warning', 'Critical']);
export const MetricStatus = z.enum(['critical', 'warning', 'healthy']);

// ---- fleet (unified score) ----

// metric_key is beyond the contract's fields: the metric the dimension scores (links a dimension to its series).
export const DimensionScore = z.lazy(() => z.object({ name: z.string(), metric_key: z.string(), score: Num, value: Num, weight: Num, status: z.string() }));

export const FleetMetrics = z.lazy(() =>
  z.object({
    compaction_score: NullableNum,
    disk_used_pct: NullableNum,
    query_errors_7d: z.nullable(Count),
    query_error_pct: NullableNum,
    qps: NullableNum,
    node_count: z.nullable(Count),
  }),
);

export const FleetClusterScore = z.lazy(() =>
  z.object({
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
    dimension_scores: z.array(DimensionScore),
    risk_reasons: z.array(z.string()),
    suggested_actions: z.array(z.string()),
    firing_alert_count_7d: Count,
    metrics: FleetMetrics,
    ...Staleness,
  }),
);

export const FleetKpis = z.lazy(() =>
  z.object({
    total_clusters: Count,
    healthy_count: Count,
    warning_count: Count,
    critical_count: Count,
    tier_s_at_risk: Count,
    avg_score: Num,
    avg_metrics_score: Num,
    avg_alerts_score: Num,
  }),
);

// ---- health (metrics only) ----

export const HealthDimension = z.lazy(() => z.object({ name: z.string(), score: Num, value: Num, weight: Num, description: z.string() }));

export const HealthScore = z.lazy(() =>
  z.object({
    cluster_id: z.uuid(),
    cluster_name: z.string(),
    customer_name: z.string(),
    account_id: z.string(),
    overall_score: Num,
    classification: Classification,
    top_risk: z.string(),
    cluster_type: z.string(),
    region: z.string(),
    dimension_scores: z.array(HealthDimension),
    risk_level: z.string(),
    risk_reasons: z.array(z.string()),
    suggested_actions: z.array(z.string()),
    risk_metrics: z.record(z.string(), NullableNum),
    ...Staleness,
  }),
);

export const HealthKpis = z.lazy(() =>
  z.object({ total_clusters: Count, healthy_count: Count, warning_count: Count, critical_count: Count, avg_score: Num, avg_p99_latency: Num }),
);

export const EnrichmentItem = z.lazy(() => z.object({ cluster_id: z.uuid(), cluster_name: z.string(), cluster_type: z.string(), region_name: z.string() }));

// ---- risk ----

export const RiskSnapshot = z.lazy(() =>
  z.object({
    cluster_id: z.uuid(),
    cluster_name: z.string(),
    customer_name: z.string(),
    risk_level: z.string(),
    overall_score: Num,
    risk_signals: z.array(z.string()),
    suggested_actions: z.array(z.string()),
    metrics: z.record(z.string(), z.object({ value: Num, status: MetricStatus })),
    /** Beyond the contract, as the unified score's: when stale, the first risk signal says since when. */
    metrics_stale: z.boolean(),
  }),
);

export const RiskSummary = z.lazy(() => z.object({ total: Count, critical: Count, warning: Count, healthy: Count }));

export const RiskRuleRow = z.lazy(() =>
  z.object({
    metric_key: z.string(),
    category: z.string(),
    warning: Num,
    critical: Num,
    inverted: z.boolean(),
    aggregation: z.string(),
    action: z.string(),
  }),
);

export const RiskRulesTable = z.lazy(() => z.object({ lookback_days: Int, rules: z.array(RiskRuleRow) }));

// ---- analysis ----

export const BreakingPoints = z.lazy(() =>
  z.object({
    thresholds: z.array(
      z.object({
        metric: z.string(),
        threshold: Num,
        unit: z.string(),
        count: Count,
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
  }),
);

export const Usage = z.lazy(() =>
  z.object({
    health_distribution: z.object({ healthy: Count, warning: Count, critical: Count }),
    compaction_bars: z.array(z.object({ cluster_name: z.string(), value: Num, threshold: Num })),
    latency_trend: z.array(z.object({ cluster_name: z.string(), avg_latency: Num, max_latency: Num })),
    qps_bars: z.array(z.object({ cluster_name: z.string(), value: Num })),
  }),
);

export const Upgrades = z.lazy(() =>
  z.object({
    clusters: z.array(
      z.object({
        cluster_id: z.uuid(),
        cluster_name: z.string(),
        customer_name: z.string(),
        cluster_type: z.string(),
        region: z.string(),
        engine_version: z.string(),
        resource_state: z.string(),
        node_count: Count,
      }),
    ),
    /** Newest first, in semantic version order (a release before its pre-releases): the console keeps this order. */
    available_versions: z.array(z.string()),
  }),
);

// ---- critical clusters ----

/** At most this many clusters are answered. */
export const CRITICAL_LIMIT = 15;

export const CriticalCluster = z.lazy(() =>
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
    health: z.object({ overall_score: Num, classification: z.string(), dimensions: z.array(z.looseObject({})) }),
    alerts: z.array(z.object({ alert_name: z.string(), count: Count, first: z.string(), last: z.string() })),
    alert_total: Count,
  }),
);

/** The answer has no `source`; `generated_at` sits between the list and the totals. */
export const CriticalClusters = z.lazy(() =>
  z.object({
    clusters: z.array(CriticalCluster).check(z.maxLength(CRITICAL_LIMIT)),
    generated_at: z.iso.datetime(),
    total_critical: Count,
    total_warning: Count,
  }),
);

// ---- impact preview of a rule change (settings) ----

const ClassCounts = z.lazy(() => z.object({ Healthy: Count, Warning: Count, Critical: Count }));

export const ImpactChange = z.lazy(() =>
  z.object({
    cluster_id: z.string(),
    cluster_name: z.string(),
    customer_name: z.string(),
    from: Classification,
    to: Classification,
    direction: z.enum(['worse', 'better']),
    /** What moved, e.g. "tier-adjusted score 81.2 → 63.5", "tier-adjusted score 88.8, unchanged; the Healthy threshold 80 → 90", or the new worst risk signal. */
    detail: z.string(),
  }),
);

export const RuleImpact = z.lazy(() =>
  z.object({
    measure: z.enum(['classification', 'risk_level']),
    computed_at: z.string(),
    clusters_total: Count,
    changed_count: Count,
    before: ClassCounts,
    after: ClassCounts,
    /** Worse first, then better; by cluster name within each. */
    changes: z.array(ImpactChange),
  }),
);
