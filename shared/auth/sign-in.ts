// Signing in and out: login (LDAP first when configured, then built-in users),
// invitation activation, logout, and the current user.
import { auditAction, writeAudit } from '../db/audit.js';
import { ConditionFailed, transactWrite } from '../db/client.js';
import {
  clearLoginAttempts,
  forgetLoginAttempts,
  type LoginReservation,
  releaseAddressAttempt,
  rememberAddress,
  reserveAddressAttempt,
  reserveLoginAttempt,
  revokeToken,
  revokeTokenAction,
} from '../db/sessions.js';
import { activateInvitation, changeUserEmail, createUser, EmailTaken, getUser, setPassword, type UserRecord } from '../db/users.js';
import { BadRequest, Conflict, Forbidden, ServiceUnavailable, TooManyRequests, Unauthorized } from '../http/errors.js';
import type { RequestToken } from '../http/route.js';
import { SESSION_MAX_LIMIT, TOKEN_TTL_LIMIT } from '../config/tokens.js';
import type { Principal } from './principal.js';
import { sessionEnd, signAccessToken } from './jwt.js';
import { ldapAnswers, ldapAuthenticate, ldapConfigured, ldapRetryAfterSeconds, type LdapIdentity } from './ldap.js';
import { DECOY_HASH, hashPassword, verifyPassword } from './passwords.js';
import { callerOf, type Caller } from './caller.js';
import { hashInvitationToken } from './invitation-token.js';
import { credentialStamp, principalOf } from './principal.js';
import { mayInvite } from './roles.js';
import { canonicalUsername } from './username.js';
import { createLogger, errorFields } from '../log.js';
import type { LoginResponse, UserInfo } from '../routes/auth.js';

const log = createLogger('sign-in');

export type { LoginResponse, UserInfo };

export { callerOf, hashInvitationToken, type Caller };

export const userInfo = (p: Principal): UserInfo => ({ id: p.userId, username: p.username, name: p.name, email: p.email, role: p.role });

/**
 * Resolves once Date.now() reads `epochMs`. One timer is not enough: libuv times it from the loop's cached
 * clock, which lags behind Date.now() after busy work in the same turn (a password hash), so it can fire early.
 */
export async function untilClockReads(epochMs: number): Promise<void> {
  for (let wait = epochMs - Date.now(); wait > 0; wait = epochMs - Date.now()) await new Promise((resolve) => setTimeout(resolve, wait));
}

async function issue(user: UserRecord): Promise<LoginResponse> {
  // Just after a deactivation, tokens of this second are refused (iat has one-second resolution):
  // wait for the next second rather than hand out a token that is dead on arrival.
  await untilClockReads((user.tokens_valid_from ?? 0) * 1000);
  const principal = principalOf(user);
  // Stamped with the password as read: a change or reset written meanwhile ends it (resolvePrincipal).
  return { access_token: await signAccessToken(principal, credentialStamp(user)), token_type: 'bearer', user: userInfo(principal) };
}

/** Why an LDAP login that LDAP accepted gets no account: the account's email (shared/auth/README.md). */
type LdapRefusal = 'ldap_no_email' | 'ldap_email_taken';

type LdapAccount = { user: UserRecord } | { conflict: UserRecord } | { refused: LdapRefusal; account?: UserRecord };

/**
 * The account an LDAP identity logs in as (keyed on the directory's own uid, so another
 * name that reaches the same entry makes no second account): an account created from LDAP
 * (`source: ldap`), or a new one on first login. A username held by a built-in
 * account is never granted through LDAP: `conflict` instead, and the login
 * goes on with the built-in password only. No account is made or kept without an email
 * of its own: `refused` then, and nothing is stored. An account made, or its email moved,
 * is audited in the same transaction (`user_create`, `user_update`), as an invitation is.
 */
