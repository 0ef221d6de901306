// Account administration for the settings group: invitations, the user list,
// role and activation changes, deletion, and reading the audit log.
// Route-level roles come from the route table; the finer rules live here.
import { randomBytes } from 'node:crypto';
import { linkSettings } from '../config/links.js';
import { mailSettings } from '../config/mail.js';
import { AUDIT_ACTIONS, AUDIT_READ_LIMIT, auditAction, auditBound, auditEntriesPage, type AuditInput } from '../db/audit.js';
import { ConditionFailed, retryOnConflict } from '../db/client.js';
import { closeProposalsOfActions, pendingSetOf, proposerDeletedNote } from '../db/config-changes.js';
import {
  COUNTER_ACTION_INDEX,
  createInvitedUser,
  deleteUser,
  findUsersByEmail,
  listUsers,
  renewInvitation,
  replaceUser,
  startPasswordReset,
  type UserRecord,
} from '../db/users.js';
import { Conflict, Forbidden, NotFound } from '../http/errors.js';
import { userEtag } from '../http/etags.js';
import { ifMatchNumber } from '../http/if-match.js';
import { Reply } from '../http/route.js';
import { displayTime } from '../text.js';
import type { Principal } from './principal.js';
import { mayInvite, ROLES, type Role } from './roles.js';
import type { Caller } from './caller.js';
import { hashInvitationToken } from './invitation-token.js';
import type { AuditPage, InviteResponse, ManagedUser, PasswordResetResponse } from '../routes/settings.js';

export const INVITATION_DAYS = 7;
/** A password reset's link works for 3 days: it makes its holder an existing account (a superadmin, maybe), so shorter than an invitation. */
export const PASSWORD_RESET_DAYS = 3;

/**
 * Invited and not activated yet: an inactive local account that never had a password. (An account without one
 * since a reset is not: deactivated meanwhile, it is still the account it was, only its password is to be chosen.)
 */
const pendingInvitation = (u: UserRecord) => u.source === 'local' && !u.is_active && !u.password_hash && !u.activated_at && !u.password_reset_at;
const managed = (u: UserRecord): ManagedUser => ({
  id: u.id,
  email: u.email,
  display_name: u.name,
  role: u.role,
  is_active: u.is_active,
  source: u.source ?? 'local',
  invitation_pending: pendingInvitation(u),
  ...(pendingInvitation(u) && u.invitation_expires_at ? { invitation_expires_at: u.invitation_expires_at } : {}),
  password_reset_pending: u.password_reset_at !== undefined,
  ...(u.password_reset_at !== undefined && u.invitation_expires_at ? { password_reset_expires_at: u.invitation_expires_at } : {}),
  version: u.version,
});

/**
 * The account version an If-Match names (`"u3"`, shared/http/etags.ts: the version each list entry carries and each
 * write of the account moves); undefined without one (or with `*`), a 400 for anything else. PATCH and DELETE of the
 * account are applied only while it is still that version: an administrator's change made on a list read before
 * another's is a 409, never a silent overwrite. Without If-Match they apply to whatever is stored (API clients, CLIs).
 */
export const expectedUserVersion = (ifMatch: string | undefined) => ifMatchNumber(ifMatch, 'u', 'this user (its version in the users list)');

/** A PATCH's answer with the ETag of the version it left: the If-Match of a next change, with no list read between. */
export const withUserEtag = (answer: { status: 'ok'; user: ManagedUser }) => new Reply(200, answer, { ETag: userEtag(answer.user.version) });

/** 409 for a change made on an account that has moved on since it was read: nothing was changed; the answer carries what is stored now. */
function staleUser(user: UserRecord): Conflict {
  return new Conflict(
    `${user.email} was changed at ${displayTime(user.updated_at)}, after you read it (by another request: another superadmin, or another tab of yours): nothing was changed. Read it again and make your change on what is stored now.`,
    { current_etag: userEtag(user.version), current: { role: user.role, is_active: user.is_active } },
  );
}

