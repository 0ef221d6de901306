// Users repository: accounts, invitations and the count of active superadmins,
// all in the `users` table. Accounts share one partition, so listing them is a
// Query, not a Scan (a fleet team has tens to hundreds of users, not millions).
//
// The active-superadmin counter changes in the same transaction as the account
// it counts, with a condition on decrements, so concurrent demotions can never
// leave the service without an active superadmin.
//
// An email names one account: the account's email item (`EMAIL#<email>`, holding
// its id) is written, on the condition that it does not exist, in the transaction
// that gives an account that email, and deleted with the account.
import { randomUUID } from 'node:crypto';
import * as z from '../zod.js';
import { Role } from '../auth/roles.js';
import { canonicalEmail, canonicalUsername } from '../auth/username.js';
import { ConditionFailed, getItem, putItem, queryAll, tableName, transactWrite, type TransactItem } from './client.js';

const USERS_PK = 'USERS';
const userKey = (username: string) => ({ pk: USERS_PK, sk: `USER#${username.toLowerCase()}` });
const SUPERADMIN_COUNTER = { pk: USERS_PK, sk: 'COUNTER#active-superadmins' };
const invitationKey = (tokenHash: string) => ({ pk: `INVITATION#${tokenHash}`, sk: 'INVITATION' });
const emailKey = (email: string) => ({ pk: USERS_PK, sk: `EMAIL#${email.toLowerCase()}` });
/**
 * Marks that the bootstrap superadmin of this username was made once: deleted later (a shared account retired),
 * it is not made again. Per username: a deployment naming another bootstrap account still makes that one.
 */
const bootstrappedKey = (username: string) => ({ pk: USERS_PK, sk: `BOOTSTRAP#${username.toLowerCase()}` });

/** Whether the bootstrap superadmin `username` was ever made here (ensureBootstrapAdmin). */
export async function wasBootstrapped(username: string): Promise<boolean> {
  return (await getItem('users', bootstrappedKey(username), true)) !== undefined;
}

/** The marker's write, in the transaction that makes the account. */
export function bootstrappedAction(username: string, now = new Date()): TransactItem {
  return { Put: { TableName: tableName('users'), Item: { ...bootstrappedKey(username), username, at: now.toISOString() } } };
}

/** The marker alone, for a bootstrap account made before markers existed. */
export async function markBootstrapped(username: string, now = new Date()): Promise<void> {
  await putItem('users', { ...bootstrappedKey(username), username, at: now.toISOString() });
}

/** The email is another account's already: the account was not created or changed (a ConditionFailed, so 409 if it escapes). */
export class EmailTaken extends ConditionFailed {
  constructor(
    readonly email: string,
    failed: number[] = [],
  ) {
    super(failed);
    this.name = 'EmailTaken';
    this.message = `the email ${email} is another account's`;
  }
}

export const UserRecord = z.object({
  id: z.string(),
  username: z.string(),
  name: z.string(),
  email: z.string(),
  role: Role,
  is_active: z.boolean(),
  /** Absent for invited users until they activate, and for LDAP users. */
  password_hash: z.optional(z.string()),
  source: z._default(z.enum(['local', 'ldap']), 'local'),
  invited_by: z.optional(z.string()),
  activated_at: z.optional(z.string()),
  /** Epoch second from which this account's tokens count (their session's sign-in, auth_time, at or after it): set at each deactivation, password change or reset. */
  tokens_valid_from: z.optional(z.number()),
  /**
   * The account's current single-use link: a pending account's invitation, or an active one's password reset. Its
   * token's hash (only that one is taken, so a renewal retires the token before it) and when it expires. Absent once
   * used, and on accounts invited before they were recorded.
   */
  invitation_hash: z.optional(z.string()),
  invitation_expires_at: z.optional(z.string()),
  /** When a superadmin reset the password (startPasswordReset), until its owner chooses a new one through the link. */
  password_reset_at: z.optional(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  /**
   * Moves by one with every write of the account (putAsRead), from 1 when it is made: what an If-Match of the
   * settings routes names (`"u3"`, shared/auth/user-admin.ts). 0: an account last written before versions were kept.
   */
  version: z._default(z.int(), 0),
});
export type UserRecord = z.infer<typeof UserRecord>;

export interface NewUser {
  username: string;
  name: string;
  email: string;
  role: Role;
  is_active: boolean;
  password_hash?: string;
  source?: 'local' | 'ldap';
  invited_by?: string;
}

const countsAsSuperadmin = (u: Pick<UserRecord, 'role' | 'is_active'>) => u.role === 'superadmin' && u.is_active;

/**
 * The tokens_valid_from a deactivation at `now` records: the next whole second, since iat has
 * one-second resolution and a token issued earlier in this same second must stop working too.
 */
const tokensValidFromAfter = (now: Date) => Math.floor(now.getTime() / 1000) + 1;

function parseUser(item: Record<string, unknown>): UserRecord {
  return UserRecord.parse(item);
}

export async function getUser(username: string): Promise<UserRecord | undefined> {
  const item = await getItem('users', userKey(username), true);
  return item ? parseUser(item) : undefined;
}

export async function listUsers(): Promise<UserRecord[]> {
  const items = await queryAll('users', {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :user)',
    ExpressionAttributeValues: { ':pk': USERS_PK, ':user': 'USER#' },
    ConsistentRead: true,
  });
  return items.map(parseUser);
}

