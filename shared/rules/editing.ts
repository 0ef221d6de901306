// Rule editing with an approval workflow (spec §3 state table, §4 settings;
// DESIGN §5, §7). A superadmin's valid edit becomes the next version at once;
// anyone else's becomes a `pending` proposal that a superadmin approves (the
// proposed YAML becomes the next version) or rejects. Every write goes with
// its audit entry in one transaction, conditional on the version it was based
// on. A PUT may name that version (If-Match: "v5", or base_version: 5); when it
// is no longer current the answer is 409 with current_version and nothing
// changes. A PUT naming no version is based on the version read at its start.
// Version 0 is the shipped default of the running release: a proposal based on
// it also records which default, since a release may ship another before review.
// A transaction that applies a version also moves the fleet view's cache generation.
import type { Caller } from '../auth/caller.js';
import { auditAction, type AuditInput } from '../db/audit.js';
import { ConditionFailed, transactWrite } from '../db/client.js';
import {
  CHANGES_READ_LIMIT,
  countChanges,
  getChange,
  holdPendingAction,
  listChanges,
  newChangeActions,
  newChangeId,
  PENDING_PER_PROPOSER,
  pendingChangesOf,
  releasePendingAction,
  reviewChangeAction,
  type ChangeStatus,
  type ConfigChange,
  type ConfigChangeSummary,
} from '../db/config-changes.js';
import { getCurrentRuleSet, getRuleSetVersion, listRuleSetVersions, newVersionActions, ruleSetAtVersion, type RuleSetVersion } from '../db/rules.js';
import { generationAction } from '../db/scores.js';
import { BadRequest, Conflict, Forbidden, NotFound, ValidationFailed } from '../http/errors.js';
import { ifMatchNumber } from '../http/if-match.js';
import type { Principal } from '../auth/principal.js';
import type { RuleImpact } from '../scoring/impact.js';
import { displayTime } from '../text.js';
import { defaultRuleDigest, defaultRuleText, type RuleSetName, SCORED_RULE_SETS, type ScoredRuleSet } from './defaults.js';
import type { HealthRules, RiskRules } from './schemas.js';

export interface LiveRuleSet {
  content: string;
  source: 'live';
  /** 0 while the shipped default is in force. */
  version: number;
  updated_at: string | null;
  updated_by: string | null;
}

/** The rule set in force, as its YAML text with comments: the stored version, or the shipped default. */
export async function liveRuleSet(name: RuleSetName): Promise<LiveRuleSet> {
  const current = await getCurrentRuleSet(name);
  return current
    ? { content: current.content, source: 'live', version: current.version, updated_at: current.updated_at, updated_by: current.updated_by }
    : { content: defaultRuleText(name), source: 'live', version: 0, updated_at: null, updated_by: null };
}

/**
 * The version a PUT says it edits: from `If-Match` (one strong ETag as GET
 * answers it, e.g. `"v5"`; `*` names none, since a rule set always exists) or
 * from the body's `base_version`. Both given must agree. Anything else is a 400.
 */
export function expectedVersion(ifMatch: string | undefined, baseVersion: number | undefined): number | undefined {
  const fromHeader = ifMatchNumber(ifMatch, 'v', 'this rule set');
  if (fromHeader !== undefined && baseVersion !== undefined && fromHeader !== baseVersion) {
    throw new BadRequest(`If-Match names version ${fromHeader} but base_version is ${baseVersion}; send one of them, or both the same.`);
  }
  return fromHeader ?? baseVersion;
}

/** 409 for an edit of a version that is no longer current: nothing was changed. */
const staleEdit = (name: RuleSetName, expected: number, current: number) =>
  new Conflict(
    `${name} is at version ${current}, not version ${expected} that this edit is based on; nothing was changed. Reload it and apply the edit to version ${current}.`,
    { current_version: current, base_version: expected },
  );

/** 409 for approving a proposal made on another release's shipped default: nothing was changed. */
const staleDefault = (name: RuleSetName) =>
  new Conflict(
    `${name} is still the shipped default (version 0), but the shipped default changed since this proposal was made (the service was updated); nothing was changed. Reject it and propose the edit against the current default.`,
    { current_version: 0, base_version: 0 },
  );

