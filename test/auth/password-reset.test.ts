// A superadmin's password reset against DynamoDB Local, with SES a local server speaking
// its protocol: the mailed link, a reset again, a deactivation meanwhile, expiry, a stale
// read, and the reset made if, and only if, its audit entry is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../shared/auth/passwords.js';
import { principalOf, type Principal } from '../../shared/auth/principal.js';
import { activate, hashInvitationToken, login } from '../../shared/auth/sign-in.js';
import { inviteUser, listManagedUsers, removeUser, resetUserPassword, updateUser } from '../../shared/auth/user-admin.js';
import { resetSettings } from '../../shared/config/env.js';
import { listAudit } from '../../shared/db/audit.js';
import { ConditionFailed } from '../../shared/db/client.js';
import { activeSuperadminCount, createUser, getUser, startPasswordReset, type UserRecord } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import { type DynamoProxy, type Watcher, whileHeld } from '../support/dynamo-proxy.js';
import { startFakeSes, type FakeSes } from '../support/fake-ses.js';
import { useTestJwtSecret } from '../support/tokens.js';

/** Each test's failed logins from an address of its own: the address limit stays out of these tests. */
const callerAt = (n: number) => ({ ip: `192.0.2.${n}`, userAgent: 'vitest' });
const caller = callerAt(1);
/** The reset's answer body (its Reply also carries the account's new ETag: test/auth/user-admin.test.ts). */
const resetAnswer = async (...args: Parameters<typeof resetUserPassword>) => (await resetUserPassword(...args)).body;
let ses: FakeSes;
let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  useTestJwtSecret();
  ses = await startFakeSes();
  Object.assign(process.env, { AWS_ENDPOINT_URL_SES: ses.endpoint, APP_URL: 'https://fleet.example.com/' });
});

afterAll(async () => {
  await ses.close();
  delete process.env.SES_FROM_ADDRESS;
});

async function account(username: string, role: UserRecord['role'], password: string): Promise<UserRecord> {
  return createUser({
    username,
    name: `The ${username}`,
    email: `${username}@example.com`,
    role,
    is_active: true,
    password_hash: await hashPassword(password),
  });
}

async function superadmin(username: string): Promise<Principal> {
  return principalOf(await account(username, 'superadmin', 'superadmin-password'));
}

const listed = async (email: string) => (await listManagedUsers()).users.find((u) => u.email === email);