async function accountForLdap(identity: LdapIdentity, caller: Caller): Promise<LdapAccount> {
  const { username, email } = identity;
  const linkable = (user: UserRecord) => (user.source === 'ldap' ? followDirectoryMail(user, identity, caller) : { conflict: user });
  const existing = await getUser(username);
  if (existing) return linkable(existing);
  if (!email) return { refused: 'ldap_no_email' };
  const now = new Date();
  const audit = ldapAudit(identity, caller, 'user_create', email, { source: 'ldap', role: identity.role, name: identity.name }, now);
  try {
    return { user: await createUser({ username, name: identity.name, email, role: identity.role, is_active: true, source: 'ldap' }, now, [audit]) };
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    // The username was taken meanwhile (by another first login of the same LDAP user, or by a built-in account), or the email is another account's.
    const raced = await getUser(username);
    if (raced) return linkable(raced);
    if (error instanceof EmailTaken) return { refused: 'ldap_email_taken' };
    throw error;
  }
}

/**
 * An active LDAP account takes the directory's mail when it changed, so it is addressed as the directory names it:
 * also an account stored without an email, or with one another account shares, from before an email named one
 * account. A mail that is missing or another account's leaves the account's own email as it is; an account
 * without one is refused.
 */
async function followDirectoryMail(user: UserRecord, identity: LdapIdentity, caller: Caller): Promise<LdapAccount> {
  const wanted = identity.email;
  const keep = (account: UserRecord): LdapAccount => (account.email ? { user: account } : { refused: wanted ? 'ldap_email_taken' : 'ldap_no_email', account });
  if (!user.is_active) return { user }; // refused as inactive, unchanged
  if (!wanted || user.email.toLowerCase() === wanted) return keep(user);
  const now = new Date();
  const audit = ldapAudit(identity, caller, 'user_update', wanted, { source: 'ldap', before: { email: user.email }, after: { email: wanted } }, now, user.role);
  try {
    return { user: await changeUserEmail(user, wanted, now, [audit]) };
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    // A concurrent login of the same user may have moved it already; otherwise the account keeps its email.
    const now = await getUser(user.username);
    if (!(error instanceof EmailTaken)) {
      if (now?.email.toLowerCase() === wanted) return { user: now };
      throw error;
    }
    log.warn("LDAP mail is another account's; the account keeps its email", { username: user.username });
    return keep(user);
  }
}

/** An account of the service's own (the bootstrap superadmin, an invitee), not one a directory login made. */
const isBuiltIn = (account: UserRecord | undefined): boolean => account !== undefined && account.source !== 'ldap';

/**
 * The built-in account the password opens, if any; `checked`: a stored password was compared (not the decoy);
 * `found`: an account has the name (whatever its source), as the failure's audit entry needs to know.
 */
async function builtInAccount(username: string, password: string): Promise<{ user?: UserRecord; checked: boolean; found: boolean }> {
  const user = await getUser(username);
  if (!user?.password_hash) {
    // Checked against the decoy when the user is unknown: the same time, so timing does not reveal which usernames exist.
    await verifyPassword(password, DECOY_HASH);
    return { checked: false, found: user !== undefined };
  }
  if (!(await verifyPassword(password, user.password_hash))) return { checked: true, found: true };
  // The check took ≈ 0.4 s. A reset or a password change meanwhile ends every session from its second on, and
  // a token signed later from the account as read before it would outlive that: the account is read again and
  // the token signed from what it is now, the password still the one checked (else refused as a wrong one).
  const now = await getUser(username);
  return { checked: true, found: true, ...(now?.id === user.id && now.password_hash === user.password_hash ? { user: now } : {}) };
}

/** The audit entry of what an LDAP login did to its account: the directory's user is the actor. */
const ldapAudit = (
  identity: LdapIdentity,
  caller: Caller,
  action: 'user_create' | 'user_update',
  target: string,
  detail: Record<string, unknown>,
  now: Date,
  role = identity.role,
) => auditAction({ actor: identity.username, role, action, target, detail, ip: caller.ip, user_agent: caller.userAgent }, now);

/** The answer to a refused LDAP login, saying what the directory entry lacks. */
function ldapRefusal(reason: LdapRefusal, identity: LdapIdentity): Forbidden | Conflict {
  return reason === 'ldap_no_email'
    ? new Forbidden(
        `Your directory entry (${identity.username}) has no usable mail attribute, and every account needs an email address: ask the directory administrator to add one.`,
      )
    : new Conflict(
        `The mail of your directory entry (${identity.username}), ${identity.email}, is another account's email already, and an email names one account: ask the directory administrator to change it, or an administrator to remove the other account.`,
      );
}

