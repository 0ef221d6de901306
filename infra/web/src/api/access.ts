// Who may use a route, for the controls the console shows or hides: the route table's roles
// written out once more for the browser (which loads only three small modules of the server's
// code, infra/web/README.md), and checked by the
// compiler to be exactly the route's set, as `endpoint` checks its method and path. A route
// whose roles change fails the console's typecheck until its controls follow.
import { type Endpoint, endpoint } from './client';
import type { GroupName, Role, RolesOf, RouteName } from './types';

type SameSet<A, B> = [Exclude<A, B>] extends [never] ? ([Exclude<B, A>] extends [never] ? true : false) : false;

/** The roles `ep`'s route lets in: `rolesOf(triggerEp, 'superadmin', 'admin')`. */
export function rolesOf<G extends GroupName, R extends RouteName<G>, const L extends readonly Role[]>(
  _ep: Endpoint<G, R>,
  ...roles: SameSet<L[number], RolesOf<G, R>> extends true ? L : readonly [`the route's roles are`, RolesOf<G, R>]
): readonly Role[] {
  return roles as readonly Role[];
}

// The console's role-gated pages and controls, each by the route it needs (typechecked against it).
const ep = endpoint;
/** People (/users): the account list; and who changes roles, deactivates and deletes (superadmins). */
export const MAY_LIST_USERS = rolesOf(ep<'settings', 'listUsers'>('GET', '/api/settings/users'), 'superadmin', 'admin');
export const MAY_CHANGE_USERS = rolesOf(ep<'settings', 'patchUser'>('PATCH', '/api/settings/users/{email}'), 'superadmin');
/** A password reset from the account list. */
export const MAY_RESET_PASSWORDS = rolesOf(ep<'settings', 'resetPassword'>('POST', '/api/settings/users/{email}/password-reset'), 'superadmin');
/** Audit (/audit). */
export const MAY_READ_AUDIT = rolesOf(ep<'settings', 'audit'>('GET', '/api/settings/audit'), 'superadmin', 'admin');
/** Metric sources (/metric-sources): the puller's status, and a pull now. */
export const MAY_SEE_PULLS = rolesOf(ep<'metric-sources', 'status'>('GET', '/api/metric-sources/status'), 'superadmin', 'admin');
/** Settings (/settings): the general settings, read (every role: they say how scores are made), and changed. */
export const MAY_READ_SETTINGS = rolesOf(ep<'settings', 'getGeneral'>('GET', '/api/settings/general'), 'superadmin', 'admin', 'viewer');
export const MAY_CHANGE_SETTINGS = rolesOf(ep<'settings', 'putGeneral'>('PUT', '/api/settings/general'), 'superadmin');
/** LLM cost (/llm-cost). */
export const MAY_SEE_LLM_COST = rolesOf(ep<'llm-usage', 'summary'>('GET', '/api/llm-usage/summary'), 'superadmin');
/** Refresh buttons of the fleet and health pages. */
export const MAY_REFRESH_FLEET = rolesOf(ep<'fleet', 'refresh'>('POST', '/api/fleet/refresh'), 'superadmin', 'admin');
export const MAY_REFRESH_HEALTH = rolesOf(ep<'health', 'refresh'>('POST', '/api/health/refresh'), 'superadmin', 'admin');
/** A patrol scan triggered. */
export const MAY_TRIGGER_PATROL = rolesOf(ep<'patrol', 'trigger'>('POST', '/api/patrol/trigger'), 'superadmin', 'admin');
/** Triage of an alert issue and of an AI issue. */
export const MAY_TRIAGE_ISSUES = rolesOf(ep<'issues', 'patch'>('PATCH', '/api/issues/{issue_id}'), 'superadmin', 'admin');
export const MAY_TRIAGE_AI_ISSUES = rolesOf(ep<'ai-issues', 'patch'>('PATCH', '/api/ai-issues/{issue_id}'), 'superadmin', 'admin');
/** The accounts an alert or AI issue may be assigned to, named in the lists' "Assigned to" filter. */
export const MAY_LIST_ASSIGNEES = rolesOf(ep<'issues', 'users'>('GET', '/api/issues/users'), 'superadmin', 'admin');
export const MAY_LIST_AI_ASSIGNEES = rolesOf(ep<'ai-issues', 'users'>('GET', '/api/ai-issues/users'), 'superadmin', 'admin');
/** A rule proposal approved or rejected. */
export const MAY_REVIEW_PROPOSALS = rolesOf(ep<'settings', 'reviewChange'>('POST', '/api/settings/config-changes/{change_id}/review'), 'superadmin');
