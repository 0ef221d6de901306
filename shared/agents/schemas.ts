// The one definition of an investigation and an agent task as the API answers
// them (spec §2 Investigation, Agent task). The route table wraps them in its
// answers; the repository's records (shared/db/investigations.ts) are their
// inferred types, the task's with the worker's bookkeeping added.
import * as z from '../zod.js';

const Int = z.int();
const Count = z.count();

export const InvestigationSeverity = z.enum(['critical', 'warning', 'info']);
export type InvestigationSeverity = z.infer<typeof InvestigationSeverity>;

/** An investigation as lists show it: all but the full report. */
export const InvestigationSummarySchema = z.lazy(() =>
  z.object({
    investigation_id: z.string(),
    task_id: z.string(),
    cluster_id: z.string(),
    cluster_name: z.string(),
    customer_name: z.string(),
    severity: InvestigationSeverity,
    confidence: z.number().check(z.gte(0), z.lte(1)),
    root_cause: z.string(),
    /** Markdown list. */
    recommended_actions: z.string(),
    model: z.string(),
    input_tokens: Count,
    output_tokens: Count,
    total_tokens: Count,
    cost_usd: z.number(),
    duration_seconds: z.number(),
    created_at: z.string(),
  }),
);
export type InvestigationSummary = z.infer<typeof InvestigationSummarySchema>;

/** `full_report` is Markdown. */
export const InvestigationSchema = z.lazy(() => z.extend(z.unlazy(InvestigationSummarySchema), { full_report: z.string() }));
export type Investigation = z.infer<typeof InvestigationSchema>;

/** An open agent task (pending or running) as the pending-tasks list shows it. */
export const AgentTaskSchema = z.lazy(() =>
  z.object({
    task_id: z.string(),
    cluster_id: z.string(),
    cluster_name: z.string(),
    customer_name: z.string(),
    customer_tier: z.string(),
    trigger_reason: z.string(),
    /** Higher is more urgent (0..999). */
    priority: Int,
    status: z.enum(['pending', 'running']),
    created_at: z.string(),
    attempts: Count,
    last_error: z.nullable(z.string()),
    claimed_at: z.nullable(z.string()),
  }),
);
export type AgentTaskView = z.infer<typeof AgentTaskSchema>;