/** The problem body's `limit` on a login's 429: the username's lockout, or the caller's address's failures (the sign-in page says which). */
export const USERNAME_LIMIT = 'username';
export const ADDRESS_LIMIT = 'address';

/** What a failed login's audit entry names when the name typed cannot be a username. */
export const NOT_A_USERNAME = '(not a username)';
/** What it names when no account has the name typed (often a password typed into the wrong field, too). */
export const NO_SUCH_ACCOUNT = '(no such account)';

/** The caller's address when the lockout may go by it: not an edge server's, shared by many viewers (shared/auth/caller.ts). */
const trustedAddress = (caller: Caller): string | undefined => (caller.edgeAddress ? undefined : caller.ip);

export async function login(rawUsername: string, password: string, caller: Caller): Promise<LoginResponse> {
  // The lockout, the account and the LDAP bind all see this one form (shared/auth/username.ts).
  const username = canonicalUsername(rawUsername);
  // A name no account can have is often a password typed into the wrong field: the audit log (read by
  // every admin) records that it was not a username, never the text (nor its length).
  // A name no account has is recorded as such, for the same reason. `exists`: whether the name is an account's (or a
  // directory entry's that answered to the password typed), when already known; otherwise the account is looked up.
  // An account is named as it is: a directory login may type a name other than its account's (`account`, the entry's uid).
  const audit = async (action: 'login' | 'login_failed', user: UserRecord | undefined, detail: Record<string, unknown>, exists?: boolean, account?: string) => {
    const named = username === null ? NOT_A_USERNAME : (user?.username ?? account ?? ((exists ?? (await getUser(username))) ? username : NO_SUCH_ACCOUNT));
    await writeAudit({ actor: named, role: user?.role ?? null, action, target: named, detail, ip: caller.ip, user_agent: caller.userAgent });
  };

  // Failures from one address are bounded before anything else (MAX_FAILED_LOGINS_PER_ADDRESS, shared/db/sessions.ts).
  const fromAddress = await reserveFromAddress(caller, audit);

  if (username === null) {
    // No account can have this name: refused as a wrong password is (same answer, a password-check's time),
    // and without a reservation of the name, since no password is checked against anyone.
    await verifyPassword(password, DECOY_HASH);
    await audit('login_failed', undefined, { reason: 'invalid_username' });
    throw new Unauthorized('Invalid username or password.');
  }

  // One of the 5 checks per 15 minutes is reserved before any password is looked at (LDAP or built-in);
  // from a network this name signed in from lately, in that network's own window once strangers filled the name's.
  const reservation = await reserveLoginAttempt(username, new Date(), trustedAddress(caller));
  if (!reservation.reserved) {
    // No password is checked: the address's place is given back, so one person's retries against their own
    // locked name (a script with an old password) cannot fill the address's window for everyone behind it.
    if (fromAddress) await releaseAddressAttempt(caller.ip, fromAddress);
    // Audited once per lockout window: every refusal would cost an attacker nothing and flood the log.
    if (reservation.firstRefusal) await audit('login_failed', undefined, { reason: 'locked_out' });
    throw new TooManyRequests('Too many failed logins for this username; try again later.', reservation.retryAfterSeconds, { limit: USERNAME_LIMIT });
  }
  // Reserved in a known network's own window just as the name's was first refused: that lockout is audited all the same.
  if (reservation.nameLockedOut) await audit('login_failed', undefined, { reason: 'locked_out' });

  let user: UserRecord | undefined;
  let method = 'local';
  let ldapUnavailable = false;
  if (ldapConfigured() && isBuiltIn(await getUser(username))) {
    // A built-in account's name is never bound: its password (the bootstrap superadmin's among them) would reach
    // the directory, over ldap:// in clear text, and no bind signs in to a built-in account anyway (accountForLdap).
    // The directory is asked whether it takes binds instead (ldapAnswers): the same round trips, the same 503 in an outage.
    ldapUnavailable = (await ldapAnswers()) === 'unavailable';
  } else if (ldapConfigured()) {
    const identity = await ldapAuthenticate(username, password);
    if (identity === 'unavailable') ldapUnavailable = true;
    else if (identity !== 'refused') {
      const account = await accountForLdap(identity, caller);
      if ('refused' in account) {
        // The right password, but no account may be given (the reservation stays counted, as for an inactive account).
        await audit('login_failed', account.account, { reason: account.refused, method: 'ldap' }, true, identity.username);
        throw ldapRefusal(account.refused, identity);
      }
      if ('user' in account) {
        user = account.user;
        method = 'ldap';
      } else {
        log.warn('LDAP identity collides with a built-in account; LDAP not used for it', {
          username: identity.username,
          account_source: account.conflict.source,
        });
        await audit('login_failed', account.conflict, { reason: 'ldap_identity_conflict', method: 'ldap', account_source: account.conflict.source });
      }
    }
  }
  const builtIn = user ? undefined : await builtInAccount(username, password);
  user ??= builtIn?.user;

  if (!user && ldapUnavailable) {
    // The directory could not check the password: "wrong password" would be untrue. Counted as any failure
    // (the name's and the address's places stay taken), and the same whether or not a built-in password was
    // checked: a place given back for one and not the other would tell which names have one, and the address's
    // window is what bounds the decoy checks and audit entries such requests cost.
    await audit('login_failed', undefined, { reason: builtIn?.checked ? 'bad_credentials' : 'ldap_unavailable', ldap: 'unavailable' }, builtIn?.found);
    throw new ServiceUnavailable('Your password could not be checked: the directory (LDAP) is not answering. Try again shortly.', ldapRetryAfterSeconds());
  }
  if (!user?.is_active) {
    // The reservation stays counted: it is this failure.
    await audit('login_failed', user, { reason: user ? 'inactive' : 'bad_credentials' }, builtIn?.found);
    throw new Unauthorized('Invalid username or password.');
  }
  // The token first: a signing key that cannot be read (503) then leaves neither a login in the
  // audit log nor the failed attempts cleared.
  const answer = await issue(user);
  await clearLoginAttempts(username, reservation);
  if (fromAddress) await releaseAddressAttempt(caller.ip, fromAddress);
  await rememberKnownAddress(username, caller);
  await audit('login', user, { method });
  return answer;
}