/**
 * Users are addressed by email in the settings API; usernames may differ (bootstrap, LDAP).
 * Every account with this email: more than one only in accounts stored before an email named one account.
 */
export async function findUsersByEmail(email: string): Promise<UserRecord[]> {
  const wanted = email.toLowerCase();
  return (await listUsers()).filter((u) => u.email.toLowerCase() === wanted);
}

/**
 * Runs `actions` plus the claim of `email` for `record` (last), as one transaction: EmailTaken when the email is
 * another account's. Accounts stored before email items existed hold none, so the account list is checked too;
 * the item makes it atomic between new holders (two first logins at once, an invitation and a login).
 */
async function writeClaimingEmail(record: UserRecord, actions: TransactItem[]): Promise<void> {
  if ((await findUsersByEmail(record.email)).some((u) => u.id !== record.id)) throw new EmailTaken(record.email);
  const claim: TransactItem = {
    Put: {
      TableName: tableName('users'),
      Item: { ...emailKey(record.email), user_id: record.id, username: record.username },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  try {
    await transactWrite([...actions, claim]);
  } catch (error) {
    // Only the claim failed: the email. Anything else (the username taken, the account changed) is the caller's ConditionFailed.
    if (error instanceof ConditionFailed && error.failed.length === 1 && error.failed[0] === actions.length) throw new EmailTaken(record.email, error.failed);
    throw error;
  }
}

/** The deletion of `user`'s email item, when it holds one (accounts stored before email items hold none). */
async function releaseEmail(user: UserRecord): Promise<TransactItem[]> {
  if (!user.email) return [];
  const claim = await getItem('users', emailKey(user.email), true);
  // Unconditional: the same transaction requires the account unchanged, and while it is, its email item stays its own.
  return claim?.user_id === user.id ? [{ Delete: { TableName: tableName('users'), Key: emailKey(user.email) } }] : [];
}

/** The counter change that goes with moving an account from `before` to `after`. */
function superadminCounterUpdate(before: UserRecord | null, after: UserRecord | null): TransactItem | null {
  const delta = (after && countsAsSuperadmin(after) ? 1 : 0) - (before && countsAsSuperadmin(before) ? 1 : 0);
  if (delta === 0) return null;
  return {
    Update: {
      TableName: tableName('users'),
      Key: SUPERADMIN_COUNTER,
      UpdateExpression: 'ADD active_superadmins :delta',
      // A decrement must leave at least one active superadmin.
      ...(delta < 0 ? { ConditionExpression: 'active_superadmins > :one', ExpressionAttributeValues: { ':delta': delta, ':one': 1 } } : {}),
      ...(delta > 0 ? { ExpressionAttributeValues: { ':delta': delta } } : {}),
    },
  };
}

/** Index of the counter action in a transaction built by these functions, when present. */
export const COUNTER_ACTION_INDEX = 1;

function newRecord(user: NewUser, now: Date): UserRecord {
  const at = now.toISOString();
  // Only the canonical form: an account under any other name could never log in, nor be locked out with its twin.
  const username = canonicalUsername(user.username);
  if (username === null) throw new Error(`Not a valid username: ${JSON.stringify(user.username)}`);
  // Likewise the email: the settings routes address an account by it, so one without a valid address could not be administered.
  const email = canonicalEmail(user.email);
  if (email === null) throw new Error(`Not a valid email address: ${JSON.stringify(user.email)}`);
  return {
    id: randomUUID(),
    ...user,
    username,
    email,
    source: user.source ?? 'local',
    created_at: at,
    updated_at: at,
    version: 1,
  };
}

/** The version the next write of `before` gives it. */
const nextVersion = (before: UserRecord) => before.version + 1;

/** The condition that `before` (as read) is still what is stored: its updated_at and its version (none stored: 0). */
function storedAsRead(before: UserRecord) {
  const unversioned = before.version === 0 ? ' OR attribute_not_exists(#version)' : '';
  return {
    ConditionExpression: `updated_at = :seen AND (#version = :version${unversioned})`,
    ExpressionAttributeNames: { '#version': 'version' },
    ExpressionAttributeValues: { ':seen': before.updated_at, ':version': before.version },
  };
}

/**
 * The Put of `after` over the account as read (`before`, compared by updated_at and version): ConditionFailed when
 * it changed meanwhile. `after` carries the next version (nextVersion), which callers answer.
 */
function putAsRead(before: UserRecord, after: UserRecord): TransactItem {
  if (after.version !== nextVersion(before)) throw new Error(`a write of ${before.username} must move its version to ${nextVersion(before)}`);
  return { Put: { TableName: tableName('users'), Item: { ...userKey(after.username), ...after }, ...storedAsRead(before) } };
}

function putNew(record: UserRecord): TransactItem {
  return {
    Put: {
      TableName: tableName('users'),
      Item: { ...userKey(record.username), ...record },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Creates an account; ConditionFailed([0]) when the username is taken, EmailTaken when the email is. */
export async function createUser(user: NewUser, now = new Date(), audit: TransactItem[] = []): Promise<UserRecord> {
  const record = newRecord(user, now);
  const counter = superadminCounterUpdate(null, record);
  await writeClaimingEmail(record, [putNew(record), ...(counter ? [counter] : []), ...audit]);
  return record;
}

export interface Invitation {
  username: string;
  expires_at: string;
  /** The account it was made for, and its role then (absent from invitations made before they were recorded). */
  user_id?: string;
  role?: string;
  /** What taking it does: activate a pending account, or set an active account's password after a reset. */
  purpose: LinkPurpose;
}
export type LinkPurpose = 'invitation' | 'reset';

/**
 * Creates an inactive account and its single-use invitation (stored only as a hash), with `audit` (its audit entry)
 * in the same transaction; the same ConditionFailed and EmailTaken meanings as createUser.
 */
export async function createInvitedUser(user: NewUser, tokenHash: string, expiresAt: Date, now = new Date(), audit: TransactItem[] = []): Promise<UserRecord> {
  const record: UserRecord = { ...newRecord({ ...user, is_active: false }, now), invitation_hash: tokenHash, invitation_expires_at: expiresAt.toISOString() };
  await writeClaimingEmail(record, [putNew(record), putInvitation(record, tokenHash, expiresAt), ...audit]);
  return record;
}

/**
 * The single-use link item of `record` as it is invited, or as its password is reset (its id and role: only that
 * account, so, takes it). A reset's item says so; an invitation's has no purpose, as those stored before resets.
 */
function putInvitation(record: UserRecord, tokenHash: string, expiresAt: Date, purpose: LinkPurpose = 'invitation'): TransactItem {
  return {
    Put: {
      TableName: tableName('users'),
      Item: {
        ...invitationKey(tokenHash),
        username: record.username,
        user_id: record.id,
        role: record.role,
        ...(purpose === 'reset' ? { purpose } : {}),
        expires_at: expiresAt.toISOString(),
        ttl: Math.floor(expiresAt.getTime() / 1000) + 86_400,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/**
 * Invites a pending account (`before`, as read) again: a new token and expiry, and the name and role of the new
 * invitation, with `audit` in the same transaction. The earlier token stops activating it (its item is deleted
 * when its hash is recorded, and activation requires the account's current hash). ConditionFailed([0]) when the
 * account changed meanwhile (activated, deleted, or invited again).
 */
export async function renewInvitation(
  before: UserRecord,
  changes: Pick<UserRecord, 'name' | 'role' | 'invited_by'>,
  tokenHash: string,
  expiresAt: Date,
  now = new Date(),
  audit: TransactItem[] = [],
): Promise<UserRecord> {
  const after: UserRecord = {
    ...before,
    ...changes,
    invitation_hash: tokenHash,
    invitation_expires_at: expiresAt.toISOString(),
    updated_at: now.toISOString(),
    version: nextVersion(before),
  };
  await transactWrite([putAsRead(before, after), putInvitation(after, tokenHash, expiresAt), ...retireLink(before), ...audit]);
  return after;
}

/**
 * Resets the password of an active local account as read (`before`): the password goes (it no longer signs in),
 * every token issued until now ends, and a single-use link (the token's hash, until `expiresAt`) lets its owner
 * choose a new one, with `audit` in the same transaction. A reset before it stops working. ConditionFailed([0])
 * when the account changed meanwhile.
 */
export async function startPasswordReset(
  before: UserRecord,
  tokenHash: string,
  expiresAt: Date,
  now = new Date(),
  audit: TransactItem[] = [],
): Promise<UserRecord> {
  const { password_hash: _password, ...account } = before;
  const after: UserRecord = {
    ...account,
    password_reset_at: now.toISOString(),
    invitation_hash: tokenHash,
    invitation_expires_at: expiresAt.toISOString(),
    tokens_valid_from: tokensValidFromAfter(now),
    updated_at: now.toISOString(),
    version: nextVersion(before),
  };
  await transactWrite([putAsRead(before, after), putInvitation(after, tokenHash, expiresAt, 'reset'), ...retireLink(before), ...audit]);
  return after;
}

/**
 * Whether `invitation` may be taken by `account` as it is now: the account it was made for, by its current token,
 * and in the state it was made for. An invitation activates only a pending account with the role it was made for
 * (not one deleted and invited again under the same address, perhaps as superadmin, nor one whose role changed
 * since; one recorded before these were is refused too, as it expired within 7 days anyway). A reset sets the
 * password only of an account still active and still reset.
 */
function linkTakes(invitation: Invitation, tokenHash: string, account: UserRecord | undefined): account is UserRecord {
  if (!account || account.id !== invitation.user_id) return false;
  if (invitation.purpose === 'reset') return account.is_active && account.password_reset_at !== undefined && account.invitation_hash === tokenHash;
  if (account.is_active || account.activated_at || account.role !== invitation.role) return false;
  // Nor by a token a later invitation of the same account replaced.
  return account.invitation_hash === undefined || account.invitation_hash === tokenHash;
}

async function getInvitation(tokenHash: string): Promise<Invitation | undefined> {
  const item = await getItem('users', invitationKey(tokenHash), true);
  return item
    ? {
        username: String(item.username),
        expires_at: String(item.expires_at),
        ...(typeof item.user_id === 'string' ? { user_id: item.user_id } : {}),
        ...(typeof item.role === 'string' ? { role: item.role } : {}),
        purpose: item.purpose === 'reset' ? 'reset' : 'invitation',
      }
    : undefined;
}

/** The deletion of the link item `before` holds, when it holds one (a renewal's or a reset's: the earlier token stops working). */
const retireLink = (before: UserRecord): TransactItem[] =>
  before.invitation_hash ? [{ Delete: { TableName: tableName('users'), Key: invitationKey(before.invitation_hash) } }] : [];

/**
 * Takes a single-use link: deletes it (it must still exist and be unexpired) and, in the same transaction,
 * activates its pending account with the password (an invitation) or gives its active account that password
 * (a reset). Returns the account and what the link was, or undefined when the link is not usable.
 */
export async function activateInvitation(
  tokenHash: string,
  /** Hashes the password: called only once the link is known usable (a made-up token costs no scrypt). */
  passwordHash: () => Promise<string>,
  now = new Date(),
  /** Written in the same transaction: the audit entry of what the link did, which only the account read here can name. */
  audit: (after: UserRecord, purpose: LinkPurpose) => TransactItem[] = () => [],
  /** Whether the account that sent an invitation (undefined: deleted) may still grant what it offers. */
  vouches: (inviter: UserRecord | undefined, invited: UserRecord) => boolean = () => true,
): Promise<{ user: UserRecord; purpose: LinkPurpose } | { withdrawn: UserRecord } | undefined> {
  const invitation = await getInvitation(tokenHash);
  if (!invitation || Date.parse(invitation.expires_at) <= now.getTime()) return undefined;
  const before = await getUser(invitation.username);
  if (!linkTakes(invitation, tokenHash, before)) return undefined;
  // An invitation carries its sender's authority: it admits no one once the sender lost it (demoted, deactivated,
  // deleted), where a superadmin removed from office could come back through one sent before, for up to 7 days.
  // The sender's account, as read, is checked in the activation's transaction: a demotion racing it wins.
  const senderChecks: TransactItem[] = [];
  if (invitation.purpose === 'invitation' && before.invited_by) {
    const inviter = await getUser(before.invited_by);
    if (!inviter || !vouches(inviter, before)) return { withdrawn: before };
    senderChecks.push({ ConditionCheck: { TableName: tableName('users'), Key: userKey(inviter.username), ...storedAsRead(inviter) } });
  }
  const at = now.toISOString();
  const { invitation_hash: _hash, invitation_expires_at: _expires, password_reset_at: _reset, ...account } = before;
  const after: UserRecord =
    invitation.purpose === 'reset'
      ? // Every session ends again: one a login racing the reset may have signed (shared/auth/README.md).
        { ...account, password_hash: await passwordHash(), tokens_valid_from: tokensValidFromAfter(now), updated_at: at, version: nextVersion(before) }
      : { ...account, is_active: true, password_hash: await passwordHash(), activated_at: at, updated_at: at, version: nextVersion(before) };
  const counter = superadminCounterUpdate(before, after);
  try {
    await transactWrite([
      {
        Delete: {
          TableName: tableName('users'),
          Key: invitationKey(tokenHash),
          ConditionExpression: 'attribute_exists(pk) AND expires_at > :now',
          ExpressionAttributeValues: { ':now': at },
        },
      },
      ...(counter ? [counter] : []),
      putAsRead(before, after),
      ...senderChecks,
      ...audit(after, invitation.purpose),
    ]);
  } catch (error) {
    if (error instanceof ConditionFailed) return undefined; // used or changed concurrently
    throw error;
  }
  return { user: after, purpose: invitation.purpose };
}

/**
 * Replaces an account as read (`before`, compared by updated_at) with `after`.
 * A deactivation also records tokens_valid_from, so the tokens issued until then
 * stay refused after a later reactivation (shared/auth/principal.ts).
 * ConditionFailed.failed holds 0 when the account changed meanwhile, and
 * COUNTER_ACTION_INDEX when the change would remove the last active superadmin.
 */
export async function replaceUser(
  before: UserRecord,
  changes: Partial<Pick<UserRecord, 'role' | 'is_active' | 'name'>>,
  now = new Date(),
  audit: TransactItem[] = [],
): Promise<UserRecord> {
  const deactivated = before.is_active && changes.is_active === false;
  const after: UserRecord = {
    ...before,
    ...changes,
    ...(deactivated ? { tokens_valid_from: tokensValidFromAfter(now) } : {}),
    updated_at: now.toISOString(),
    version: nextVersion(before),
  };
  const counter = superadminCounterUpdate(before, after);
  await transactWrite([putAsRead(before, after), ...(counter ? [counter] : []), ...audit]);
  return after;
}

/**
 * Gives an account as read (`before`, compared by updated_at) another email, moving its email item:
 * EmailTaken when the new one is another account's, ConditionFailed([0]) when the account changed meanwhile.
 */
export async function changeUserEmail(before: UserRecord, email: string, now = new Date(), audit: TransactItem[] = []): Promise<UserRecord> {
  const canonical = canonicalEmail(email);
  if (canonical === null) throw new Error(`Not a valid email address: ${JSON.stringify(email)}`);
  if (canonical === before.email.toLowerCase()) return before; // its own item already (one transaction cannot put and delete it)
  const after: UserRecord = { ...before, email: canonical, updated_at: now.toISOString(), version: nextVersion(before) };
  await writeClaimingEmail(after, [putAsRead(before, after), ...(await releaseEmail(before)), ...audit]);
  return after;
}

/**
 * Gives an account as read (`before`, compared by updated_at) a new password hash, and ends every token issued
 * until now (tokens_valid_from, as a deactivation does): a password changed because it leaked must not leave
 * the leaked sessions open. ConditionFailed([0]) when the account changed meanwhile.
 */
export async function setPassword(before: UserRecord, passwordHash: string, now = new Date(), audit: TransactItem[] = []): Promise<UserRecord> {
  const after: UserRecord = {
    ...before,
    password_hash: passwordHash,
    tokens_valid_from: tokensValidFromAfter(now),
    updated_at: now.toISOString(),
    version: nextVersion(before),
  };
  await transactWrite([putAsRead(before, after), ...audit]);
  return after;
}

/** Deletes an account as read, and its email item (the email is free again); the same ConditionFailed meanings as replaceUser. */
export async function deleteUser(before: UserRecord, audit: TransactItem[] = []): Promise<void> {
  const counter = superadminCounterUpdate(before, null);
  await transactWrite([
    {
      Delete: {
        TableName: tableName('users'),
        Key: userKey(before.username),
        ...storedAsRead(before),
      },
    },
    ...(counter ? [counter] : []),
    ...audit,
    ...(await releaseEmail(before)),
  ]);
}

export async function activeSuperadminCount(): Promise<number> {
  const item = await getItem('users', SUPERADMIN_COUNTER, true);
  return Number(item?.active_superadmins ?? 0);
}