const currentVersion = async (name: RuleSetName) => (await getCurrentRuleSet(name))?.version ?? 0;

/** A proposal based on version 0 whose shipped default this release no longer ships (null: not recorded, stored before it was). */
const defaultReplaced = (change: ConfigChange) =>
  change.base_version === 0 && change.base_default_digest !== null && change.base_default_digest !== defaultRuleDigest(change.rule_set);

/**
 * The YAML checker, loaded by the routes that read rule text (a write, a proposal's review or
 * impact): the rest of the settings group's routes start without the YAML parser (issue 21 §4).
 */
const ruleCheck = () => import('./check.js');

/** Parses and checks a rule set's text, or refuses it with 422 saying what is wrong and where. */
async function checked(name: RuleSetName, content: string): Promise<Record<string, unknown>> {
  const check = (await ruleCheck()).checkRuleText(name, content);
  if (!check.ok)
    throw new ValidationFailed(`The ${name} content is not valid: ${check.message}`, [{ loc: ['body', 'content'], msg: check.message, type: 'rules' }]);
  return check.value;
}

const audit = (principal: Principal, caller: Caller, rest: Omit<AuditInput, 'actor' | 'role' | 'ip' | 'user_agent'>, now: Date) =>
  auditAction({ actor: principal.username, role: principal.role, ip: caller.ip, user_agent: caller.userAgent, ...rest }, now);

export type SubmitResult = { status: 'ok'; applied: true; version: number } | { status: 'pending'; applied: false; change_id: string; base_version: number };

/**
 * PUT of a rule set: applied at once for a superadmin, a proposal for anyone
 * else. `expected`: the version the edit was made on (If-Match or
 * base_version); the write is conditional on it inside the transaction, so a
 * concurrent edit that lands first makes this one 409, never lost. Without it
 * the edit is based on the version read here (today's behaviour: last writer
 * wins unless another write lands between this read and the write).
 */
export async function submitRuleSet(
  principal: Principal,
  name: RuleSetName,
  content: string,
  caller: Caller,
  expected?: number,
  now = new Date(),
): Promise<SubmitResult> {
  const value = await checked(name, content);
  const live = await liveRuleSet(name);
  const read = live.version;
  // A version named and no longer current is a 409, as DESIGN §4 says of rule-set writes, also when the text is the
  // one in force (a save retried after its answer was lost: the 409 names the current version, which is its own).
  if (expected !== undefined && expected !== read) throw staleEdit(name, expected, read);
  const base = expected ?? read;
  // The text in force, to the character (comments and blanks are kept with a version): a save of it changes nothing
  // (no version, no audit entry, no fleet cache dropped), as a general-settings save or a triage PATCH without changes;
  // proposed, it would ask a reviewer to approve nothing.
  if (content === live.content) {
    if (principal.role === 'superadmin') return { status: 'ok', applied: true, version: read };
    const unchanged = `the text is version ${read} as it stands: nothing to propose`;
    throw new ValidationFailed(`The proposed ${name} changes nothing: ${unchanged}.`, [{ loc: ['body', 'content'], msg: unchanged, type: 'rules' }]);
  }
  if (principal.role === 'superadmin') {
    try {
      await transactWrite([
        ...newVersionActions(name, content, value, base, principal.username, null, now),
        audit(principal, caller, { action: 'rules_update', target: name, detail: { rule_set: name, version: base + 1, based_on: base } }, now),
        // The fleet view's cache generation moves with the version (shared/rules/README.md).
        generationAction(),
      ]);
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
      const current = await currentVersion(name);
      if (expected !== undefined) throw staleEdit(name, expected, current);
      throw new Conflict(`${name} changed while this edit was saved (now version ${current}); nothing was changed. Reload it and apply the edit again.`, {
        current_version: current,
      });
    }
    return { status: 'ok', applied: true, version: base + 1 };
  }
  // The same text on the same version pending from the same proposer already (a proposal retried after its answer was
  // lost): that one, not a second for a reviewer to approve twice.
  const pendingSame = async () =>
    (await pendingChangesOf(principal.username)).find((c) => c.rule_set === name && c.base_version === base && c.proposed_content === content);
  const same = await pendingSame();
  if (same) return { status: 'pending', applied: false, change_id: same.change_id, base_version: base };
  const change: ConfigChange = {
    change_id: newChangeId(now),
    rule_set: name,
    status: 'pending',
    proposed_by: principal.username,
    proposed_at: now.toISOString(),
    base_version: base,
    base_default_digest: base === 0 ? defaultRuleDigest(name) : null,
    proposed_content: content,
    reviewed_by: null,
    reviewed_at: null,
    review_note: null,
    applied_version: null,
  };
  const hold = holdPendingAction(change);
  const actions = [
    ...newChangeActions(change),
    audit(principal, caller, { action: 'change_propose', target: change.change_id, detail: { rule_set: name, base_version: base } }, now),
    hold,
    // A proposal naming its version is made only while that version is current.
    ...(expected === undefined ? [] : [ruleSetAtVersion(name, expected)]),
  ];
  try {
    await transactWrite(actions);
  } catch (error) {
    if (error instanceof ConditionFailed && error.failed.includes(actions.indexOf(hold))) {
      // The same proposal sent at the same moment (a retry while the first was under way) made it: that one.
      const made = await pendingSame();
      if (made) return { status: 'pending', applied: false, change_id: made.change_id, base_version: base };
      throw new Conflict(
        `${principal.username} already has ${PENDING_PER_PROPOSER} proposals waiting for review; nothing was proposed. Withdraw one, or wait for a superadmin to approve or reject one.`,
      );
    }
    if (error instanceof ConditionFailed && expected !== undefined) throw staleEdit(name, expected, await currentVersion(name));
    throw error;
  }
  return { status: 'pending', applied: false, change_id: change.change_id, base_version: base };
}

