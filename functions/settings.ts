// settings route group: rule YAML and proposals, general settings, recompute,
// users, audit and roles.
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { settingsGroup } from '../shared/routes/settings.js';

const accounts = notImplemented('issue #3, accounts and access');
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
  listUsers: accounts,
  inviteUser: accounts,
  patchUser: accounts,
  deleteUser: accounts,
  audit: accounts,
  roles: accounts,
});