/** Refuses (409) an If-Match `expected` that is not the account's version as read. */
function requireVersion(user: UserRecord, expected: number | undefined): void {
  if (expected !== undefined && user.version !== expected) throw staleUser(user);
}

export async function listManagedUsers(): Promise<{ users: ManagedUser[] }> {
  const users = await listUsers();
  return { users: users.sort((a, b) => a.email.localeCompare(b.email)).map(managed) };
}

export async function inviteUser(inviter: Principal, invite: { email: string; display_name: string; role: Role }, caller: Caller): Promise<InviteResponse> {
  if (!mayInvite(inviter.role, invite.role)) throw new Forbidden('Only a superadmin can invite a superadmin.');
  // The settings sending needs, read before anything is stored: a bad one (a ConfigError, answered 503) then
  // leaves no invitee behind whose activation token was never handed out, which a retry would meet as a 409.
  if (mailSettings().fromAddress) linkSettings();
  // An address whose invitation is still pending (perhaps expired, perhaps mailed to nobody) is invited again:
  // a new token replaces the old one. An account that is one already stays a 409.
  const [existing, ...others] = await findUsersByEmail(invite.email);
  const renewing = existing && others.length === 0 && pendingInvitation(existing) ? existing : undefined;
  if (renewing?.role === 'superadmin' && inviter.role !== 'superadmin') {
    throw new Forbidden(`Only a superadmin can invite ${invite.email} again: the pending invitation is a superadmin's.`);
  }
  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  const expires = new Date(now.getTime() + INVITATION_DAYS * 86_400_000);
  // Audited in the transaction that creates the account, before any mail goes out: an invitation
  // exists if, and only if, it is recorded. Whether the mail went is the answer's (and the log's).
  const audit = auditAction(
    {
      actor: inviter.username,
      role: inviter.role,
      action: 'invite',
      target: invite.email,
      detail: { role: invite.role, expires_at: expires.toISOString(), ...(renewing ? { renewed: true, role_before: renewing.role } : {}) },
      ip: caller.ip,
      user_agent: caller.userAgent,
    },
    now,
  );
  try {
    if (renewing) {
      await renewInvitation(
        renewing,
        { name: invite.display_name, role: invite.role, invited_by: inviter.username },
        hashInvitationToken(token),
        expires,
        now,
        [audit],
      );
    } else {
      await createInvitedUser(
        { username: invite.email, name: invite.display_name, email: invite.email, role: invite.role, is_active: false, invited_by: inviter.username },
        hashInvitationToken(token),
        expires,
        now,
        [audit],
      );
    }
  } catch (error) {
    // The username (an invitee's is the email) or the email is another account's, or the pending account was
    // accepted or invited again meanwhile: nothing was stored, no mail goes out.
    if (error instanceof ConditionFailed) {
      throw new Conflict(
        renewing
          ? `The invitation of ${invite.email} changed meanwhile (accepted, or sent again); reload and try again.`
          : `A user with email ${invite.email} exists already.`,
      );
    }
    throw error;
  }
  const { sendInvitation } = await import('../mail/invitations.js');
  const problem = await sendInvitation({ to: invite.email, displayName: invite.display_name, invitedBy: inviter.name, role: invite.role, token });
  return problem === null ? { status: 'ok', email_sent: true } : { status: 'ok', email_sent: false, email_problem: problem, activation_token: token };
}

async function targetOf(actor: Principal, email: string, what: string): Promise<UserRecord> {
  const [user, ...others] = await findUsersByEmail(email);
  if (!user) throw new NotFound(`No user with email ${email}.`);
  if (others.length > 0) {
    // Accounts stored before an email named one account: acting on one of them would be a guess.
    const accounts = [user, ...others].map((u) => `${u.username} (${u.source})`).join(', ');
    throw new Conflict(
      `The email ${email} is ambiguous: it names ${others.length + 1} accounts (${accounts}), so nothing was changed. An LDAP account takes its directory entry's mail at its next login; change that mail in the directory.`,
    );
  }
  if (user.username === actor.username) throw new Conflict(`You cannot ${what} your own account.`);
  return user;
}

