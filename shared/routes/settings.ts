import * as z from '../zod.js';
import { ADMIN_UP, ANY_ROLE, ROLES, Role, SUPERADMIN } from '../auth/roles.js';
import { AUDIT_ACTIONS } from '../db/audit-actions.js';
import { CHANGE_STATUSES } from '../db/change-statuses.js';
import { defineGroup } from '../http/route.js';
import { FLEET_VIEW_MEMORY_MB } from '../function-memory.js';
import { RULE_SET_NAMES, type RuleSetName, type ScoredRuleSet } from '../rules/defaults.js';
import { IfMatchHeader, Page, PageSize, PageSizeOf } from './common.js';
import { RecomputeResponse, RecomputeRiskResponse, RefreshIdParams, RefreshRunning, RuleImpact } from './dashboard-schemas.js';

export const ScoringMethod = z.enum(['rules', 'ai']);
export const GeneralSettings = z.lazy(() =>
  z.strictObject({
    health_scoring_method: ScoringMethod,
    alert_criticality_method: ScoringMethod,
  }),
);

/**
 * 64 KB of YAML is far beyond any real rule set (shared/rules/check.ts TEXT_LIMITS); more is refused before parsing.
 * `base_version`: the version this edit was made on (as GET answered it); 409 when no longer current. Or If-Match: "v5".
 */
const RuleText = z.lazy(() => z.string().check(z.maxLength(64 * 1024)));
export const RulesBody = z.lazy(() => z.strictObject({ content: RuleText, base_version: z.optional(z.int().check(z.gte(0), z.lte(999_999_999))) }));

export const ReviewBody = z.lazy(() =>
  z.strictObject({
    action: z.enum(['approve', 'reject']),
    note: z._default(z.string().check(z.maxLength(2000)), ''),
  }),
);

export const InviteBody = z.lazy(() =>
  z.strictObject({
    email: z.pipe(
      z.emailAddress(),
      z.transform((e: string) => e.toLowerCase()),
    ),
    display_name: z.shownName(128),
    role: Role,
  }),
);

export const UserPatch = z.withSomeField(z.strictObject({ role: z.optional(Role), is_active: z.optional(z.boolean()) }), 'role or is_active is required');

// Answers of the rule-editing routes (spec §4 settings, DESIGN §7).
const RuleSetText = z.lazy(() =>
  z.object({
    content: z.string(),
    source: z.literal('live'),
    version: z.int(),
    updated_at: z.nullable(z.string()),
    updated_by: z.nullable(z.string()),
  }),
);
const SubmitAnswer = z.lazy(() =>
  z.union([
    z.object({ status: z.literal('ok'), applied: z.literal(true), version: z.int() }),
    z.object({ status: z.literal('pending'), applied: z.literal(false), change_id: z.string(), base_version: z.int() }),
  ]),
);
const ChangeStatus = z.enum(CHANGE_STATUSES);
const ChangeSummary = z.lazy(() =>
  z.object({
    change_id: z.string(),
    rule_set: z.enum(RULE_SET_NAMES),
    status: ChangeStatus,
    proposed_by: z.string(),
    proposed_at: z.string(),
    base_version: z.int(),
    reviewed_by: z.nullable(z.string()),
    reviewed_at: z.nullable(z.string()),
    review_note: z.nullable(z.string()),
    applied_version: z.nullable(z.int()),
  }),
);
const ChangeDetail = z.lazy(() =>
  z.extend(z.unlazy(ChangeSummary), {
    proposed_content: z.string(),
    current_content: z.string(),
    // Beyond the contract: the text of base_version (null: an earlier release's shipped default, not kept).
    base_content: z.nullable(z.string()),
    current_version: z.int(),
    stale: z.boolean(),
    impact: z.nullable(RuleImpact),
  }),
);
const ReviewAnswer = z.lazy(() =>
  z.object({ status: z.enum(['approved', 'rejected']), change_id: z.string(), applied: z.boolean(), version: z.optional(z.int()) }),
);
const VersionsAnswer = z.lazy(() =>
  z.object({
    rule_set: z.string(),
    current_version: z.int(),
    total: z.count(),
    page: z.int(),
    page_size: z.int(),
    versions: z.array(
      z.object({
        version: z.int(),
        content: z.string(),
        updated_at: z.string(),
        updated_by: z.string(),
        change_id: z.nullable(z.string()),
        proposed_by: z.nullable(z.string()),
      }),
    ),
    /** Version 0's YAML text, the running release's shipped default (not stored, so not in `versions`). */
    shipped_default: z.string(),
  }),
);

