import * as z from 'zod';
import { ADMIN_UP, ANY_ROLE, Role, SUPERADMIN } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';
import { Page, PageSize } from './common.js';
import { RecomputeResponse, RecomputeRiskResponse } from './dashboard-schemas.js';

export const ScoringMethod = z.enum(['rules', 'ai']);
export const GeneralSettings = z.strictObject({
  health_scoring_method: ScoringMethod,
  alert_criticality_method: ScoringMethod,
});

/** 256 KB of YAML is far beyond any real rule set; more is refused before parsing. */
export const RulesBody = z.strictObject({ content: z.string().max(256 * 1024) });

export const ReviewBody = z.strictObject({
  action: z.enum(['approve', 'reject']),
  note: z.string().max(2000).default(''),
});

export const InviteBody = z.strictObject({
  email: z.email().max(254).transform((e) => e.toLowerCase()),
  display_name: z.string().trim().min(1).max(128),
  role: Role,
});

export const UserPatch = z
  .strictObject({ role: Role.optional(), is_active: z.boolean().optional() })
  .refine((p) => p.role !== undefined || p.is_active !== undefined, 'role or is_active is required');

const EmailParams = z.object({ email: z.email().max(254).transform((e) => e.toLowerCase()) });
const ChangeParams = z.object({ change_id: z.string().min(1).max(128) });

const ruleSetRoutes = (ruleSet: 'health-rules' | 'issue-rules' | 'risk-rules') =>
  ({
    get: { method: 'GET', path: `/api/settings/${ruleSet}`, summary: `The live ${ruleSet} YAML`, auth: 'user', roles: ANY_ROLE },
    put: {
      method: 'PUT', path: `/api/settings/${ruleSet}`, summary: `Replace ${ruleSet} (superadmin) or propose a change`,
      auth: 'user', roles: ANY_ROLE, body: RulesBody,
    },
  }) as const;

const health = ruleSetRoutes('health-rules');
const issue = ruleSetRoutes('issue-rules');
const risk = ruleSetRoutes('risk-rules');

export const settingsGroup = defineGroup({
  name: 'settings',
  tables: {
    rules: 'readwrite', users: 'readwrite', audit: 'readwrite', scores: 'readwrite',
    clusters: 'read', metrics: 'read', alerts: 'read',
  },
  grants: ['ses:send'],
  routes: {
    getGeneral: { method: 'GET', path: '/api/settings/general', summary: 'General settings', auth: 'user', roles: ANY_ROLE },
    putGeneral: { method: 'PUT', path: '/api/settings/general', summary: 'Change general settings', auth: 'user', roles: SUPERADMIN, body: GeneralSettings },
    getHealthRules: health.get,
    putHealthRules: health.put,
    getIssueRules: issue.get,
    putIssueRules: issue.put,
    getRiskRules: risk.get,
    putRiskRules: risk.put,
    listChanges: {
      method: 'GET', path: '/api/settings/config-changes', summary: 'Rule change proposals', auth: 'user', roles: ANY_ROLE,
      query: z.object({ status_filter: z.enum(['', 'pending', 'approved', 'rejected']).default('') }),
    },
    getChange: {
      method: 'GET', path: '/api/settings/config-changes/{change_id}', summary: 'One proposal with both YAML texts',
      auth: 'user', roles: ANY_ROLE, params: ChangeParams,
    },
    reviewChange: {
      method: 'POST', path: '/api/settings/config-changes/{change_id}/review', summary: 'Approve or reject a proposal',
      auth: 'user', roles: SUPERADMIN, params: ChangeParams, body: ReviewBody,
    },
    recompute: { method: 'POST', path: '/api/settings/recompute', summary: 'Recompute health scores', auth: 'user', roles: ADMIN_UP, response: RecomputeResponse },
    recomputeRisk: { method: 'POST', path: '/api/settings/recompute-risk', summary: 'Recompute risk snapshots', auth: 'user', roles: ADMIN_UP, response: RecomputeRiskResponse },
    listUsers: { method: 'GET', path: '/api/settings/users', summary: 'Users', auth: 'user', roles: ADMIN_UP },
    inviteUser: { method: 'POST', path: '/api/settings/users/invite', summary: 'Invite a user', auth: 'user', roles: ADMIN_UP, body: InviteBody },
    patchUser: {
      method: 'PATCH', path: '/api/settings/users/{email}', summary: 'Change role or activation', auth: 'user', roles: SUPERADMIN,
      params: EmailParams, body: UserPatch,
    },
    deleteUser: { method: 'DELETE', path: '/api/settings/users/{email}', summary: 'Delete a user', auth: 'user', roles: SUPERADMIN, params: EmailParams },
    audit: {
      method: 'GET', path: '/api/settings/audit', summary: 'Audit log, newest first', auth: 'user', roles: ADMIN_UP,
      query: z.object({ action: z.string().max(64).default(''), page: Page, page_size: PageSize }),
    },
    roles: { method: 'GET', path: '/api/settings/roles', summary: 'Role names', auth: 'user', roles: ANY_ROLE },
  },
});