function explainConflict(error: unknown): never {
  if (error instanceof ConditionFailed) {
    if (error.failed.includes(COUNTER_ACTION_INDEX)) throw new Conflict('At least one active superadmin must remain.');
    throw new Conflict('The user was changed meanwhile, by another request; reload and try again.');
  }
  throw error;
}

export async function updateUser(actor: Principal, email: string, patch: { role?: Role; is_active?: boolean }, caller: Caller, expected?: number) {
  const before = await targetOf(actor, email, 'change');
  requireVersion(before, expected);
  let after: UserRecord = before;
  const changes = {
    ...(patch.role !== undefined && patch.role !== before.role ? { role: patch.role } : {}),
    ...(patch.is_active !== undefined && patch.is_active !== before.is_active ? { is_active: patch.is_active } : {}),
  };
  const changing = Object.keys(changes).length > 0;
  // Activating it would make an account without a password, which counts as a superadmin when it
  // is one and can never sign in, and its invitation would no longer activate it: only the invitee does.
  if (changing && pendingInvitation(before)) {
    throw new Conflict(
      `${before.email} has not accepted the invitation yet: it becomes an account when they do. To change its role, invite the address again with that role.`,
    );
  }
  if (changing) {
    const now = new Date();
    // Audited in the same transaction: the change is recorded if, and only if, it is made.
    const audit = auditAction(
      {
        actor: actor.username,
        role: actor.role,
        action: 'user_update',
        target: before.email,
        detail: {
          before: { role: before.role, is_active: before.is_active },
          after: { role: changes.role ?? before.role, is_active: changes.is_active ?? before.is_active },
        },
        ip: caller.ip,
        user_agent: caller.userAgent,
      },
      now,
    );
    after = await replaceUser(before, changes, now, [audit]).catch(explainConflict);
  }
  return { status: 'ok' as const, user: managed(after) };
}

export async function removeUser(actor: Principal, email: string, caller: Caller, expected?: number): Promise<{ status: 'ok' }> {
  const before = await targetOf(actor, email, 'delete');
  requireVersion(before, expected);
  // Its next login with the directory's password would make the account again (accountForLdap), with the role map's role.
  if (before.source === 'ldap') {
    throw new Conflict(
      `${before.email} signs in through the directory (LDAP): deleting the account would not keep it out, as its next login would create it again. Deactivate it instead; remove the person from the directory to end it there.`,
    );
  }
  // Its pending proposals close with it (closeProposalsOfActions), each audited as a review's rejection is; read
  // afresh (retryOnConflict) when one was reviewed or made meanwhile.
  const attempt = async () => {
    const now = new Date();
    const pending = await pendingSetOf(before.username);
    const entry = (rest: Pick<AuditInput, 'action' | 'target' | 'detail'>) =>
      auditAction({ actor: actor.username, role: actor.role, ip: caller.ip, user_agent: caller.userAgent, ...rest }, now);
    const rejected = pending.changes.map((c) =>
      entry({ action: 'change_reject', target: c.change_id, detail: { rule_set: c.rule_set, note: proposerDeletedNote(before.username) } }),
    );
    const ids = pending.changes.map((c) => c.change_id);
    const audit = entry({
      action: 'user_delete',
      target: before.email,
      detail: { role: before.role, was_active: before.is_active, ...(ids.length ? { proposals_rejected: ids } : {}) },
    });
    await deleteUser(before, [audit, ...rejected, ...closeProposalsOfActions(before.username, pending, actor.username, now)]).catch((error) => {
      // The account itself or the last superadmin's counter: said as before (a Conflict, not retried).
      if (!(error instanceof ConditionFailed) || error.failed.some((i) => i <= COUNTER_ACTION_INDEX)) explainConflict(error);
      throw error;
    });
  };
  await retryOnConflict(attempt, 3).catch((error) => {
    if (!(error instanceof ConditionFailed)) throw error;
    throw new Conflict(
      `${before.email}'s rule proposals kept changing while it was being deleted (reviewed or made meanwhile); nothing was changed. Try again.`,
    );
  });
  return { status: 'ok' };
}