/**
 * Superadmins see every proposal, others only their own: the newest CHANGES_READ_LIMIT, and `total` counts them all
 * (counted only when the listing is full, since below the limit it holds every match).
 */
export async function listConfigChanges(principal: Principal, status: ChangeStatus | ''): Promise<{ changes: ConfigChangeSummary[]; total: number }> {
  const filter = { status: status || undefined, proposedBy: principal.role === 'superadmin' ? undefined : principal.username };
  const changes = await listChanges(filter);
  return { changes, total: changes.length < CHANGES_READ_LIMIT ? changes.length : await countChanges(filter) };
}

/** A proposal someone else made is as unknown to a non-superadmin as a missing one. */
async function visibleChange(principal: Principal, changeId: string): Promise<ConfigChange> {
  const change = await getChange(changeId);
  if (!change || (principal.role !== 'superadmin' && change.proposed_by !== principal.username)) throw new NotFound(`No config change ${changeId}.`);
  return change;
}

export interface ConfigChangeDetail extends Omit<ConfigChange, 'base_default_digest'> {
  /** The live version now; approving a proposal whose base_version differs answers 409. */
  current_version: number;
  stale: boolean;
  current_content: string;
  /**
   * The text of the version it was based on (base_version), to show what the proposal itself changes once the rules
   * have moved on (a decided or stale proposal's diff against the live text shows others' changes too); null for the
   * shipped default of an earlier release, which is not kept.
   */
  base_content: string | null;
  /** For a pending health or risk rules proposal: the clusters it would move (nothing written). */
  impact: RuleImpact | null;
}

export async function configChangeDetail(principal: Principal, changeId: string): Promise<ConfigChangeDetail> {
  const change = await visibleChange(principal, changeId);
  const live = await liveRuleSet(change.rule_set);
  const { base_default_digest: _digest, ...shown } = change;
  return {
    ...shown,
    current_version: live.version,
    stale: change.status === 'pending' && (live.version !== change.base_version || defaultReplaced(change)),
    current_content: live.content,
    base_content: await baseContentOf(change, live),
    impact: change.status === 'pending' ? await impactOf(change) : null,
  };
}