const EmailParams = z.object({
  email: z.pipe(
    z.emailAddress(),
    z.transform((e: string) => e.toLowerCase()),
  ),
});
const ChangeParams = z.object({ change_id: z.string().check(z.minLength(1), z.maxLength(128)) });

const ruleSetRoutes = (ruleSet: RuleSetName) =>
  ({
    get: {
      method: 'GET',
      path: `/api/settings/${ruleSet}`,
      summary: `The live ${ruleSet} YAML`,
      auth: 'user',
      roles: ANY_ROLE,
      response: RuleSetText,
      etag: 'The live version (`"v5"`): sent back as If-Match, a PUT is refused (409) once another version was applied since',
    },
    put: {
      method: 'PUT',
      path: `/api/settings/${ruleSet}`,
      summary: `Replace ${ruleSet} (superadmin) or propose a change`,
      auth: 'user',
      roles: ANY_ROLE,
      headers: IfMatchHeader,
      body: RulesBody,
      response: SubmitAnswer,
      etag: "When applied (a superadmin's PUT): the version it made live, the If-Match of a next PUT; a proposal answers none",
      // 400: a malformed If-Match; 409: the version it names is no longer current, or the proposer's pending bound.
      problems: [400, 409],
    },
    versions: {
      method: 'GET',
      path: `/api/settings/${ruleSet}/versions`,
      summary: `Applied versions of ${ruleSet}, newest first`,
      auth: 'user',
      roles: ANY_ROLE,
      response: VersionsAnswer,
      // Each version carries its full text: pages stay small.
      query: z.lazy(() => z.object({ page: Page, page_size: PageSizeOf(10, 20) })),
    },
  }) as const;

/** A rule text to preview (its impact), as a PUT takes it: nothing is saved, so no version is named. */
const PreviewBody = z.lazy(() => z.strictObject({ content: RuleText }));

/**
 * Beyond the contract: what a health or risk rules text would change, before it is saved or proposed (the Rules
 * editor's preview; a superadmin's save applies at once, with no proposal page to show it). Scored on the current
 * fleet as a pending proposal's detail is; nothing is written. Issue rules and metric sources move no class.
 */
const impactRoute = (ruleSet: ScoredRuleSet) =>
  ({
    method: 'POST',
    path: `/api/settings/${ruleSet}/impact`,
    summary: `What a ${ruleSet} text would change, scored on the current fleet (nothing is saved)`,
    auth: 'user',
    roles: ANY_ROLE,
    body: PreviewBody,
    response: RuleImpact,
  }) as const;

const health = ruleSetRoutes('health-rules');
const issue = ruleSetRoutes('issue-rules');
const risk = ruleSetRoutes('risk-rules');
const metricSources = ruleSetRoutes('metric-sources');

// Users, audit and roles (spec §4 Settings). Managed user: spec "managed user".
/**
 * `invitation_pending` (beyond the contract): invited, not yet activated; its role and state change only by a new
 * invitation. `invitation_expires_at` (beyond it too): when a pending account's invitation stops working, where known.
 * `source` (beyond it too): `ldap` for an account the directory's login made, which is deactivated, never deleted.
 */
