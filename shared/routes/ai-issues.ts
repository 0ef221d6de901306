import * as z from '../zod.js';
import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { USERNAME_MAX } from '../auth/username.js';
import { defineGroup } from '../http/route.js';
import { IfMatchHeader, IssueIdParams, IssueKpisQuery, IssueListQuery, Text, TimelineEntry } from './common.js';
import { LIST_VALIDATOR } from './validators.js';
import { ShownAlerts, UsersAnswer } from './issues.js';
import { AiIssueSchema as AiIssue } from '../ai-issues/schemas.js';

export const AiIssuePatch = z.withSomeField(
  z.strictObject({
    triage_status: z.optional(z.shownLabel(64)),
    disposition_status: z.optional(z.shownLabel(64)),
    // A username, email or display name, resolved to an account's username (shared/issues/assignee.ts): as long as those may be.
    assignee: z.optional(Text(USERNAME_MAX)),
    notes: z.optional(Text(10_000)),
  }),
);
export type AiIssuePatch = z.infer<typeof AiIssuePatch>;

// Answers: the AI issue (shared/ai-issues/schemas.ts, the rule issue's shape with the AI fields), source `ai`.
const Int = z.int();
const Count = z.count();
const Source = { source: z.literal('ai') };

export const aiIssuesGroup = defineGroup({
  name: 'ai-issues',
  tables: { 'ai-issues': 'readwrite', alerts: 'read', users: 'read', audit: 'append' },
  config: ['edge'],
  routes: {
    list: {
      method: 'GET',
      path: '/api/ai-issues',
      summary: 'AI-grouped alert issues',
      auth: 'user',
      roles: ANY_ROLE,
      query: IssueListQuery,
      revalidate: LIST_VALIDATOR,
      response: z.lazy(() =>
        z.object({
          issues: z.array(AiIssue),
          total: Count,
          page: Int,
          page_size: Int,
          total_pages: Count,
          customers: z.array(z.string()),
          clusters: z.array(z.string()),
          ...Source,
        }),
      ),
    },
    kpis: {
      method: 'GET',
      path: '/api/ai-issues/kpis',
      summary: 'AI issue KPIs',
      auth: 'user',
      roles: ANY_ROLE,
      query: IssueKpisQuery,
      revalidate: LIST_VALIDATOR,
      response: z.lazy(() =>
        z.object({ total: Count, ongoing: Count, resolved: Count, unassigned: Count, avg_duration_minutes: z.number(), total_alerts: Count, ...Source }),
      ),
    },
    users: { method: 'GET', path: '/api/ai-issues/users', summary: 'Assignable users', auth: 'user', roles: ADMIN_UP, response: UsersAnswer },
    get: {
      method: 'GET',
      path: '/api/ai-issues/{issue_id}',
      summary: 'One AI issue with its linked alerts',
      auth: 'user',
      roles: ANY_ROLE,
      params: IssueIdParams,
      response: z.lazy(() => z.object({ issue: AiIssue, alerts: z.array(TimelineEntry), ...ShownAlerts, cluster_info: z.null(), ...Source })),
      etag: 'The triage version (`"t3"`): sent back as If-Match, a PATCH is refused (409) once someone else has triaged the AI issue since',
    },
    patch: {
      method: 'PATCH',
      path: '/api/ai-issues/{issue_id}',
      summary: 'Triage an AI issue (assignee "me" is the caller)',
      auth: 'user',
      roles: ADMIN_UP,
      params: IssueIdParams,
      headers: IfMatchHeader,
      body: AiIssuePatch,
      response: z.lazy(() => z.object({ status: z.literal('ok') })),
      etag: 'The triage version this PATCH left: the If-Match of a next one, with no GET between',
      // 400: an If-Match that is not GET's ETag; 409: regrouped, or triaged after the If-Match's version.
      problems: [400, 409],
    },
  },
});
