// The one definition of a patrol report as the API answers it (spec §2 Patrol
// report; DESIGN §7 parsed fields). The route table wraps it in its answers;
// the repository's record (shared/db/patrol.ts) and the scan's parsed fields
// (scan.ts) are its inferred types.
import * as z from '../zod.js';

const Count = z.count();

export const ReportStatus = z.enum(['running', 'completed', 'failed']);
export type ReportStatus = z.infer<typeof ReportStatus>;

export const FleetSummarySchema = z.lazy(() => z.object({ total_clusters: Count, critical: Count, warning: Count, healthy: Count, headline: z.string() }));
export type FleetSummary = z.infer<typeof FleetSummarySchema>;

export const FlaggedClusterSchema = z.lazy(() =>
  z.object({
    cluster_id: z.string(),
    cluster_name: z.string(),
    customer_name: z.string(),
    severity: z.enum(['Critical', 'Warning']),
    reason: z.string(),
    recommended_action: z.string(),
  }),
);
export type FlaggedCluster = z.infer<typeof FlaggedClusterSchema>;

export const CustomerSummarySchema = z.lazy(() => z.object({ customer_name: z.string(), clusters: Count, flagged: Count, summary: z.string() }));
export type CustomerSummary = z.infer<typeof CustomerSummarySchema>;

/** A report as lists show it. */
export const PatrolReportSummarySchema = z.lazy(() =>
  z.object({
    report_id: z.string(),
    created_at: z.string(),
    report_type: z.string(),
    status: ReportStatus,
    fleet_narrative: z.string(),
    flagged_count: Count,
    model: z.string(),
    cost_usd: z.number(),
    total_tokens: Count,
    duration_seconds: z.number(),
    triggered_by: z.string(),
    error: z.nullable(z.string()),
  }),
);
export type PatrolReportSummary = z.infer<typeof PatrolReportSummarySchema>;

export const PatrolReportSchema = z.lazy(() =>
  z.extend(z.unlazy(PatrolReportSummarySchema), {
    input_tokens: Count,
    output_tokens: Count,
    tool_rounds: Count,
    finished_at: z.nullable(z.string()),
    fleet_summary_parsed: z.nullable(FleetSummarySchema),
    clusters_flagged_parsed: z.array(FlaggedClusterSchema),
    customer_summaries_parsed: z.array(CustomerSummarySchema),
  }),
);
/** A report, stored and answered alike. */
export type PatrolReport = z.infer<typeof PatrolReportSchema>;