async function baseContentOf(change: ConfigChange, live: LiveRuleSet): Promise<string | null> {
  if (change.base_version === 0) return defaultReplaced(change) ? null : defaultRuleText(change.rule_set);
  if (change.base_version === live.version) return live.content;
  return (await getRuleSetVersion(change.rule_set, change.base_version))?.content ?? null;
}

/** Proposals of the scored rule sets carry an impact; the others `impact: null` (defaults.ts SCORED_RULE_SETS). */
const SCORED: ReadonlySet<RuleSetName> = new Set<RuleSetName>(SCORED_RULE_SETS);

/** The impact preview scores the whole fleet: its engine loads with the first detail that shows one, not with every settings request. */
const impactPreview = () => import('./impact-preview.js');

async function impactOf(change: ConfigChange): Promise<RuleImpact | null> {
  if (!SCORED.has(change.rule_set)) return null;
  const check = (await ruleCheck()).checkRuleText(change.rule_set, change.proposed_content);
  return check.ok ? impactOfValue(check.value) : null;
}

/** A checked health or risk rules value scored on the current fleet; plain copies, as the loader gives the engine (zod's output objects are slower to read). */
const impactOfValue = async (value: unknown) => (await impactPreview()).proposalImpact(JSON.parse(JSON.stringify(value)) as HealthRules | RiskRules);

/**
 * What a health or risk rules text would change before it is saved or proposed (POST …/impact): refused with 422 as
 * a PUT would refuse it, else scored on the current fleet as a pending proposal's impact is. Nothing is written.
 */
export async function ruleTextImpact(name: ScoredRuleSet, content: string): Promise<RuleImpact> {
  return impactOfValue(await checked(name, content));
}

export interface ReviewResult {
  status: 'approved' | 'rejected';
  change_id: string;
  applied: boolean;
  /** The version the approval created. */
  version?: number;
}

/**
 * 409 for a review or withdrawal of a proposal no longer pending, read afresh (it may have just lost a race): who
 * closed it, how and when, so a reviewer retrying or acting on a stale list sees what happened; nothing was changed.
 */
async function notPending(changeId: string): Promise<Conflict> {
  const change = await getChange(changeId);
  const closedBy =
    change && change.status !== 'pending'
      ? ` (${change.status} by ${change.reviewed_by ?? 'unknown'} at ${change.reviewed_at ? displayTime(change.reviewed_at) : 'an unknown time'})`
      : '';
  return new Conflict(`Config change ${changeId} is not pending: it was reviewed or withdrawn already${closedBy}; nothing was changed.`, {
    change_status: change?.status ?? null,
    reviewed_by: change?.reviewed_by ?? null,
    reviewed_at: change?.reviewed_at ?? null,
  });
}

/**
 * Approve: the proposed YAML becomes the next version and the proposal is
 * marked approved in one transaction, valid only while the rule set is still
 * at the proposal's base version and the proposal still pending. Reject: marks it.
 */