/** A signed-in caller's network, known to the username from now on (shared/db/sessions.ts); a failure to note it fails no sign-in. */
async function rememberKnownAddress(username: string, caller: Caller): Promise<void> {
  const address = trustedAddress(caller);
  if (address === undefined) return;
  await rememberAddress(username, address).catch((error: unknown) => log.warn('could not note the network a sign-in came from', errorFields(error)));
}

/**
 * One place in the caller's address window, or 429 once it holds MAX_FAILED_LOGINS_PER_ADDRESS failures
 * (audited once per window, like a username's lockout). Undefined when the address is an edge
 * server's (shared/auth/caller.ts): many viewers share it, and the per-username lockout still holds.
 */
async function reserveFromAddress(
  caller: Caller,
  audit: (action: 'login_failed', user: undefined, detail: Record<string, unknown>) => Promise<unknown>,
): Promise<Extract<LoginReservation, { reserved: true }> | undefined> {
  if (caller.edgeAddress) return undefined;
  const reservation = await reserveAddressAttempt(caller.ip);
  if (reservation.reserved) return reservation;
  if (reservation.firstRefusal) await audit('login_failed', undefined, { reason: 'address_locked_out' });
  throw new TooManyRequests('Too many failed logins from your network; try again later.', reservation.retryAfterSeconds, { limit: ADDRESS_LIMIT });
}