/**
 * A superadmin resets another active local account's password (beyond the contract: the way back in for someone
 * who forgot theirs, or whose password leaked). The password stops working and every session ends at once; a
 * single-use link, mailed or answered as an invitation's is, lets its owner choose a new one within
 * PASSWORD_RESET_DAYS. A reset again replaces the link. Audited in the same transaction, before any mail goes out.
 * An If-Match `"u<version>"` (`expected`), as PATCH and DELETE take: 409 `staleUser` when the account changed since.
 * The reset moves the account's version, as a PATCH that changes it does.
 */
/** Answers with the account's new ETag (a reset moves its version), so a client edits it next without reading it again. */
export async function resetUserPassword(actor: Principal, email: string, caller: Caller, expected?: number): Promise<Reply<PasswordResetResponse>> {
  const before = await targetOf(actor, email, 'reset the password of');
  // Before the state's own refusals: a reset on a stale read is told what the account is now (current_etag, current).
  requireVersion(before, expected);
  if (before.source === 'ldap') {
    throw new Conflict(`${before.email} signs in through the directory (LDAP): its password is the directory's, and is reset there.`);
  }
  if (pendingInvitation(before)) throw new Conflict(`${before.email} has not accepted the invitation yet: invite the address again for a new link.`);
  if (!before.is_active) throw new Conflict(`${before.email} is deactivated: reactivate it first, if they are to sign in again.`);
  if (mailSettings().fromAddress) linkSettings(); // as an invitation: a bad setting (503) before anything is stored
  const token = randomBytes(32).toString('base64url');
  const now = new Date();
  const expires = new Date(now.getTime() + PASSWORD_RESET_DAYS * 86_400_000);
  const audit = auditAction(
    {
      actor: actor.username,
      role: actor.role,
      action: 'password_reset',
      target: before.email,
      detail: { expires_at: expires.toISOString(), ...(before.password_reset_at ? { renewed: true } : {}) },
      ip: caller.ip,
      user_agent: caller.userAgent,
    },
    now,
  );
  await startPasswordReset(before, hashInvitationToken(token), expires, now, [audit]).catch(explainConflict);
  const { sendPasswordReset } = await import('../mail/invitations.js');
  const problem = await sendPasswordReset({ to: before.email, displayName: before.name, resetBy: actor.name, validFor: `${PASSWORD_RESET_DAYS} days`, token });
  const expires_at = expires.toISOString();
  const answer: PasswordResetResponse =
    problem === null
      ? { status: 'ok', email_sent: true, expires_at }
      : { status: 'ok', email_sent: false, email_problem: problem, reset_token: token, expires_at };
  return new Reply(200, answer, { ETag: userEtag(before.version + 1) });
}

export async function auditPage(query: { action: string; before?: string; page: number; page_size: number }): Promise<AuditPage> {
  // An instant in the keys' own form (UTC, to the millisecond), whatever offset it was written with.
  const before = query.before ? auditBound(query.before) : undefined;
  const { entries, total, olderBefore } = await auditEntriesPage(query.action || undefined, query.page, query.page_size, before);
  return {
    entries,
    action_types: AUDIT_ACTIONS,
    total,
    page: query.page,
    page_size: query.page_size,
    // 0 when nothing matches, as the issue lists answer (shared/issues/README.md, decision 54).
    total_pages: Math.ceil(total / query.page_size),
    limit: AUDIT_READ_LIMIT,
    older_before: olderBefore,
  };
}

export const rolesList = () => ({ roles: ROLES });