export const ManagedUser = z.lazy(() =>
  z.object({
    id: z.string(),
    email: z.string(),
    display_name: z.string(),
    role: Role,
    is_active: z.boolean(),
    source: z.enum(['local', 'ldap']),
    invitation_pending: z.boolean(),
    invitation_expires_at: z.optional(z.string()),
    /** Beyond the contract: a superadmin reset the password and the person has not chosen a new one yet; until when its link works. */
    password_reset_pending: z.boolean(),
    password_reset_expires_at: z.optional(z.string()),
    /**
     * Beyond the contract: the account's version, moved by every write of it. Sent back as If-Match `"u<version>"`,
     * a PATCH or DELETE of the account is refused (409) once someone else has changed it since.
     */
    version: z.int(),
  }),
);
export type ManagedUser = z.infer<typeof ManagedUser>;
export const UsersResponse = z.lazy(() => z.object({ users: z.array(ManagedUser) }));
/** Why an account mail was not sent (shared/mail/invitations.ts): no sender, SES refused it, or no answer in time. Built inside the answers' z.lazy, as the rest. */
const mailProblem = () => z.enum(['not_configured', 'refused', 'no_answer']);
export const InviteResponse = z.lazy(() =>
  z.object({
    status: z.literal('ok'),
    email_sent: z.boolean(),
    /** Beyond the contract, when the mail was not sent: why (shared/mail/invitations.ts, MailProblem). */
    email_problem: z.optional(mailProblem()),
    /** Only when the mail was not sent: the inviter shares it by hand. */
    activation_token: z.optional(z.string()),
  }),
);
export type InviteResponse = z.infer<typeof InviteResponse>;
/** A password reset (beyond the contract): as an invitation's answer, its token named for what it does, and when it expires. */
export const PasswordResetResponse = z.lazy(() =>
  z.object({
    status: z.literal('ok'),
    email_sent: z.boolean(),
    email_problem: z.optional(mailProblem()),
    /** Only when the mail was not sent: the superadmin hands the reset link over by hand. */
    reset_token: z.optional(z.string()),
    expires_at: z.string(),
  }),
);
export type PasswordResetResponse = z.infer<typeof PasswordResetResponse>;
export const UserPatchResponse = z.lazy(() => z.object({ status: z.literal('ok'), user: ManagedUser }));
export const StatusOk = z.lazy(() => z.object({ status: z.literal('ok') }));
export const AuditEntry = z.lazy(() =>
  z.object({
    id: z.string(),
    at: z.string(),
    actor: z.string(),
    role: z.nullable(Role),
    action: z.enum(AUDIT_ACTIONS),
    target: z.nullable(z.string()),
    detail: z.record(z.string(), z.unknown()),
    ip: z.nullable(z.string()),
    user_agent: z.nullable(z.string()),
  }),
);
export type AuditEntry = z.infer<typeof AuditEntry>;
export const AuditResponse = z.lazy(() =>
  z.object({
    entries: z.array(AuditEntry),
    action_types: z.readonly(z.array(z.string())),
    total: z.count(),
    page: z.int(),
    page_size: z.int(),
    total_pages: z.count(),
    /** The listing covers the newest this many entries (before `before`, when asked). */
    limit: z.int(),
    /**
     * Beyond the contract: the `before` that lists the next older entries, when this listing holds `limit` of
     * them (there may be more); null when it holds every entry there is.
     */
    older_before: z.nullable(z.iso.datetime()),
  }),
);
export type AuditPage = z.infer<typeof AuditResponse>;
export const RolesResponse = z.lazy(() => z.object({ roles: z.readonly(z.array(z.enum(ROLES))) }));

/** An instant whose UTC year has four digits, as the audit log's keys are written. */
const inFourDigitYears = (instant: string) => {
  const year = new Date(instant).getUTCFullYear();
  return year >= 1 && year <= 9999;
};

