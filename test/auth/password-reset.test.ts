// A superadmin's password reset against DynamoDB Local, with SES a local server speaking
// its protocol: the mailed link, a reset again, a deactivation meanwhile, expiry, a stale
// read, and the reset made if, and only if, its audit entry is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../shared/auth/passwords.js';
import { principalOf, type Principal } from '../../shared/auth/principal.js';
import { activate, hashInvitationToken, login } from '../../shared/auth/sign-in.js';
import { listManagedUsers, resetUserPassword, updateUser } from '../../shared/auth/user-admin.js';
import { listAudit } from '../../shared/db/audit.js';
import { ConditionFailed } from '../../shared/db/client.js';
import { createUser, getUser, startPasswordReset, type UserRecord } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy, Watcher } from '../support/dynamo-proxy.js';
import { startFakeSes, type FakeSes } from '../support/fake-ses.js';
import { useTestJwtSecret } from '../support/tokens.js';

/** Each test's failed logins from an address of its own: the address limit stays out of these tests. */
const callerAt = (n: number) => ({ ip: `192.0.2.${n}`, userAgent: 'vitest' });
const caller = callerAt(1);
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
    const answer = await resetUserPassword(actor, 'mailed@example.com', caller);
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
    const first = await resetUserPassword(actor, 'twice@example.com', caller);
    const second = await resetUserPassword(actor, 'twice@example.com', caller);
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
    const { reset_token: token } = await resetUserPassword(actor, 'paused@example.com', caller);
    await updateUser(actor, 'paused@example.com', { is_active: false }, caller);
    // Not a pending invitation: its role and activation still change as an account's do.
    expect(await listed('paused@example.com')).toMatchObject({ is_active: false, invitation_pending: false, password_reset_pending: true });
    await expect(activate(token!, 'paused-password-2', caller)).rejects.toMatchObject({ status: 400 });
    expect((await getUser('paused'))?.password_hash).toBeUndefined();
    await expect(resetUserPassword(actor, 'paused@example.com', caller)).rejects.toMatchObject({ status: 409 });
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
      await expect(resetUserPassword(actor, 'kept@example.com', caller)).rejects.toThrow('the audit table refused the write');
    } finally {
      stopRefusing();
    }
    expect(ses.received.length).toBe(mails);
    expect(await listed('kept@example.com')).toMatchObject({ password_reset_pending: false });
    expect((await login('kept', 'kept-password-1', caller)).user.username).toBe('kept');
  });
});
