// settings route group: rule YAML and proposals, general settings, recompute,
// users, audit and roles.
import { callerOf } from '../shared/auth/caller.js';
import { auditPage, inviteUser, listManagedUsers, removeUser, rolesList, updateUser } from '../shared/auth/user-admin.js';
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { settingsGroup } from '../shared/routes/settings.js';
import { refreshFleetView } from '../shared/scoring/fleet-view.js';
import { riskSummary } from '../shared/scoring/risk.js';

const rules = notImplemented('issue #6, rule editing');

export const handler = createGroupHandler(settingsGroup, {
  getGeneral: rules,
  putGeneral: rules,
  getHealthRules: rules,
  putHealthRules: rules,
  getIssueRules: rules,
  putIssueRules: rules,
  getRiskRules: rules,
  putRiskRules: rules,
  listChanges: rules,
  getChange: rules,
  reviewChange: rules,
  recompute: async () => {
    const view = await refreshFleetView(['fleet', 'health']);
    return { status: 'ok', cluster_count: view.scores.length };
  },
  recomputeRisk: async () => {
    const view = await refreshFleetView(['risk']);
    const summary = riskSummary(view.snapshots);
    return { status: 'ok', cluster_count: summary.total, critical: summary.critical, warning: summary.warning };
  },
  listUsers: async () => listManagedUsers(),
  inviteUser: async (req) => inviteUser(req.principal!, req.body, callerOf(req)),
  patchUser: async (req) => updateUser(req.principal!, req.params.email, req.body, callerOf(req)),
  deleteUser: async (req) => removeUser(req.principal!, req.params.email, callerOf(req)),
  audit: async (req) => auditPage(req.query),
  roles: async () => rolesList(),
});
