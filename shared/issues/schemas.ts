// The one definition of a rule issue as the API answers it (spec §2 Issue;
// DESIGN §7). The route table wraps it in its answers; the repository's record
// (shared/db/issues.ts) and the grouping's output (grouping.ts) are derived
// from its inferred type. Imports only zod and the rules' schemas, so the
// repository can use it without loading the route table.
import * as z from '../zod.js';
import { Severity } from '../rules/schemas.js';

export const IssueStatus = z.enum(['Ongoing', 'Resolved']);
export type IssueStatus = z.infer<typeof IssueStatus>;

export const IssueSchema = z.lazy(() =>
  z.object({
    issue_id: z.string(),
    issue_name: z.string(),
    severity: Severity,
    status: IssueStatus,
    cluster_id: z.string(),
    cluster_name: z.string(),
    customer_name: z.string(),
    alert_count: z.count(),
    alert_names: z.array(z.string()),
    first_seen: z.string(),
    last_seen: z.string(),
    resolved_at: z.nullable(z.string()),
    duration_minutes: z.int(),
    triage_status: z.string(),
    disposition_status: z.string(),
    assignee: z.string(),
    notes: z.string(),
    ticket_key: z.string(),
    ticket_url: z.string(),
    /**
     * Beyond the contract: when a create-ticket got no definite answer from the tracker (a timeout, a 5xx), so a
     * ticket labelled fleet-health-<issue_id> may exist. Until a ticket is linked, creating one needs `again=true`.
     */
    ticket_unconfirmed_at: z.optional(z.string()),
    updated_at: z.string(),
    updated_by: z.string(),
  }),
);
/** An issue as the API shows it. */
export type IssueView = z.infer<typeof IssueSchema>;

/** The fields only triage writes (PATCH, create-ticket). */
export const TRIAGE_FIELDS = ['triage_status', 'disposition_status', 'assignee', 'notes', 'ticket_key', 'ticket_url'] as const;
export type TriageFields = Pick<IssueView, (typeof TRIAGE_FIELDS)[number]>;