describe('a password reset', () => {
  it('mails a link to the reset page; the link sets the new password and the old one no longer signs in', async () => {
    process.env.SES_FROM_ADDRESS = 'fleet@example.com';
    ses.mode = 'ok';
    const actor = await superadmin('reset-mailer');
    await account('mailed', 'viewer', 'mailed-password-1');
    const answer = await resetAnswer(actor, 'mailed@example.com', caller);
    expect(answer).toEqual({ status: 'ok', email_sent: true, expires_at: expect.any(String) });
    const mail = ses.received.at(-1)!;
    expect(mail.form).toMatchObject({
      Action: 'SendEmail',
      Source: 'fleet@example.com',
      'Destination.ToAddresses.member.1': 'mailed@example.com',
      'Message.Subject.Data': 'Your Fleet Health Service password was reset',
    });
    const text = mail.form['Message.Body.Text.Data']!;
    expect(text).toContain('The reset-mailer reset your Fleet Health Service password');
    expect(text).toContain('within 3 days');
    const token = text.match(/https:\/\/fleet\.example\.com\/reset-password#token=([\w-]+)/)?.[1];
    expect(token).toMatch(/^[\w-]{43}$/);
    await expect(login('mailed', 'mailed-password-1', callerAt(2))).rejects.toMatchObject({ status: 401 });
    expect((await activate(token!, 'mailed-password-2', caller)).user).toMatchObject({ username: 'mailed', role: 'viewer' });
    expect((await login('mailed', 'mailed-password-2', caller)).user.username).toBe('mailed');
  });

  it('again: a new link replaces the first, which no longer works though unexpired', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const actor = await superadmin('reset-twice');
    await account('twice', 'admin', 'twice-password-1');
    const first = await resetAnswer(actor, 'twice@example.com', caller);
    const second = await resetAnswer(actor, 'twice@example.com', caller);
    expect(second.reset_token).not.toBe(first.reset_token);
    await expect(activate(first.reset_token!, 'twice-password-2', caller)).rejects.toMatchObject({ status: 400 });
    expect((await activate(second.reset_token!, 'twice-password-3', caller)).user.username).toBe('twice');
    const entries = (await listAudit('password_reset')).filter((e) => e.target === 'twice@example.com');
    expect(entries.map((e) => e.detail.renewed ?? false).sort()).toEqual([false, true]);
  });

  it('deactivated meanwhile: still an account (not an invitation), its link sets nothing until it is reactivated', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const actor = await superadmin('reset-then-off');
    await account('paused', 'viewer', 'paused-password-1');
    const { reset_token: token } = await resetAnswer(actor, 'paused@example.com', caller);
    await updateUser(actor, 'paused@example.com', { is_active: false }, caller);
    // Not a pending invitation: its role and activation still change as an account's do.
    expect(await listed('paused@example.com')).toMatchObject({ is_active: false, invitation_pending: false, password_reset_pending: true });
    await expect(activate(token!, 'paused-password-2', caller)).rejects.toMatchObject({ status: 400 });
    expect((await getUser('paused'))?.password_hash).toBeUndefined();
    await expect(resetAnswer(actor, 'paused@example.com', caller)).rejects.toMatchObject({ status: 409 });
    await updateUser(actor, 'paused@example.com', { role: 'admin', is_active: true }, caller);
    expect((await activate(token!, 'paused-password-2', caller)).user).toMatchObject({ username: 'paused', role: 'admin' });
  });

  it('an expired link sets nothing, and the account stays reset', async () => {
    const user = await account('lapsed-reset', 'viewer', 'lapsed-password-1');
    const token = 'lapsed-reset-token-lapsed-reset-token-lapse';
    await startPasswordReset(user, hashInvitationToken(token), new Date(Date.now() - 1000));
    await expect(activate(token, 'lapsed-password-2', caller)).rejects.toMatchObject({ status: 400 });
    expect(await getUser('lapsed-reset')).toMatchObject({ password_reset_at: expect.any(String) });
    expect((await getUser('lapsed-reset'))?.password_hash).toBeUndefined();
  });

  it('on an account changed since it was read: ConditionFailed, and nothing changes', async () => {
    const user = await account('stale-reset', 'viewer', 'stale-password-1');
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later updated_at than the read's
    const actor = await superadmin('stale-resetter');
    await updateUser(actor, 'stale-reset@example.com', { role: 'admin' }, caller);
    await expect(
      startPasswordReset(user, hashInvitationToken('stale-token-stale-token-stale-token-stale-t'), new Date(Date.now() + 60_000)),
    ).rejects.toBeInstanceOf(ConditionFailed);
    expect((await login('stale-reset', 'stale-password-1', caller)).user.role).toBe('admin');
  });

  it('is made if, and only if, its audit entry is written: refused, the password still signs in and no mail goes', async () => {
    process.env.SES_FROM_ADDRESS = 'fleet@example.com';
    ses.mode = 'ok';
    const actor = await superadmin('reset-unaudited');
    await account('kept', 'viewer', 'kept-password-1');
    const mails = ses.received.length;
    const refuseAudit: Watcher = ({ input }) =>
      JSON.stringify(input.TransactItems ?? input.TableName ?? '').includes('-audit"')
        ? { type: 'AccessDeniedException', message: 'the audit table refused the write' }
        : undefined;
    const stopRefusing = proxy.watch(refuseAudit);
    try {
      await expect(resetAnswer(actor, 'kept@example.com', caller)).rejects.toThrow('the audit table refused the write');
    } finally {
      stopRefusing();
    }
    expect(ses.received.length).toBe(mails);
    expect(await listed('kept@example.com')).toMatchObject({ password_reset_pending: false });
    expect((await login('kept', 'kept-password-1', caller)).user.username).toBe('kept');
  });
  it("of a superadmin: the count of active superadmins stays as it was, through the reset and its link's use", async () => {
    delete process.env.SES_FROM_ADDRESS;
    const actor = await superadmin('reset-boss');
    await account('other-boss', 'superadmin', 'other-boss-password-1');
    const count = await activeSuperadminCount();
    const { reset_token: token } = await resetAnswer(actor, 'other-boss@example.com', caller);
    expect(await activeSuperadminCount()).toBe(count);
    expect((await activate(token!, 'other-boss-password-2', caller)).user.role).toBe('superadmin');
    expect(await activeSuperadminCount()).toBe(count);
  });

  it('a link outlives no account: deleted and invited again under the same address, the new pending account is not its to take', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const actor = await superadmin('reset-then-gone');
    await account('reborn', 'viewer', 'reborn-password-1');
    const { reset_token: resetToken } = await resetAnswer(actor, 'reborn@example.com', caller);
    await removeUser(actor, 'reborn@example.com', caller);
    const { activation_token: invitation } = await inviteUser(actor, { email: 'reborn@example.com', display_name: 'Reborn', role: 'superadmin' }, caller);
    await expect(activate(resetToken!, 'taken-over-password', caller)).rejects.toMatchObject({ status: 400 });
    expect(await listed('reborn@example.com')).toMatchObject({ is_active: false, invitation_pending: true, password_reset_pending: false });
    // Nor does an invitation's token reset an account: it activates only the pending account it was made for.
    expect((await activate(invitation!, 'reborn-password-2', caller)).user.role).toBe('superadmin');
    await expect(activate(invitation!, 'reborn-password-3', caller)).rejects.toMatchObject({ status: 400 });
  });

  it("refuses a directory (LDAP) account's: its password is the directory's", async () => {
    const actor = await superadmin('reset-ldap');
    await createUser({ username: 'dir-person', name: 'Dir Person', email: 'dir-person@example.com', role: 'viewer', is_active: true, source: 'ldap' });
    await expect(resetAnswer(actor, 'dir-person@example.com', caller)).rejects.toMatchObject({
      status: 409,
      message: expect.stringMatching(/directory/),
    });
    expect(await listed('dir-person@example.com')).toMatchObject({ password_reset_pending: false });
  });

  it('with mail off, a bad APP_URL is not read: the reset (and an invitation) answers its token; with mail on, it is 503 before anything is stored', async () => {
    const actor = await superadmin('reset-bad-url');
    await account('url-person', 'viewer', 'url-password-1');
    Object.assign(process.env, { APP_URL: 'fleet.example.com' });
    delete process.env.SES_FROM_ADDRESS;
    resetSettings();
    try {
      process.env.SES_FROM_ADDRESS = 'fleet@example.com';
      resetSettings();
      // A ConfigError: the error middleware answers it 503 naming the setting (the invitation's own test goes through the route).
      await expect(resetAnswer(actor, 'url-person@example.com', caller)).rejects.toMatchObject({
        name: 'ConfigError',
        message: expect.stringMatching(/^APP_URL/),
      });
      expect((await login('url-person', 'url-password-1', caller)).user.username).toBe('url-person');
      delete process.env.SES_FROM_ADDRESS;
      resetSettings();
      const reset = await resetAnswer(actor, 'url-person@example.com', caller);
      expect(reset).toMatchObject({ email_sent: false, email_problem: 'not_configured', reset_token: expect.stringMatching(/^[\w-]{43}$/) });
      const invited = await inviteUser(actor, { email: 'url-invitee@example.com', display_name: 'Url Invitee', role: 'viewer' }, caller);
      expect(invited).toMatchObject({ email_sent: false, email_problem: 'not_configured', activation_token: expect.stringMatching(/^[\w-]{43}$/) });
    } finally {
      Object.assign(process.env, { APP_URL: 'https://fleet.example.com/' });
      resetSettings();
    }
  });

  it('when SES refuses the mail, answers email_sent false with the reset token, which works', async () => {
    process.env.SES_FROM_ADDRESS = 'fleet@example.com';
    ses.mode = 'reject';
    try {
      const actor = await superadmin('reset-refused');
      await account('refused-mail', 'viewer', 'refused-password-1');
      const answer = await resetAnswer(actor, 'refused-mail@example.com', caller);
      expect(answer).toEqual({
        status: 'ok',
        email_sent: false,
        email_problem: 'refused',
        reset_token: expect.stringMatching(/^[\w-]{43}$/),
        expires_at: expect.any(String),
      });
      expect((await activate(answer.reset_token!, 'refused-password-2', caller)).user.username).toBe('refused-mail');
    } finally {
      ses.mode = 'ok';
    }
  });

  it('overtakes a login whose password check it lands during: the login reads the account again and is refused', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const actor = await superadmin('reset-racer');
    await account('racer', 'viewer', 'racer-password-1');
    // The login's reads of the account: the first before its password check, the next one after it, held while the reset lands.
    let reads = 0;
    const held = whileHeld(
      proxy,
      (r) => r.operation === 'GetItem' && JSON.stringify(r.input.Key ?? {}).includes('USER#racer') && ++reads === 2,
      () => resetAnswer(actor, 'racer@example.com', caller),
    );
    const raced = await login('racer', 'racer-password-1', callerAt(3)).catch((e: unknown) => e);
    const { reset_token: token } = (await held.done()) as { reset_token?: string };
    expect(raced).toMatchObject({ status: 401 });
    expect((await activate(token!, 'racer-password-2', caller)).user.username).toBe('racer');
  });
  it('ends the failed logins its owner piled up against the forgotten password: the new one signs in at once', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const actor = await superadmin('reset-unlocker');
    await account('forgetful', 'viewer', 'forgetful-password-1');
    for (let i = 0; i < 5; i++) await expect(login('forgetful', `guess-${i}`, callerAt(20 + i))).rejects.toMatchObject({ status: 401 });
    await expect(login('forgetful', 'forgetful-password-1', callerAt(30))).rejects.toMatchObject({ status: 429 });
    const { reset_token: token } = await resetAnswer(actor, 'forgetful@example.com', caller);
    await activate(token!, 'forgetful-password-2', caller);
    expect((await login('forgetful', 'forgetful-password-2', callerAt(31))).user.username).toBe('forgetful');
  });
});