export const settingsGroup = defineGroup({
  name: 'settings',
  config: ['mail', 'links', 'refresh', 'edge'],
  tables: {
    rules: 'readwrite',
    users: 'readwrite',
    audit: 'readappend',
    scores: 'readwrite',
    // The refresh claim (shared/scoring/refresh-claim.ts): recompute and recompute-risk.
    locks: 'readwrite',
    clusters: 'read',
    metrics: 'read',
    alerts: 'read',
  },
  leases: ['refresh'],
  grants: ['ses:send', 'invoke:recompute'],
  // It computes the fleet view in its own container (shared/function-memory.ts says what that measured).
  memoryMb: FLEET_VIEW_MEMORY_MB,
  routes: {
    getGeneral: {
      method: 'GET',
      path: '/api/settings/general',
      summary: 'General settings',
      auth: 'user',
      roles: ANY_ROLE,
      response: GeneralSettings,
      etag: 'The settings\' revision (`"r3"`): sent back as If-Match, a PUT is refused (409) once someone else has saved since',
    },
    putGeneral: {
      method: 'PUT',
      path: '/api/settings/general',
      summary: 'Change general settings',
      auth: 'user',
      roles: SUPERADMIN,
      headers: IfMatchHeader,
      body: GeneralSettings,
      response: z.lazy(() => z.extend(z.unlazy(GeneralSettings), { status: z.literal('ok') })),
      etag: 'The revision this PUT left: the If-Match of a next one, with no GET between',
      // 400: an If-Match that is not GET's ETag; 409: a save since the If-Match's revision, or one that keeps losing to concurrent ones (shared/settings/general.ts).
      problems: [400, 409],
    },
    getHealthRules: health.get,
    putHealthRules: health.put,
    healthRuleVersions: health.versions,
    healthRulesImpact: impactRoute('health-rules'),
    getIssueRules: issue.get,
    putIssueRules: issue.put,
    issueRuleVersions: issue.versions,
    getRiskRules: risk.get,
    putRiskRules: risk.put,
    riskRuleVersions: risk.versions,
    riskRulesImpact: impactRoute('risk-rules'),
    getMetricSources: metricSources.get,
    putMetricSources: metricSources.put,
    metricSourceVersions: metricSources.versions,
    listChanges: {
      method: 'GET',
      path: '/api/settings/config-changes',
      summary: 'Rule change proposals',
      auth: 'user',
      roles: ANY_ROLE,
      query: z.lazy(() => z.object({ status_filter: z._default(z.enum(['', ...CHANGE_STATUSES]), '') })),
      response: z.lazy(() => z.object({ changes: z.array(ChangeSummary), total: z.count() })),
    },
    getChange: {
      method: 'GET',
      path: '/api/settings/config-changes/{change_id}',
      summary: 'One proposal with both YAML texts',
      auth: 'user',
      roles: ANY_ROLE,
      params: ChangeParams,
      response: ChangeDetail,
    },
    reviewChange: {
      method: 'POST',
      path: '/api/settings/config-changes/{change_id}/review',
      summary: 'Approve or reject a proposal',
      auth: 'user',
      roles: SUPERADMIN,
      params: ChangeParams,
      body: ReviewBody,
      response: ReviewAnswer,
      problems: [409],
    },
    // Beyond the contract: the proposer takes back a pending proposal (403 for anyone else who sees it; 409 once closed).
    withdrawChange: {
      method: 'POST',
      path: '/api/settings/config-changes/{change_id}/withdraw',
      summary: 'Withdraw your own pending proposal',
      auth: 'user',
      roles: ANY_ROLE,
      params: ChangeParams,
      response: z.lazy(() => z.object({ status: z.literal('withdrawn'), change_id: z.string() })),
      problems: [403, 409],
    },
    recompute: {
      method: 'POST',
      path: '/api/settings/recompute',
      summary: 'Recompute health scores (202 with refresh_id when it outlasts the wait)',
      auth: 'user',
      roles: ADMIN_UP,
      response: RecomputeResponse,
      accepted: RefreshRunning,
      // 409: a refresh claim lost to a concurrent request (shared/scoring/refresh-claim.ts).
      problems: [409, 503],
    },
    recomputeStatus: {
      method: 'GET',
      path: '/api/settings/recompute/{refresh_id}',
      summary: 'One recompute: 202 while running, the recompute answer when done',
      auth: 'user',
      roles: ADMIN_UP,
      params: RefreshIdParams,
      response: RecomputeResponse,
      accepted: RefreshRunning,
      problems: [503],
    },
    recomputeRisk: {
      method: 'POST',
      path: '/api/settings/recompute-risk',
      summary: 'Recompute risk snapshots (202 with refresh_id when it outlasts the wait)',
      auth: 'user',
      roles: ADMIN_UP,
      response: RecomputeRiskResponse,
      accepted: RefreshRunning,
      // 409: a refresh claim lost to a concurrent request (shared/scoring/refresh-claim.ts).
      problems: [409, 503],
    },
    recomputeRiskStatus: {
      method: 'GET',
      path: '/api/settings/recompute-risk/{refresh_id}',
      summary: 'One risk recompute: 202 while running, the recompute answer when done',
      auth: 'user',
      roles: ADMIN_UP,
      params: RefreshIdParams,
      response: RecomputeRiskResponse,
      accepted: RefreshRunning,
      problems: [503],
    },
    listUsers: { method: 'GET', path: '/api/settings/users', summary: 'Users', auth: 'user', roles: ADMIN_UP, response: UsersResponse },
    inviteUser: {
      method: 'POST',
      path: '/api/settings/users/invite',
      summary: 'Invite a user',
      auth: 'user',
      roles: ADMIN_UP,
      body: InviteBody,
      response: InviteResponse,
      // 503: the mail settings are wrong (read before anything is stored)
      problems: [409, 503],
    },
    patchUser: {
      method: 'PATCH',
      path: '/api/settings/users/{email}',
      summary: 'Change role or activation',
      auth: 'user',
      roles: SUPERADMIN,
      params: EmailParams,
      // If-Match (beyond the contract): `"u<version>"`, the account's `version` as the users list answered it.
      headers: IfMatchHeader,
      body: UserPatch,
      response: UserPatchResponse,
      etag: 'The account\'s version this PATCH left (`"u4"`): the If-Match of a next change, with no list read between',
      // 400: an If-Match that is not an account's ETag; 409: changed since the If-Match's version, and the guards of shared/auth/user-admin.ts.
      problems: [400, 409],
    },
    deleteUser: {
      method: 'DELETE',
      path: '/api/settings/users/{email}',
      summary: 'Delete a user',
      auth: 'user',
      roles: SUPERADMIN,
      params: EmailParams,
      // If-Match (beyond the contract): as PATCH's, the account's version as the users list answered it.
      headers: IfMatchHeader,
      response: StatusOk,
      // 400: an If-Match that is not an account's ETag; 409: changed since the If-Match's version, and the guards of shared/auth/user-admin.ts.
      problems: [400, 409],
    },
    resetPassword: {
      method: 'POST',
      path: '/api/settings/users/{email}/password-reset',
      summary: "Reset a user's password: it stops working, their sessions end, and a single-use link lets them choose a new one",
      auth: 'user',
      roles: SUPERADMIN,
      params: EmailParams,
      // If-Match (beyond the contract): as PATCH's, the account's version as the users list answered it.
      headers: IfMatchHeader,
      etag: 'The account\'s version this reset left (`"u5"`): the If-Match of a next change, with no list read between',
      response: PasswordResetResponse,
      // 400: an If-Match that is not an account's ETag; 409: one's own account, a directory (LDAP) account, a pending
      // invitation, a deactivated account, changed since the If-Match's version, or changed meanwhile;
      // 503: the mail settings are wrong (read before anything is stored).
      problems: [400, 409, 503],
    },
    audit: {
      method: 'GET',
      path: '/api/settings/audit',
      summary: 'Audit log, newest first',
      auth: 'user',
      roles: ADMIN_UP,
      // An action the log does not know is a 422, as any value out of range (DESIGN §4), not an empty page.
      // `before` (beyond the contract): only entries stamped before this instant, so the whole log is reachable
      // `limit` entries at a time; blank is now. An instant with a time zone (`Z` or an offset).
      query: z.lazy(() =>
        z.object({
          action: z._default(z.enum(['', ...AUDIT_ACTIONS]), ''),
          // In UTC within years 0001–9999: the keys' own form (`toISOString` writes a year past 9999 as `+010000`).
          before: z._default(
            z.union([z.literal(''), z.iso.datetime({ offset: true }).check(z.refine(inFourDigitYears, 'an instant from year 1 to 9999 in UTC'))]),
            '',
          ),
          page: Page,
          page_size: PageSize,
        }),
      ),
      response: AuditResponse,
    },
    roles: { method: 'GET', path: '/api/settings/roles', summary: 'Role names', auth: 'user', roles: ANY_ROLE, response: RolesResponse },
  },
});
