// Response schemas of the dashboard groups, field for field from spec §2.
// They document the API (OpenAPI) and the e2e tests check every answer
// against them. What the scoring engine computes is defined once, in
// shared/scoring/schemas.ts (the engine's result types are inferred from it);
// here it is wrapped in each route's answer with `source` and `generated_at`.
import * as z from '../zod.js';
import {
  BreakingPoints,
  CriticalClusters,
  EnrichmentItem,
  FleetClusterScore,
  FleetKpis,
  HealthKpis,
  HealthScore,
  LiveStamp,
  RiskRulesTable,
  RiskSnapshot,
  RiskSummary,
  UnifiedStamp,
  Upgrades,
  Usage,
} from '../scoring/schemas.js';

export { FleetClusterScore, FleetKpis, FleetMetrics, HealthScore, RiskSnapshot, RuleImpact } from '../scoring/schemas.js';

const Num = z.number();
const Int = z.int();
const Count = z.count();

export const FleetScoresResponse = z.lazy(() => z.object({ scores: z.array(FleetClusterScore), ...UnifiedStamp }));
export const FleetKpisResponse = z.lazy(() => z.object({ kpis: FleetKpis, ...UnifiedStamp }));
export const FleetCriticalResponse = z.lazy(() => z.object({ clusters: z.array(FleetClusterScore), total: Count, ...UnifiedStamp }));
export const FleetRulesResponse = z.lazy(() =>
  z.object({
    lookback_days: Int,
    weights: z.object({ metrics: Num, alerts: Num }),
    tier_multipliers: z.record(z.string(), Num),
    alert_bands: z.array(z.object({ max_alerts: z.nullable(z.int()), score: Num })),
    classification: z.object({ healthy: Num, warning: Num }),
    ai_trigger: z.looseObject({}),
    /** Beyond the contract (issue 20 §4): a cluster whose newest sample is older than this is flagged stale. */
    stale_after_minutes: Int,
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
  }),
);
/**
 * Refresh and recompute routes (issue 21 §2): the recompute worker does the work; a route answers its
 * contract's 200 when the run finishes within REFRESH_WAIT_SECONDS, else this 202, and
 * GET <route>/{refresh_id} follows the run (202 while running, the same 200 when done, 503 when it failed).
 */
export const RefreshRunning = z.object({ status: z.literal('running'), refresh_id: z.string(), message: z.string() });
export const RefreshIdParams = z.object({ refresh_id: z.string().check(z.minLength(1), z.maxLength(128)) });

export const RefreshResponse = z.lazy(() => z.object({ status: z.literal('ok'), clusters_scored: Count, critical: Count, warning: Count }));

export const HealthScoresResponse = z.lazy(() => z.object({ scores: z.array(HealthScore), ...LiveStamp }));
export const HealthRefreshResponse = z.lazy(() => z.extend(z.unlazy(HealthScoresResponse), { refreshed: z.literal(true) }));
export const HealthKpisResponse = z.lazy(() => z.object({ kpis: HealthKpis, ...LiveStamp }));
export const EnrichmentResponse = z.lazy(() => z.object({ clusters: z.array(EnrichmentItem), ...LiveStamp }));

export const RiskSnapshotsResponse = z.lazy(() => z.object({ clusters: z.array(RiskSnapshot), summary: RiskSummary, ...LiveStamp }));
export const RiskRulesTableResponse = RiskRulesTable;

export const BreakingResponse = z.lazy(() => z.extend(z.unlazy(BreakingPoints), LiveStamp));
export const UsageResponse = z.lazy(() => z.extend(z.unlazy(Usage), LiveStamp));
export const UpgradesResponse = z.lazy(() => z.extend(z.unlazy(Upgrades), LiveStamp));

export const CriticalClustersResponse = CriticalClusters;

export const RecomputeResponse = z.lazy(() => z.object({ status: z.literal('ok'), cluster_count: Count }));
export const RecomputeRiskResponse = z.lazy(() => z.extend(z.unlazy(RecomputeResponse), { critical: Count, warning: Count }));