export async function reviewConfigChange(
  principal: Principal,
  changeId: string,
  review: { action: 'approve' | 'reject'; note: string },
  caller: Caller,
  now = new Date(),
): Promise<ReviewResult> {
  const change = await getChange(changeId);
  if (!change) throw new NotFound(`No config change ${changeId}.`);
  const reviewed = () => notPending(changeId);
  if (change.status !== 'pending') throw await reviewed();

  if (review.action === 'reject') {
    try {
      await transactWrite([
        reviewChangeAction(changeId, { status: 'rejected', by: principal.username, note: review.note, appliedVersion: null }, now),
        audit(principal, caller, { action: 'change_reject', target: changeId, detail: { rule_set: change.rule_set, note: review.note } }, now),
        releasePendingAction(change),
      ]);
    } catch (error) {
      if (error instanceof ConditionFailed) throw await reviewed();
      throw error;
    }
    return { status: 'rejected', change_id: changeId, applied: false };
  }

  // Approval is a second person's look: a superadmin's own change applies by PUT, so one here was made before its
  // author became a superadmin, and approving it would read as reviewed when nobody else had looked at it.
  if (change.proposed_by === principal.username)
    throw new Forbidden(
      `${principal.username} proposed config change ${changeId}: another superadmin approves it, or withdraw it and apply the change with PUT, as a superadmin's edit applies.`,
    );
  // Still at version 0, but not the default it was made on: the version condition below cannot tell.
  if (defaultReplaced(change) && (await currentVersion(change.rule_set)) === 0) throw staleDefault(change.rule_set);
  const check = (await ruleCheck()).checkRuleText(change.rule_set, change.proposed_content);
  if (!check.ok)
    throw new Conflict(`Config change ${changeId} no longer passes the ${change.rule_set} checks (${check.message}); reject it and propose again.`);
  const version = change.base_version + 1;
  const versionActions = newVersionActions(
    change.rule_set,
    change.proposed_content,
    check.value,
    change.base_version,
    principal.username,
    { change_id: changeId, proposed_by: change.proposed_by },
    now,
  );
  const proposalIndex = versionActions.length;
  try {
    await transactWrite([
      ...versionActions,
      reviewChangeAction(changeId, { status: 'approved', by: principal.username, note: review.note, appliedVersion: version }, now),
      audit(
        principal,
        caller,
        { action: 'change_approve', target: changeId, detail: { rule_set: change.rule_set, version, proposed_by: change.proposed_by, note: review.note } },
        now,
      ),
      releasePendingAction(change),
      generationAction(),
    ]);
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    if (error.failed.includes(proposalIndex)) throw await reviewed();
    const currentVersion = (await getCurrentRuleSet(change.rule_set))?.version ?? 0;
    throw new Conflict(
      currentVersion === change.base_version
        ? `Version ${version} of ${change.rule_set} exists already although the rule set is at version ${currentVersion}; nothing was changed. An operator should check the rules table.`
        : `${change.rule_set} is at version ${currentVersion}, not version ${change.base_version} that this proposal was based on; nothing was changed. Reject it and propose the edit against the current version.`,
      { current_version: currentVersion, base_version: change.base_version },
    );
  }
  return { status: 'approved', change_id: changeId, applied: true, version };
}

/**
 * Withdraw: the proposer takes back a pending proposal (`withdrawn`, beyond DESIGN §7), which frees
 * its place among their PENDING_PER_PROPOSER. Only its proposer: a superadmin rejects one instead.
 */
export async function withdrawConfigChange(
  principal: Principal,
  changeId: string,
  caller: Caller,
  now = new Date(),
): Promise<{ status: 'withdrawn'; change_id: string }> {
  const change = await visibleChange(principal, changeId);
  if (change.proposed_by !== principal.username)
    throw new Forbidden(`Only ${change.proposed_by}, who proposed config change ${changeId}, may withdraw it; a superadmin rejects it instead.`);
  const closed = () => notPending(changeId);
  if (change.status !== 'pending') throw await closed();
  try {
    await transactWrite([
      reviewChangeAction(changeId, { status: 'withdrawn', by: principal.username, note: '', appliedVersion: null }, now),
      audit(principal, caller, { action: 'change_withdraw', target: changeId, detail: { rule_set: change.rule_set } }, now),
      releasePendingAction(change),
    ]);
  } catch (error) {
    if (error instanceof ConditionFailed) throw await closed();
    throw error;
  }
  return { status: 'withdrawn', change_id: changeId };
}

export interface VersionsPage {
  rule_set: RuleSetName;
  current_version: number;
  versions: Omit<RuleSetVersion, 'name' | 'parsed'>[];
  total: number;
  page: number;
  page_size: number;
  /** Version 0's text: this release's shipped default, which a PUT of it restores as the next version. */
  shipped_default: string;
}

/**
 * Applied versions of a rule set, newest first, with the shipped default's text beside them: version 0 is
 * not stored (it is the running release's file), so without it nothing could go back to it once edited.
 */
export async function ruleSetVersions(name: RuleSetName, page: number, pageSize: number): Promise<VersionsPage> {
  const { versions, total } = await listRuleSetVersions(name, page, pageSize);
  return {
    rule_set: name,
    current_version: total,
    versions: versions.map(({ name: _name, parsed: _parsed, ...v }) => v),
    total,
    page,
    page_size: pageSize,
    shipped_default: defaultRuleText(name),
  };
}
