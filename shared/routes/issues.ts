import * as z from 'zod';
import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { IssueIdParams, IssueKpisQuery, IssueListQuery, Text } from './common.js';

export const IssuePatch = z
  .strictObject({
    triage_status: Text(64).optional(),
    disposition_status: Text(64).optional(),
    assignee: Text(64).optional(),
    notes: Text(10_000).optional(),
    ticket_key: Text(64).optional(),
    ticket_url: z.union([z.literal(''), z.url().max(2048)]).optional(),
  })
  .refine((p) => Object.keys(p).length > 0, 'at least one field is required');
export type IssuePatch = z.infer<typeof IssuePatch>;

export const issuesGroup = defineGroup({
  name: 'issues',
  tables: { issues: 'readwrite', alerts: 'read', metrics: 'read', clusters: 'read', users: 'read', rules: 'read', audit: 'readwrite' },
  routes: {
    list: { method: 'GET', path: '/api/issues', summary: 'Rule-grouped alert issues', auth: 'user', roles: ANY_ROLE, query: IssueListQuery },
    kpis: { method: 'GET', path: '/api/issues/kpis', summary: 'Issue KPIs', auth: 'user', roles: ANY_ROLE, query: IssueKpisQuery },
    users: { method: 'GET', path: '/api/issues/users', summary: 'Assignable users', auth: 'user', roles: ANY_ROLE },
    get: { method: 'GET', path: '/api/issues/{issue_id}', summary: 'One issue with its alert timeline', auth: 'user', roles: ANY_ROLE, params: IssueIdParams },
    clusterHistory: {
      method: 'GET', path: '/api/issues/{issue_id}/cluster-history', summary: 'Past issues of the same cluster',
      auth: 'user', roles: ANY_ROLE, params: IssueIdParams,
    },
    evidence: {
      method: 'GET', path: '/api/issues/{issue_id}/evidence', summary: 'Recent alerts, key metrics and inventory',
      auth: 'user', roles: ANY_ROLE, params: IssueIdParams,
    },
    createTicket: {
      method: 'POST', path: '/api/issues/{issue_id}/create-ticket', summary: 'Create a ticket for the issue',
      auth: 'user', roles: ADMIN_UP, params: IssueIdParams,
    },
    patch: {
      method: 'PATCH', path: '/api/issues/{issue_id}', summary: 'Triage an issue', auth: 'user', roles: ADMIN_UP,
      params: IssueIdParams, body: IssuePatch,
    },
  },
});