export async function activate(token: string, password: string, caller: Caller): Promise<LoginResponse> {
  // Audited in the activation's own transaction: an activation is never committed unaudited.
  // The password is hashed (scrypt: ≈ 0.4 s of CPU, 128 MiB) only for a usable invitation: this route is open to anyone.
  const taken = await activateInvitation(
    hashInvitationToken(token),
    () => hashPassword(password),
    new Date(),
    (after, purpose) => [
      auditAction({
        actor: after.username,
        role: after.role,
        action: purpose === 'reset' ? 'password_set' : 'activate',
        target: after.email,
        ip: caller.ip,
        user_agent: caller.userAgent,
      }),
    ],
    (inviter, invited) => inviter?.is_active === true && mayInvite(inviter.role, invited.role),
  );
  if (!taken) throw new BadRequest('The link’s token is invalid, already used or expired.');
  if ('withdrawn' in taken) {
    // Audited as a failed sign-in: a demoted superadmin's try to come back through it leaves a trace.
    const { withdrawn } = taken;
    await writeAudit({
      actor: withdrawn.username,
      role: withdrawn.role,
      action: 'login_failed',
      target: withdrawn.email,
      detail: { reason: 'invitation_withdrawn', method: 'activate', invited_by: withdrawn.invited_by ?? null },
      ip: caller.ip,
      user_agent: caller.userAgent,
    });
    throw new BadRequest(
      'This invitation no longer holds: whoever sent it can no longer grant its role (demoted, deactivated or deleted). Ask an administrator to invite you again.',
    );
  }
  // After the link is spent and the password set: a window that could not be ended is logged, never a failed activation.
  if (taken.purpose === 'reset') {
    await forgetLoginAttempts(taken.user.username, trustedAddress(caller)).catch((error: unknown) =>
      log.warn('could not end the failed-login windows of a reset account', errorFields(error)),
    );
  }
  const answer = await issue(taken.user);
  await rememberKnownAddress(taken.user.username, caller);
  return answer;
}

/**
 * One's own password, changed (beyond the contract): the current one checked behind the login lockout (so this
 * route is no way around it), the new one stored with every earlier token ended, and a new token answered so the
 * caller stays signed in. An LDAP account's password is the directory's: 409.
 */
export async function changePassword(principal: Principal, current: string, next: string, caller: Caller): Promise<LoginResponse> {
  const user = await getUser(principal.username);
  // Deactivated since the request's token was checked: no password change, and no new token.
  if (!user || user.id !== principal.userId || !user.is_active) throw new Unauthorized('Your session has ended; sign in again.');
  if (user.source === 'ldap') throw new Conflict('Your password is your directory’s (LDAP): change it there. The service keeps no password for this account.');
  // Reset by a superadmin since this session began (a reset ends sessions, so only one racing it gets here).
  if (!user.password_hash) throw new Unauthorized('Your password was reset; choose a new one through the link you were given.');
  // Before the lockout's reservation: it compares the caller's own two inputs, and must not cost a login attempt.
  if (current === next) throw new BadRequest('The new password is the current one: choose another.');
  const failed = (reason: 'bad_credentials' | 'locked_out') =>
    writeAudit({
      actor: user.username,
      role: user.role,
      action: 'login_failed',
      target: user.username,
      detail: { reason, method: 'password_change' },
      ip: caller.ip,
      user_agent: caller.userAgent,
    });
  const reservation = await reserveLoginAttempt(user.username, new Date(), trustedAddress(caller));
  // The name's first lockout is audited by whichever request meets it, this route's too (as login does).
  if (!reservation.reserved) {
    if (reservation.firstRefusal) await failed('locked_out');
    throw new TooManyRequests('Too many wrong passwords for this username; try again later.', reservation.retryAfterSeconds, { limit: USERNAME_LIMIT });
  }
  if (reservation.nameLockedOut) await failed('locked_out');
  if (!(await verifyPassword(current, user.password_hash))) {
    // The reservation stays counted, as a failed login's does.
    await failed('bad_credentials');
    throw new BadRequest('The current password is not right: nothing was changed.');
  }
  const now = new Date();
  const audit = auditAction(
    { actor: user.username, role: user.role, action: 'password_change', target: user.email, ip: caller.ip, user_agent: caller.userAgent },
    now,
  );
  let after: UserRecord;
  try {
    after = await setPassword(user, await hashPassword(next), now, [audit]);
  } catch (error) {
    if (error instanceof ConditionFailed) throw new Conflict('Your account was changed meanwhile (by an administrator, or another session); try again.');
    throw error;
  }
  await clearLoginAttempts(user.username, reservation);
  return issue(after);
}

