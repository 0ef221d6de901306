// settings route group: rule YAML and proposals, general settings, recompute,
// users, audit and roles.
import { callerOf } from '../shared/auth/caller.js';
import {
  auditPage,
  expectedUserVersion,
  inviteUser,
  listManagedUsers,
  removeUser,
  resetUserPassword,
  rolesList,
  updateUser,
  withUserEtag,
} from '../shared/auth/user-admin.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import type { RuleSetName } from '../shared/rules/defaults.js';
import { Reply, type ApiRequest } from '../shared/http/route.js';
import {
  configChangeDetail,
  expectedVersion,
  listConfigChanges,
  liveRuleSet,
  reviewConfigChange,
  withdrawConfigChange,
  ruleSetVersions,
  ruleTextImpact,
  submitRuleSet,
} from '../shared/rules/editing.js';
import { ruleSetEtag } from '../shared/http/etags.js';
import { expectedRevision, generalSettings, updateGeneralSettings } from '../shared/settings/general.js';
import { settingsGroup } from '../shared/routes/settings.js';
import { refreshRoutes } from '../shared/scoring/refresh.js';

/**
 * GET, PUT and versions of one rule set. GET answers the version's ETag; a PUT
 * may name the version it edits (If-Match or base_version) and then fails with
 * 409 when that is no longer current. An applied PUT answers the new ETag.
 */
type Routes = (typeof settingsGroup)['routes'];

const ruleSet = (name: RuleSetName) => ({
  get: async () => {
    const live = await liveRuleSet(name);
    return new Reply(200, live, { ETag: ruleSetEtag(live.version) });
  },
  // Every rule set's routes take the same request: typed from the health-rules declaration.
  put: async (req: ApiRequest<Routes['putHealthRules']>) => {
    const expected = expectedVersion(req.headers['if-match'], req.body.base_version);
    const result = await submitRuleSet(req.principal, name, req.body.content, await callerOf(req), expected);
    return result.applied ? new Reply(200, result, { ETag: ruleSetEtag(result.version) }) : result;
  },
  versions: async (req: ApiRequest<Routes['healthRuleVersions']>) => ruleSetVersions(name, req.query.page, req.query.page_size),
});
const health = ruleSet('health-rules');
const issue = ruleSet('issue-rules');
const risk = ruleSet('risk-rules');
const metricSources = ruleSet('metric-sources');

// Recompute runs in the recompute worker (shared/scoring/refresh.ts): 200 when it finishes within the wait, else 202.
const FAILED = 'The scores could not be recomputed; the previous scores are still served. Try again shortly.';
const recompute = refreshRoutes(
  ['fleet', 'health'],
  settingsGroup.routes.recomputeStatus,
  (f) => ({ status: 'ok' as const, cluster_count: f.total_clusters }),
  FAILED,
);
const recomputeRisk = refreshRoutes(
  ['risk'],
  settingsGroup.routes.recomputeRiskStatus,
  (f) => ({ status: 'ok' as const, cluster_count: f.risk_total, critical: f.risk_critical, warning: f.risk_warning }),
  FAILED,
);

export const handler = createGroupHandler(settingsGroup, {
  getGeneral: async () => generalSettings(),
  putGeneral: async (req) => updateGeneralSettings(req.principal, req.body, await callerOf(req), expectedRevision(req.headers['if-match'])),
  getHealthRules: health.get,
  putHealthRules: health.put,
  healthRuleVersions: health.versions,
  healthRulesImpact: async (req) => ruleTextImpact('health-rules', req.body.content),
  getIssueRules: issue.get,
  putIssueRules: issue.put,
  issueRuleVersions: issue.versions,
  getRiskRules: risk.get,
  putRiskRules: risk.put,
  riskRuleVersions: risk.versions,
  riskRulesImpact: async (req) => ruleTextImpact('risk-rules', req.body.content),
  getMetricSources: metricSources.get,
  putMetricSources: metricSources.put,
  metricSourceVersions: metricSources.versions,
  listChanges: async (req) => listConfigChanges(req.principal, req.query.status_filter),
  getChange: async (req) => configChangeDetail(req.principal, req.params.change_id),
  reviewChange: async (req) => reviewConfigChange(req.principal, req.params.change_id, req.body, await callerOf(req)),
  withdrawChange: async (req) => withdrawConfigChange(req.principal, req.params.change_id, await callerOf(req)),
  recompute: recompute.start,
  recomputeStatus: recompute.follow,
  recomputeRisk: recomputeRisk.start,
  recomputeRiskStatus: recomputeRisk.follow,
  listUsers: async () => listManagedUsers(),
  inviteUser: async (req) => inviteUser(req.principal, req.body, await callerOf(req)),
  patchUser: async (req) =>
    withUserEtag(await updateUser(req.principal, req.params.email, req.body, await callerOf(req), expectedUserVersion(req.headers['if-match']))),
  deleteUser: async (req) => removeUser(req.principal, req.params.email, await callerOf(req), expectedUserVersion(req.headers['if-match'])),
  resetPassword: async (req) => resetUserPassword(req.principal, req.params.email, await callerOf(req), expectedUserVersion(req.headers['if-match'])),
  audit: async (req) => auditPage(req.query),
  roles: async () => rolesList(),
});
