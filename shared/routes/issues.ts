import * as z from '../zod.js';
import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { USERNAME_MAX } from '../auth/username.js';
import { defineGroup } from '../http/route.js';
import { IssueSchema } from '../issues/schemas.js';
import { HttpLink, IfMatchHeader, IssueIdParams, IssueKpisQuery, IssueListQuery, Text, TicketKey, TimelineEntry } from './common.js';
import { LIST_VALIDATOR } from './validators.js';

export const IssuePatch = z.withSomeField(
  z.strictObject({
    triage_status: z.optional(z.shownLabel(64)),
    disposition_status: z.optional(z.shownLabel(64)),
    // A username, email or display name, resolved to an account's username (shared/issues/assignee.ts): as long as those may be.
    assignee: z.optional(Text(USERNAME_MAX)),
    notes: z.optional(Text(10_000)),
    ticket_key: z.optional(TicketKey()),
    // Shown as a link: http(s) only, never javascript: or data:.
    ticket_url: z.optional(z.union([z.literal(''), HttpLink()])),
  }),
);
export type IssuePatch = z.infer<typeof IssuePatch>;

// Answers (spec §2 Issue and §4 Issues; DESIGN §7 fixes the shapes the spec leaves open).
// The issue itself is defined once in shared/issues/schemas.ts (the repository's record derives from it).
export { IssueSchema };
const Source = { source: z.literal('live') }; // spec §1: data computed from live data
const ListAnswer = z.lazy(() =>
  z.object({
    issues: z.array(IssueSchema),
    total: z.count(),
    page: z.int(),
    page_size: z.int(),
    total_pages: z.count(),
    customers: z.array(z.string()),
    clusters: z.array(z.string()),
    ...Source,
  }),
);
const KpisAnswer = z.lazy(() =>
  z.object({
    total: z.count(),
    ongoing: z.count(),
    resolved: z.count(),
    unassigned: z.count(),
    avg_duration_minutes: z.number(),
    ...Source,
  }),
);
export const UsersAnswer = z.lazy(() =>
  z.object({ users: z.array(z.object({ username: z.string(), name: z.string(), email: z.string(), role: z.string() })) }),
);
/**
 * Beside an answer's `alerts` (newest first, bounded: shared/issues/README.md): how many there are
 * in all (a detail: the issue's `alert_count`; evidence: the cluster's of 7 days), and whether the list leaves some out.
 */
export const ShownAlerts = { alerts_total: z.count(), alerts_truncated: z.boolean() };
const DetailAnswer = z.lazy(() =>
  z.object({
    issue: IssueSchema,
    alerts: z.array(TimelineEntry),
    ...ShownAlerts,
    /**
     * Null for a live issue. For one regrouping folded into another (its status Resolved as of then, though its
     * alerts may still fire): `into`, the live issue now holding its alerts, or null when they form other issues.
     */
    regrouped: z.nullable(z.object({ into: z.nullable(z.string()), at: z.string() })),
    cluster_info: z.null(),
    ...Source,
  }),
);
const HistoryAnswer = z.lazy(() => z.object({ cluster_name: z.string(), issues: z.array(IssueSchema), total: z.count(), ...Source }));
const EvidenceAnswer = z.lazy(() =>
  z.object({
    alerts: z.array(
      z.object({
        alert_id: z.string(),
        alert_name: z.string(),
        severity: z.string(),
        status: z.string(),
        starts_at: z.string(),
        ends_at: z.nullable(z.string()),
        time: z.string(),
        summary: z.string(),
        detail: z.string(),
        dashboard_url: z.string(),
      }),
    ),
    ...ShownAlerts,
    metrics: z.array(
      z.object({
        metric_key: z.string(),
        min: z.number(),
        max: z.number(),
        avg: z.number(),
        latest: z.number(),
        latest_at: z.string(),
        samples: z.count(),
      }),
    ),
    metrics_window: z.object({ from: z.string(), to: z.string(), basis: z.string() }),
    cluster: z.nullable(z.record(z.string(), z.unknown())),
    ...Source,
  }),
);

export const issuesGroup = defineGroup({
  name: 'issues',
  config: ['tickets', 'links', 'edge'],
  tables: { issues: 'readputupdate', alerts: 'read', metrics: 'read', clusters: 'read', users: 'read', audit: 'append' },
  routes: {
    list: {
      method: 'GET',
      path: '/api/issues',
      summary: 'Rule-grouped alert issues',
      auth: 'user',
      roles: ANY_ROLE,
      query: IssueListQuery,
      revalidate: LIST_VALIDATOR,
      response: ListAnswer,
    },
    kpis: {
      method: 'GET',
      path: '/api/issues/kpis',
      summary: 'Issue KPIs',
      auth: 'user',
      roles: ANY_ROLE,
      query: IssueKpisQuery,
      response: KpisAnswer,
      revalidate: LIST_VALIDATOR,
    },
    users: { method: 'GET', path: '/api/issues/users', summary: 'Assignable users', auth: 'user', roles: ADMIN_UP, response: UsersAnswer },
    get: {
      method: 'GET',
      path: '/api/issues/{issue_id}',
      summary: 'One issue with its alert timeline',
      auth: 'user',
      roles: ANY_ROLE,
      params: IssueIdParams,
      response: DetailAnswer,
      etag: 'The triage version (`"t3"`): sent back as If-Match, a PATCH is refused (409) once someone else has triaged the issue since',
    },
    clusterHistory: {
      method: 'GET',
      path: '/api/issues/{issue_id}/cluster-history',
      summary: 'Past issues of the same cluster',
      auth: 'user',
      roles: ANY_ROLE,
      params: IssueIdParams,
      response: HistoryAnswer,
    },
    evidence: {
      method: 'GET',
      path: '/api/issues/{issue_id}/evidence',
      summary: 'Recent alerts, key metrics and inventory',
      auth: 'user',
      roles: ANY_ROLE,
      params: IssueIdParams,
      response: EvidenceAnswer,
    },
    createTicket: {
      method: 'POST',
      path: '/api/issues/{issue_id}/create-ticket',
      summary: 'Create a ticket for the issue',
      auth: 'user',
      roles: ADMIN_UP,
      params: IssueIdParams,
      // Beyond the contract: `again=true` creates one though an earlier create got no definite answer (a ticket may exist).
      query: z.lazy(() => z.object({ again: z._default(z.enum(['true', 'false']), 'false') })),
      response: z.lazy(() => z.object({ status: z.literal('created'), ticket_key: z.string(), ticket_url: z.string(), ...Source })),
      problems: [409, 502, 503],
    },
    patch: {
      method: 'PATCH',
      path: '/api/issues/{issue_id}',
      summary: 'Triage an issue',
      auth: 'user',
      roles: ADMIN_UP,
      params: IssueIdParams,
      headers: IfMatchHeader,
      body: IssuePatch,
      response: z.lazy(() => z.object({ status: z.literal('updated'), ...Source })),
      etag: 'The triage version this PATCH left: the If-Match of a next one, with no GET between',
      // 400: an If-Match that is not GET's ETag; 409: regrouped, or triaged after the If-Match's version (shared/issues/triage-etag.ts).
      problems: [400, 409],
    },
  },
});
