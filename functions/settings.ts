// settings route group: rule YAML and proposals, general settings, recompute,
// users, audit and roles.
import { callerOf } from '../shared/auth/caller.js';
import { auditPage, inviteUser, listManagedUsers, removeUser, rolesList, updateUser } from '../shared/auth/user-admin.js';
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { settingsGroup } from '../shared/routes/settings.js';

const rules = notImplemented('issue #6, rule editing');
const scoring = notImplemented('issue #5, scoring and dashboards');

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
  recompute: scoring,
  recomputeRisk: scoring,
  listUsers: async () => listManagedUsers(),
  inviteUser: async (req) => inviteUser(req.principal!, req.body, callerOf(req)),
  patchUser: async (req) => updateUser(req.principal!, req.params.email, req.body, callerOf(req)),
  deleteUser: async (req) => removeUser(req.principal!, req.params.email, callerOf(req)),
  audit: async (req) => auditPage(req.query),
  roles: async () => rolesList(),
});