/** The longest session a client can report: none outlives JWT_SESSION_MAX_SECONDS' bound (shared/config/tokens.ts). */
const SESSION_DURATION_MAX_SECONDS = SESSION_MAX_LIMIT;

/**
 * X-Session-Duration: seconds the client session lasted, to the millisecond; anything else
 * (unparsable, negative, longer than a token lives) is recorded as null. The rounding also keeps
 * the audit item writable: DynamoDB refuses numbers such as 5e-324 or 1e16 as given.
 */
export function parseSessionDuration(header: string | undefined): number | null {
  // Decimal only, as a query's numbers (routes/days.ts): Number() reads `0x10` as 16.
  if (header === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(header)) return null;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 && seconds <= SESSION_DURATION_MAX_SECONDS ? Math.round(seconds * 1000) / 1000 : null;
}

/** A renewal that read the session before its logout's revocation was written signs within this (a route's timeout is 29 s). */
const RACING_RENEWAL_SECONDS = 60;
const nowSeconds = () => Math.floor(Date.now() / 1000);

export async function logout(principal: Principal, token: RequestToken, sessionHeader: string | undefined, caller: Caller): Promise<{ ok: true }> {
  // The session is revoked, every token of it (a renewal keeps its id), until none of them can be alive: a copy
  // of the tab holding an older token, or a newer renewal of it, ends with the one signed out. Bounded by the
  // settings' largest values, not their values now: a token signed before JWT_TTL_SECONDS or
  // JWT_SESSION_MAX_SECONDS was lowered keeps the life it was signed with.
  const until = Math.min(nowSeconds() + TOKEN_TTL_LIMIT + RACING_RENEWAL_SECONDS, token.authTime + SESSION_MAX_LIMIT);
  try {
    // Revoked and audited together: a logout in the log is one that happened.
    await transactWrite([
      revokeTokenAction(token.id, until),
      auditAction({
        actor: principal.username,
        role: principal.role,
        action: 'logout',
        target: principal.username,
        detail: { session_duration_seconds: parseSessionDuration(sessionHeader) },
        ip: caller.ip,
        user_agent: caller.userAgent,
      }),
    ]);
  } catch (error) {
    // The audit table refused (throttled, say): the token is revoked all the same, since the console forgets it
    // whatever the answer and a copy must not outlive the logout. The missing entry is logged instead.
    await revokeToken(token.id, until);
    log.error('logout revoked its token but could not audit it', { username: principal.username, ...errorFields(error) });
  }
  return { ok: true };
}

/**
 * A fresh token for the caller's session (`POST /api/auth/renew`, which the console calls as a token
 * passes half its life): the account as it is now (role, name), the same session id (a logout revokes
 * every token of it) and password stamp, JWT_TTL_SECONDS from now but never past the session's end,
 * sign-in + JWT_SESSION_MAX_SECONDS. A tab left open (a wall screen) stays signed in until then. Nothing
 * is stored or audited: the sign-in was, and the logout will be.
 *
 * An LDAP account's session is not extended: only the directory says whether its person may still sign in, and
 * it is asked with the password, at sign-in. So the session ends when its first token does (JWT_TTL_SECONDS after
 * it, as set then), and someone removed from the directory is out by then; the renewal answers a token with that
 * same end, the end of the token it renews (every renewal's is the first's). Not sign-in + JWT_TTL_SECONDS as set
 * now: lowered below the session's age that was a token expired when signed, which signed out a tab whose token
 * still lived; raised, a renewal past what the sign-in gave.
 */
export async function renew(principal: Principal, token: RequestToken): Promise<LoginResponse> {
  const account = await getUser(principal.username);
  const ldap = account?.source === 'ldap';
  const session = { id: token.id, authTime: token.authTime, ...(ldap ? { lastsSeconds: token.expiresAt - token.authTime } : {}) };
  // Past its end (JWT_SESSION_MAX_SECONDS lowered since the token was signed): a 401, not a token already expired.
  if (sessionEnd(session) <= nowSeconds()) throw new Unauthorized('This session has reached its longest life: sign in again.');
  return { access_token: await signAccessToken(principal, token.credential, session), token_type: 'bearer', user: userInfo(principal) };
}
