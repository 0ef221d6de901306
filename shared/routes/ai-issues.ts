import * as z from 'zod';
import { ADMIN_UP, ANY_ROLE } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { IssueIdParams, IssueKpisQuery, IssueListQuery, Text } from './common.js';

export const AiIssuePatch = z
  .strictObject({
    triage_status: Text(64).optional(),
    disposition_status: Text(64).optional(),
    assignee: Text(64).optional(),
    notes: Text(10_000).optional(),
  })
  .refine((p) => Object.keys(p).length > 0, 'at least one field is required');
export type AiIssuePatch = z.infer<typeof AiIssuePatch>;

export const aiIssuesGroup = defineGroup({
  name: 'ai-issues',
  tables: { 'ai-issues': 'readwrite', alerts: 'read', users: 'read', audit: 'readwrite' },
  routes: {
    list: { method: 'GET', path: '/api/ai-issues', summary: 'AI-grouped alert issues', auth: 'user', roles: ANY_ROLE, query: IssueListQuery },
    kpis: { method: 'GET', path: '/api/ai-issues/kpis', summary: 'AI issue KPIs', auth: 'user', roles: ANY_ROLE, query: IssueKpisQuery },
    users: { method: 'GET', path: '/api/ai-issues/users', summary: 'Assignable users', auth: 'user', roles: ANY_ROLE },
    get: { method: 'GET', path: '/api/ai-issues/{issue_id}', summary: 'One AI issue with its linked alerts', auth: 'user', roles: ANY_ROLE, params: IssueIdParams },
    patch: {
      method: 'PATCH', path: '/api/ai-issues/{issue_id}', summary: 'Triage an AI issue (assignee "me" is the caller)',
      auth: 'user', roles: ADMIN_UP, params: IssueIdParams, body: AiIssuePatch,
    },
  },
});
