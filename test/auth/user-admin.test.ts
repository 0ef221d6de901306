// Account rules against DynamoDB Local: invitations with SES (a local server
// speaking the SES protocol), expiry, concurrent changes and the last superadmin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as settings } from '../../functions/settings.js';
import { hashPassword } from '../../shared/auth/passwords.js';
import { activate, changePassword, hashInvitationToken, login, logout, untilClockReads } from '../../shared/auth/sign-in.js';
import { verifyAccessToken } from '../../shared/auth/jwt.js';
import { principalOf, resolvePrincipal } from '../../shared/auth/principal.js';
import { inviteUser, listManagedUsers, removeUser, updateUser } from '../../shared/auth/user-admin.js';
import { listAudit } from '../../shared/db/audit.js';
import { getChange, pendingChangesOf } from '../../shared/db/config-changes.js';
import { submitRuleSet, withdrawConfigChange } from '../../shared/rules/editing.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import { ConditionFailed, putItem } from '../../shared/db/client.js';
import { isTokenRevoked } from '../../shared/db/sessions.js';
import {
  activateInvitation,
  activeSuperadminCount,
  createInvitedUser,
  createUser,
  findUsersByEmail,
  getUser,
  listUsers,
  replaceUser,
} from '../../shared/db/users.js';
import type { Principal } from '../../shared/auth/principal.js';
import { startFakeSes, type FakeSes } from '../support/fake-ses.js';
import { resetSettings } from '../../shared/config/env.js';
import { useTestTables } from '../support/dynamo.js';
import { whileHeld, type DynamoProxy, type Watcher } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

const caller = { ip: '127.0.0.1', userAgent: 'vitest' };
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

/** A stored active account (an invitation holds only while its sender's account can grant it). */
async function superadmin(username: string, role: Principal['role'] = 'superadmin'): Promise<Principal> {
  const u = await createUser({
    username,
    name: username,
    email: `${username}@example.com`,
    role,
    is_active: true,
    password_hash: await hashPassword('pw-12345678'),
  });
  return { userId: u.id, username: u.username, name: u.name, email: u.email, role: u.role };
}

describe('invitations by mail', () => {
  it('sends the invitation through SES with a link to the app, and returns no token', async () => {
    process.env.SES_FROM_ADDRESS = 'fleet@example.com';
    ses.mode = 'ok';
    const inviter = await superadmin('mailer');
    const result = await inviteUser(inviter, { email: 'new.hire@example.com', display_name: 'New Hire', role: 'viewer' }, caller);
    expect(result).toEqual({ status: 'ok', email_sent: true });
    const mail = ses.received.at(-1)!;
    expect(mail.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/local\/ses\/aws4_request/);
    expect(mail.form).toMatchObject({
      Action: 'SendEmail',
      Source: 'fleet@example.com',
      'Destination.ToAddresses.member.1': 'new.hire@example.com',
      'Message.Subject.Data': 'Your Fleet Health Service invitation',
    });
    const link = mail.form['Message.Body.Text.Data']!.match(/https:\/\/fleet\.example\.com\/activate#token=([\w-]+)/);
    expect(link).not.toBeNull();
    // the mailed token activates the account
    const login = await activate(link![1]!, 'new-hire-password', caller);
    expect(login.user).toMatchObject({ email: 'new.hire@example.com', role: 'viewer' });
  });

  it('sends from a sender with a Unicode name or domain as SES takes it (encoded-word, Punycode), not refused for it', async () => {
    ses.mode = 'ok';
    const inviter = await superadmin('mailer-unicode');
    for (const [from, source] of [
      ['Flottenüberwachung <fleet@example.com>', `=?UTF-8?B?${Buffer.from('Flottenüberwachung').toString('base64')}?= <fleet@example.com>`],
      ['"Fleet Ops" <fleet@bücher.example>', '"Fleet Ops" <fleet@xn--bcher-kva.example>'],
      ['fleet@bücher.example', 'fleet@xn--bcher-kva.example'],
    ] as const) {
      process.env.SES_FROM_ADDRESS = from;
      const email = `unicode.${ses.received.length}@example.com`;
      expect(await inviteUser(inviter, { email, display_name: 'Uni Code', role: 'viewer' }, caller)).toEqual({ status: 'ok', email_sent: true });
      expect(ses.received.at(-1)!.form).toMatchObject({ Source: source, 'Destination.ToAddresses.member.1': email });
    }
  });

  it('when SES refuses the message, answers email_sent false with the activation token', async () => {
    process.env.SES_FROM_ADDRESS = 'fleet@example.com';
    ses.mode = 'reject';
    const inviter = await superadmin('mailer2');
    const result = await inviteUser(inviter, { email: 'unverified@example.com', display_name: 'Un Verified', role: 'admin' }, caller);
    // SES's refusal, told apart from a missing sender and from no answer (the inviter knows the mail did not go).
    expect(result).toEqual({ status: 'ok', email_sent: false, email_problem: 'refused', activation_token: expect.stringMatching(/^[\w-]{43}$/) });
    expect(ses.received.at(-1)!.form['Destination.ToAddresses.member.1']).toBe('unverified@example.com');
    // and the token works
    expect((await activate(result.activation_token!, 'unverified-pw', caller)).user.email).toBe('unverified@example.com');
  });

  it('when SES fails (a 5xx), answers no_answer (the mail may still arrive), not a refusal', async () => {
    process.env.SES_FROM_ADDRESS = 'fleet@example.com';
    ses.mode = 'fail';
    try {
      const inviter = await superadmin('mailer-failed');
      const result = await inviteUser(inviter, { email: 'failed.mail@example.com', display_name: 'Failed Mail', role: 'viewer' }, caller);
      expect(result).toEqual({ status: 'ok', email_sent: false, email_problem: 'no_answer', activation_token: expect.stringMatching(/^[\w-]{43}$/) });
    } finally {
      ses.mode = 'ok';
    }
  });

  it('when SES does not answer within SES_TIMEOUT_MS, answers email_sent false with the activation token', async () => {
    Object.assign(process.env, { SES_FROM_ADDRESS: 'fleet@example.com', SES_TIMEOUT_MS: '300' });
    resetSettings();
    ses.mode = 'hang';
    try {
      const inviter = await superadmin('mailer-slow');
      const result = await inviteUser(inviter, { email: 'slow.mail@example.com', display_name: 'Slow Mail', role: 'viewer' }, caller);
      // No answer: the mail may have gone all the same (the fake took it before hanging).
      expect(result).toEqual({ status: 'ok', email_sent: false, email_problem: 'no_answer', activation_token: expect.stringMatching(/^[\w-]{43}$/) });
      expect((await activate(result.activation_token!, 'slow-mail-pw', caller)).user.email).toBe('slow.mail@example.com');
    } finally {
      ses.mode = 'ok';
      delete process.env.SES_TIMEOUT_MS;
      resetSettings();
    }
  });

  it('when SES answers without end, reads at most 64 KB of it and answers email_sent false with the activation token', async () => {
    Object.assign(process.env, { SES_FROM_ADDRESS: 'fleet@example.com', SES_TIMEOUT_MS: '10000' });
    resetSettings();
    ses.mode = 'flood';
    ses.flooded = 0;
    try {
      const inviter = await superadmin('mailer-flooded');
      const result = await inviteUser(inviter, { email: 'flooded.mail@example.com', display_name: 'Flooded', role: 'viewer' }, caller);
      expect(result).toEqual({ status: 'ok', email_sent: false, email_problem: 'no_answer', activation_token: expect.stringMatching(/^[\w-]{43}$/) });
      // Cut at the bound, not read until the timeout: what the sockets' buffers held besides.
      expect(ses.flooded).toBeLessThan(32 * 1024 * 1024);
    } finally {
      ses.mode = 'ok';
      delete process.env.SES_TIMEOUT_MS;
      resetSettings();
    }
  });

  it('without SES_FROM_ADDRESS sends nothing', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const before = ses.received.length;
    const inviter = await superadmin('mailer3');
    const result = await inviteUser(inviter, { email: 'nomail@example.com', display_name: 'No Mail', role: 'viewer' }, caller);
    expect(result).toMatchObject({ email_sent: false, email_problem: 'not_configured' });
    expect(ses.received.length).toBe(before);
  });
});

describe('an invitation naming the person with characters that spoof another name', () => {
  it.each([
    ['a right-to-left override', 'Oscar \u202Enimda'],
    ['a zero-width space', 'Ana\u200B'],
    ['a line separator', 'Ana\u2028Admin'],
    ['Hangul fillers only (drawn as nothing)', '\u3164\u3164'],
  ])('with %s is refused (422 naming display_name), nothing stored or sent', async (_, name) => {
    const token = await userToken('admin', 'admin-spoofed-name');
    const email = `spoofed.${name.length}@example.com`;
    const mails = ses.received.length;
    const refused = await call(settings as Handler, {
      method: 'POST',
      path: '/api/settings/users/invite',
      routeKey: 'POST /api/settings/users/invite',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, display_name: name, role: 'viewer' }),
    });
    expect(refused.statusCode).toBe(422);
    expect(JSON.stringify(refused.json)).toContain('display_name');
    expect(await findUsersByEmail(email)).toEqual([]);
    expect(ses.received.length).toBe(mails);
  });
});

describe('an invitation to an address under an internationalised top-level domain', () => {
  it('is made: the domain as DNS spells it (xn--…) is an address like any other', async () => {
    const token = await userToken('admin', 'admin-idn-invite');
    const email = 'ops@example.xn--p1ai';
    const invited = await call(settings as Handler, {
      method: 'POST',
      path: '/api/settings/users/invite',
      routeKey: 'POST /api/settings/users/invite',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, display_name: 'Olga Ops', role: 'viewer' }),
    });
    expect(invited.statusCode).toBe(200);
    expect(await findUsersByEmail(email)).toHaveLength(1);
  });
});

describe('invitations with a bad mail setting', () => {
  const invite = (token: string, email: string) =>
    call(settings as Handler, {
      method: 'POST',
      path: '/api/settings/users/invite',
      routeKey: 'POST /api/settings/users/invite',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email, display_name: 'Bad Setting', role: 'viewer' }),
    });

  // On AWS no start-up check runs: a bad value reaches the first invitation, which must then change nothing.
  it.each([
    ['SES_FROM_ADDRESS', { SES_FROM_ADDRESS: 'ops.example.com' }, 'SES_FROM_ADDRESS must be an email address.'],
    [
      'SES_FROM_ADDRESS_local_part',
      { SES_FROM_ADDRESS: 'Fleet <bjørn@example.com>' },
      'SES_FROM_ADDRESS must have an ASCII part before the @: SES sends from no other.',
    ],
    ['APP_URL', { SES_FROM_ADDRESS: 'fleet@example.com', APP_URL: 'fleet.example.com' }, 'APP_URL must be an http(s) URL, e.g. https://fleet.example.com.'],
  ])('a bad %s answers 503 naming it and stores no invitee; set right, the same invitation goes through', async (name, bad, detail) => {
    const token = await userToken('admin', `admin-${name.toLowerCase()}`);
    const email = `bad.${name.toLowerCase()}@example.com`;
    ses.mode = 'ok';
    const mails = ses.received.length;
    Object.assign(process.env, bad);
    try {
      const refused = await invite(token, email);
      expect(refused.statusCode).toBe(503);
      expect(refused.headers?.['Content-Type']).toBe('application/problem+json');
      expect(refused.json).toMatchObject({ status: 503, title: 'Service Unavailable', detail });
      expect(await findUsersByEmail(email)).toEqual([]);
      expect((await listAudit('invite')).filter((e) => e.target === email)).toEqual([]);
      expect(ses.received.length).toBe(mails);
    } finally {
      Object.assign(process.env, { SES_FROM_ADDRESS: 'fleet@example.com', APP_URL: 'https://fleet.example.com/' });
    }
    // Not a 409 "exists already": the retry invites.
    const sent = await invite(token, email);
    expect(sent.statusCode).toBe(200);
    expect(sent.json).toEqual({ status: 'ok', email_sent: true });
  });
});

describe('activation', () => {
  it('refuses an expired invitation and leaves the account inactive', async () => {
    const token = 'expired-token-expired-token-expired-token-x';
    await createInvitedUser(
      { username: 'late@example.com', name: 'Late', email: 'late@example.com', role: 'viewer', is_active: false },
      hashInvitationToken(token),
      new Date(Date.now() - 1000),
    );
    await expect(activate(token, 'late-password', caller)).rejects.toMatchObject({ status: 400 });
    expect((await getUser('late@example.com'))?.is_active).toBe(false);
  });

  it('hashes the password only for a usable invitation: a made-up or expired token costs no scrypt', async () => {
    const hashed: string[] = [];
    const hash = async () => {
      hashed.push('called');
      return 'not-a-real-hash';
    };
    expect(await activateInvitation(hashInvitationToken('made-up-token-made-up-token-made-up-token-m'), hash)).toBeUndefined();
    expect(await activateInvitation(hashInvitationToken('expired-token-expired-token-expired-token-x'), hash)).toBeUndefined();
    expect(hashed).toEqual([]);
  });

  it('lets exactly one of two concurrent activations with the same token through', async () => {
    const token = 'race-token-race-token-race-token-race-token';
    await createInvitedUser(
      { username: 'race@example.com', name: 'Race', email: 'race@example.com', role: 'viewer', is_active: false },
      hashInvitationToken(token),
      new Date(Date.now() + 60_000),
    );
    const results = await Promise.allSettled([activate(token, 'first-password', caller), activate(token, 'second-password', caller)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
  });

  it('activates only the account an invitation was made for, with the role it was made for; a pending one changes only by a new invitation', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const boss = await superadmin('boss-inviter');
    const admin = await superadmin('an-admin', 'admin');
    // An admin invites a viewer and holds the token (no mail configured)...
    const first = await inviteUser(admin, { email: 'chief@example.com', display_name: 'Chief', role: 'viewer' }, caller);
    // ...a superadmin deletes that pending account and invites the address again, as superadmin.
    await removeUser(boss, 'chief@example.com', caller);
    const second = await inviteUser(boss, { email: 'chief@example.com', display_name: 'Chief', role: 'superadmin' }, caller);
    await expect(activate(first.activation_token!, 'taken-over', caller)).rejects.toMatchObject({ status: 400 });
    expect(await getUser('chief@example.com')).toMatchObject({ role: 'superadmin', is_active: false });

    // A pending account is neither promoted nor activated by hand (an account with no password that
    // counted as a superadmin, and whose invitation no longer activated it): 409, nothing changed.
    const pending = await inviteUser(admin, { email: 'deputy@example.com', display_name: 'Deputy', role: 'viewer' }, caller);
    const before = await getUser('deputy@example.com');
    await expect(updateUser(boss, 'deputy@example.com', { role: 'superadmin' }, caller)).rejects.toMatchObject({ status: 409 });
    await expect(updateUser(boss, 'deputy@example.com', { is_active: true }, caller)).rejects.toMatchObject({ status: 409 });
    expect(await getUser('deputy@example.com')).toEqual(before);
    await activate(pending.activation_token!, 'the-deputy-password', caller);
    expect(await getUser('deputy@example.com')).toMatchObject({ role: 'viewer', is_active: true });
    // Once activated, it is an account like any other.
    expect((await updateUser(boss, 'deputy@example.com', { role: 'admin' }, caller)).user).toMatchObject({ role: 'admin', invitation_pending: false });

    // The invitation made for the account as it is still works.
    expect((await activate(second.activation_token!, 'the-chief-password', caller)).user).toMatchObject({ email: 'chief@example.com', role: 'superadmin' });
  });
});

describe('an invitation whose sender lost the authority to send it', () => {
  const WITHDRAWN =
    'This invitation no longer holds: whoever sent it can no longer grant its role (demoted, deactivated or deleted). Ask an administrator to invite you again.';

  it('admits no one once its sender is demoted, deactivated or deleted: 400 saying so, the account left pending', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const boss = await superadmin('withdrawing-boss');
    const [demoted, deactivated, deleted] = (await Promise.all(['w-demoted', 'w-deactivated', 'w-deleted'].map((name) => superadmin(name)))) as [
      Principal,
      Principal,
      Principal,
    ];
    const sent = {
      // A superadmin removed from office would come back as one through the invitation sent before.
      backdoor: await inviteUser(demoted, { email: 'backdoor@example.com', display_name: 'Back Door', role: 'superadmin' }, caller),
      deputy: await inviteUser(deactivated, { email: 'w-deputy@example.com', display_name: 'Deputy', role: 'admin' }, caller),
      orphan: await inviteUser(deleted, { email: 'w-orphan@example.com', display_name: 'Orphan', role: 'viewer' }, caller),
    };
    await updateUser(boss, demoted.email, { role: 'viewer' }, caller);
    await updateUser(boss, deactivated.email, { is_active: false }, caller);
    await removeUser(boss, deleted.email, caller);
    for (const [name, invitation] of Object.entries(sent)) {
      await expect(activate(invitation.activation_token!, 'a-good-password', caller), name).rejects.toMatchObject({ status: 400, message: WITHDRAWN });
    }
    expect(await getUser('backdoor@example.com')).toMatchObject({ role: 'superadmin', is_active: false });
    const invitees = ['backdoor@example.com', 'w-deputy@example.com', 'w-orphan@example.com'];
    expect((await listAudit('activate')).filter((e) => invitees.includes(e.target ?? ''))).toEqual([]);
    // Each try leaves a trace: a failed sign-in through the invitation, naming who sent it.
    const tries = (await listAudit('login_failed')).filter((e) => invitees.includes(e.target ?? ''));
    expect(tries.map((e) => [e.target, e.detail])).toEqual(
      expect.arrayContaining([
        ['backdoor@example.com', { reason: 'invitation_withdrawn', method: 'activate', invited_by: 'w-demoted' }],
        ['w-deputy@example.com', { reason: 'invitation_withdrawn', method: 'activate', invited_by: 'w-deactivated' }],
        ['w-orphan@example.com', { reason: 'invitation_withdrawn', method: 'activate', invited_by: 'w-deleted' }],
      ]),
    );
    expect(tries).toHaveLength(3);
  });

  it("holds while its sender can still grant its role: an admin demoted from superadmin still admits an admin's invitee, not a superadmin's", async () => {
    delete process.env.SES_FROM_ADDRESS;
    const boss = await superadmin('keeping-boss');
    const sender = await superadmin('stepping-down');
    const asAdmin = await inviteUser(sender, { email: 'kept-admin@example.com', display_name: 'Kept', role: 'admin' }, caller);
    const asSuper = await inviteUser(sender, { email: 'lost-super@example.com', display_name: 'Lost', role: 'superadmin' }, caller);
    await updateUser(boss, sender.email, { role: 'admin' }, caller);
    expect((await activate(asAdmin.activation_token!, 'kept-admin-password', caller)).user).toMatchObject({ role: 'admin' });
    await expect(activate(asSuper.activation_token!, 'lost-super-password', caller)).rejects.toMatchObject({ status: 400, message: WITHDRAWN });
  });
});

describe('inviting a pending address again', () => {
  let admin: Principal;
  let boss: Principal;
  beforeAll(async () => {
    admin = await superadmin('renewing-admin', 'admin');
    boss = await superadmin('renewing-boss');
  });
  const listed = async (email: string) => (await listManagedUsers()).users.find((u) => u.email === email);

  it('an expired invitation is sent again: the new token activates, with the role and name of the new invitation', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const lapsed = 'lapsed-token-lapsed-token-lapsed-token-lap';
    await createInvitedUser(
      { username: 'lapsed@example.com', name: 'Lapsed', email: 'lapsed@example.com', role: 'viewer', is_active: false },
      hashInvitationToken(lapsed),
      new Date(Date.now() - 1000),
    );
    const before = await listed('lapsed@example.com');
    expect(before).toMatchObject({ invitation_pending: true, invitation_expires_at: expect.any(String) });
    expect(Date.parse(before!.invitation_expires_at!)).toBeLessThan(Date.now());

    const again = await inviteUser(admin, { email: 'Lapsed@Example.com', display_name: 'Lapsed Again', role: 'admin' }, caller);
    expect(again).toEqual({ status: 'ok', email_sent: false, email_problem: expect.any(String), activation_token: expect.any(String) });
    expect(Date.parse((await listed('lapsed@example.com'))!.invitation_expires_at!)).toBeGreaterThan(Date.now() + 6 * 86_400_000);
    const [entry] = (await listAudit('invite')).filter((e) => e.target === 'Lapsed@Example.com');
    expect(entry?.detail).toMatchObject({ role: 'admin', renewed: true, role_before: 'viewer' });

    expect((await activate(again.activation_token!, 'lapsed-password', caller)).user).toMatchObject({
      email: 'lapsed@example.com',
      name: 'Lapsed Again',
      role: 'admin',
    });
    const account = await getUser('lapsed@example.com');
    expect(account).toMatchObject({ is_active: true, invited_by: 'renewing-admin' });
    expect(account).not.toHaveProperty('invitation_hash');
    expect(await listed('lapsed@example.com')).toMatchObject({ invitation_pending: false });
    expect(await listed('lapsed@example.com')).not.toHaveProperty('invitation_expires_at');
    // An account now: inviting it again is the 409 it always was.
    await expect(inviteUser(admin, { email: 'lapsed@example.com', display_name: 'Twin', role: 'viewer' }, caller)).rejects.toMatchObject({ status: 409 });
  });

  it('a token the new invitation replaced no longer activates, though unexpired', async () => {
    delete process.env.SES_FROM_ADDRESS;
    const first = await inviteUser(admin, { email: 'twice@example.com', display_name: 'Twice', role: 'viewer' }, caller);
    const second = await inviteUser(admin, { email: 'twice@example.com', display_name: 'Twice', role: 'viewer' }, caller);
    expect(second.activation_token).not.toBe(first.activation_token);
    await expect(activate(first.activation_token!, 'first-password', caller)).rejects.toMatchObject({ status: 400 });
    expect(await getUser('twice@example.com')).toMatchObject({ is_active: false });
    expect((await activate(second.activation_token!, 'second-password', caller)).user).toMatchObject({ email: 'twice@example.com', role: 'viewer' });
  });

  it("an admin cannot send a superadmin's pending invitation again, even as a lower role; a superadmin can", async () => {
    delete process.env.SES_FROM_ADDRESS;
    const first = await inviteUser(boss, { email: 'top@example.com', display_name: 'Top', role: 'superadmin' }, caller);
    const before = await getUser('top@example.com');
    await expect(inviteUser(admin, { email: 'top@example.com', display_name: 'Top', role: 'viewer' }, caller)).rejects.toMatchObject({ status: 403 });
    expect(await getUser('top@example.com')).toEqual(before);
    const again = await inviteUser(boss, { email: 'top@example.com', display_name: 'Top', role: 'admin' }, caller);
    await expect(activate(first.activation_token!, 'top-password', caller)).rejects.toMatchObject({ status: 400 });
    expect((await activate(again.activation_token!, 'top-password', caller)).user).toMatchObject({ role: 'admin' });
  });

  it('two invitations of one pending address at once: one is sent, the other is a 409, and only the sent one activates', async () => {
    delete process.env.SES_FROM_ADDRESS;
    await inviteUser(admin, { email: 'contested@example.com', display_name: 'Contested', role: 'viewer' }, caller);
    // At once: the first one's write is held until the second, which read the same pending account, has written.
    // (Left to timing, the second often reads after the first wrote: a renewal in turn, which is allowed.)
    let second: Promise<Awaited<ReturnType<typeof inviteUser>>> | undefined;
    const held = whileHeld(
      proxy,
      (r) => r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('contested@example.com'),
      () => (second = inviteUser(boss, { email: 'contested@example.com', display_name: 'Contested', role: 'admin' }, caller)),
    );
    const first = await inviteUser(admin, { email: 'contested@example.com', display_name: 'Contested', role: 'viewer' }, caller).catch((e: unknown) => e);
    await held.done();
    expect(first).toMatchObject({ status: 409 });
    const sent = await second!;
    expect(await activate(sent.activation_token!, 'contested-password', caller)).toMatchObject({ user: { email: 'contested@example.com', role: 'admin' } });
  });
});

describe("changing one's own password, at its edges", () => {
  it('refuses an account deactivated since its token was checked, and costs no login attempt for a new password equal to the current one', async () => {
    const u = await createUser({
      username: 'pw-edge',
      name: 'Pw Edge',
      email: 'pw-edge@example.com',
      role: 'viewer',
      is_active: true,
      password_hash: await hashPassword('edge-password-1'),
    });
    for (let i = 0; i < 6; i++) {
      await expect(changePassword(principalOf(u), 'edge-password-1', 'edge-password-1', caller)).rejects.toMatchObject({ status: 400 });
    }
    // Six refusals, and the lockout's five attempts are all still there: the right change goes through.
    expect((await changePassword(principalOf(u), 'edge-password-1', 'edge-password-2', caller)).user).toMatchObject({ username: 'pw-edge' });
    const changed = (await getUser('pw-edge'))!;
    const deactivated = await replaceUser(changed, { is_active: false });
    await expect(changePassword(principalOf(changed), 'edge-password-2', 'edge-password-3', caller)).rejects.toMatchObject({ status: 401 });
    expect((await getUser('pw-edge'))?.password_hash).toBe(deactivated.password_hash);
  });
});

describe('a login racing a password change', () => {
  // Its password check (≈ 0.4 s) and re-read of the account land before the change is written, its token is
  // signed in a later second than the change's tokens_valid_from: only the token's password stamp ends it.
  it('ends the session of a login that checked the old password while the change was being written', async () => {
    const u = await createUser({
      username: 'pw-race',
      name: 'Pw Race',
      email: 'pw-race@example.com',
      role: 'viewer',
      is_active: true,
      password_hash: await hashPassword('race-password-1'),
    });
    let raced: Awaited<ReturnType<typeof login>> | undefined;
    const held = whileHeld(
      proxy,
      (r) => r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('password_change'),
      async () => {
        // The change read its clock before this write: from the next whole second on, iat is past its tokens_valid_from.
        await untilClockReads((Math.floor(Date.now() / 1000) + 1) * 1000);
        raced = await login('pw-race', 'race-password-1', caller);
      },
    );
    const changed = await changePassword(principalOf(u), 'race-password-1', 'race-password-2', caller);
    await held.done();
    const racedToken = (await verifyAccessToken(raced!.access_token))!;
    expect(racedToken.authTime).toBeGreaterThanOrEqual((await getUser('pw-race'))!.tokens_valid_from!);
    expect(await resolvePrincipal(racedToken)).toBeNull();
    // The changer's own new token works, and the old password no longer signs in.
    expect(await resolvePrincipal((await verifyAccessToken(changed.access_token))!)).toMatchObject({ username: 'pw-race' });
    await expect(login('pw-race', 'race-password-1', caller)).rejects.toMatchObject({ status: 401 });
    expect(await login('pw-race', 'race-password-2', caller)).toMatchObject({ user: { username: 'pw-race' } });
  });
});

describe('the last active superadmin', () => {
  it('two superadmins demoting each other at once: exactly one succeeds, the other gets 409', async () => {
    const a = await superadmin('alpha');
    const b = await superadmin('bravo');
    // demote every other superadmin so alpha and bravo are the last two
    for (const u of await listUsers()) {
      if (u.role === 'superadmin' && u.is_active && u.username !== a.username && u.username !== b.username) await replaceUser(u, { role: 'admin' });
    }
    expect(await activeSuperadminCount()).toBe(2);
    const results = await Promise.allSettled([
      updateUser(a, 'bravo@example.com', { role: 'admin' }, caller),
      updateUser(b, 'alpha@example.com', { is_active: false }, caller),
    ]);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatchObject({ status: 409, message: 'At least one active superadmin must remain.' });
    expect(await activeSuperadminCount()).toBe(1);
  });

  it('a write based on a stale read is refused (ConditionFailed on the account)', async () => {
    const u = await createUser({ username: 'stale', name: 'Stale', email: 'stale@example.com', role: 'viewer', is_active: true });
    await replaceUser(u, { role: 'admin' });
    await expect(replaceUser(u, { is_active: false })).rejects.toEqual(new ConditionFailed([0]));
    expect(await getUser('stale')).toMatchObject({ role: 'admin', is_active: true });
  });
});

describe('audit of account changes', () => {
  it('an invitation is made, and its mail sent, if, and only if, its audit entry is written', async () => {
    process.env.SES_FROM_ADDRESS = 'fleet@example.com';
    ses.mode = 'ok';
    const inviter = await superadmin('audited-inviter');
    const mails = ses.received.length;
    const stopRefusing = proxy.watch(({ input }) =>
      JSON.stringify(input.TransactItems ?? []).includes('-audit"')
        ? { type: 'AccessDeniedException', message: 'the audit table refused the write' }
        : undefined,
    );
    try {
      await expect(inviteUser(inviter, { email: 'unaudited@example.com', display_name: 'U', role: 'viewer' }, caller)).rejects.toThrow(
        'the audit table refused the write',
      );
    } finally {
      stopRefusing();
    }
    expect(await getUser('unaudited@example.com')).toBeUndefined();
    expect(ses.received.length).toBe(mails);

    expect(await inviteUser(inviter, { email: 'unaudited@example.com', display_name: 'U', role: 'viewer' }, caller)).toEqual({
      status: 'ok',
      email_sent: true,
    });
    const entries = (await listAudit('invite')).filter((e) => e.target === 'unaudited@example.com');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: inviter.username, detail: { role: 'viewer', expires_at: expect.any(String) } });
  });

  it('an activation is made if, and only if, its audit entry is written: refused, the same token activates later', async () => {
    const inviter = await superadmin('activation-inviter');
    delete process.env.SES_FROM_ADDRESS;
    const { activation_token: token } = await inviteUser(inviter, { email: 'audited.hire@example.com', display_name: 'A', role: 'viewer' }, caller);
    const refuseAudit: Watcher = ({ input }) => {
      const tables = [input.TableName, ...(input.TransactItems ?? []).map((t: any) => (t.Put ?? t.Update ?? t.Delete)?.TableName)];
      return tables.some((t) => /audit/.test(String(t))) ? { type: 'AccessDeniedException', message: 'the audit table refused the write' } : undefined;
    };
    const stopRefusing = proxy.watch(refuseAudit);
    try {
      await expect(activate(token!, 'audited-password', caller)).rejects.toThrow('the audit table refused the write');
    } finally {
      stopRefusing();
    }
    const pending = await getUser('audited.hire@example.com');
    expect(pending).toMatchObject({ is_active: false });
    expect(pending!.activated_at ?? null).toBeNull();
    expect((await activate(token!, 'audited-password', caller)).user.email).toBe('audited.hire@example.com');
    expect((await listAudit('activate')).filter((e) => e.target === 'audited.hire@example.com')).toHaveLength(1);
  });

  it('a logout is audited with its revocation; one whose audit entry cannot be written still revokes its token', async () => {
    const user = await superadmin('audited-logout');
    const token = (id: string) => ({ id: `${id}-${Date.now()}`, expiresAt: Math.floor(Date.now() / 1000) + 3600, authTime: Math.floor(Date.now() / 1000) });
    const [refused, audited] = [token('logout-refused'), token('logout-audited')];
    const refuseAudit: Watcher = ({ input }) =>
      JSON.stringify(input.TransactItems ?? input.TableName ?? '').includes('-audit"')
        ? { type: 'AccessDeniedException', message: 'the audit table refused the write' }
        : undefined;
    const stopRefusing = proxy.watch(refuseAudit);
    try {
      // The console forgets the token whatever the answer: a copy of it must not outlive the logout.
      expect(await logout(user, refused, '42', caller)).toEqual({ ok: true });
    } finally {
      stopRefusing();
    }
    expect(await isTokenRevoked(refused.id)).toBe(true);
    expect(await logout(user, audited, '43', caller)).toEqual({ ok: true });
    expect(await isTokenRevoked(audited.id)).toBe(true);
    const entries = (await listAudit('logout')).filter((e) => e.actor === 'audited-logout');
    expect(entries.map((e) => e.detail)).toEqual([{ session_duration_seconds: 43 }]);
  });

  it('a role change or a delete is made if, and only if, its audit entry is written', async () => {
    const admin = await superadmin('auditor');
    const member = await createUser({ username: 'member@example.com', name: 'Member', email: 'member@example.com', role: 'viewer', is_active: true });
    // DynamoDB refusing every write to the audit table (a throttled or failing table).
    const auditTable = /audit/;
    const refuseAudit: Watcher = ({ input }) => {
      const tables = [input.TableName, ...(input.TransactItems ?? []).map((t: any) => (t.Put ?? t.Update ?? t.Delete)?.TableName)];
      return tables.some((t) => auditTable.test(String(t))) ? { type: 'AccessDeniedException', message: 'the audit table refused the write' } : undefined;
    };
    const stopRefusing = proxy.watch(refuseAudit);
    try {
      await expect(updateUser(admin, 'member@example.com', { role: 'admin' }, caller)).rejects.toThrow('the audit table refused the write');
      await expect(removeUser(admin, 'member@example.com', caller)).rejects.toThrow('the audit table refused the write');
    } finally {
      stopRefusing();
    }
    expect(await getUser('member@example.com')).toMatchObject({ role: 'viewer', updated_at: member.updated_at });

    await updateUser(admin, 'member@example.com', { role: 'admin' }, caller);
    await removeUser(admin, 'member@example.com', caller);
    expect(await getUser('member@example.com')).toBeUndefined();
    const entries = (await listAudit()).filter((e) => e.target === 'member@example.com');
    expect(entries.map((e) => [e.action, e.detail])).toEqual([
      ['user_delete', { role: 'admin', was_active: true }],
      ['user_update', { before: { role: 'viewer', is_active: true }, after: { role: 'admin', is_active: true } }],
    ]);
  });

  it("a deleted account's pending proposals are rejected with it: an account invited again under its email takes none over", async () => {
    const boss = await superadmin('proposals-boss');
    const asUser = (u: { id: string; username: string; name: string; email: string; role: Principal['role'] }): Principal => ({
      userId: u.id,
      username: u.username,
      name: u.name,
      email: u.email,
      role: u.role,
    });
    const email = 'leaver@example.com';
    const leaver = asUser(await createUser({ username: email, name: 'Leaver', email, role: 'viewer', is_active: true }));
    const edit = (n: number) => defaultRuleText('risk-rules').replace(/^/, `# proposal ${n} of the leaver\n`);
    const proposals = [await submitRuleSet(leaver, 'risk-rules', edit(1), caller), await submitRuleSet(leaver, 'risk-rules', edit(2), caller)];
    const ids = proposals.map((p) => (p as { change_id: string }).change_id);
    expect(ids.every(Boolean)).toBe(true);
    expect((await pendingChangesOf(email)).map((c) => c.change_id).sort()).toEqual([...ids].sort());

    await removeUser(boss, email, caller);
    for (const id of ids)
      expect(await getChange(id)).toMatchObject({ status: 'rejected', reviewed_by: boss.username, review_note: expect.stringContaining('deleted') });
    const [entry] = (await listAudit('user_delete')).filter((e) => e.target === email);
    expect(entry!.detail).toEqual({ role: 'viewer', was_active: true, proposals_rejected: ids });
    // Each rejection is in the log as a review's is, so a filter on change_reject finds it.
    const rejections = (await listAudit('change_reject')).filter((e) => ids.includes(e.target ?? ''));
    expect(rejections.map((e) => [e.actor, e.detail])).toEqual(
      ids.map(() => [boss.username, { rule_set: 'risk-rules', note: expect.stringContaining('deleted') }]),
    );

    // Someone given the address again is a new account: none of the old proposals is theirs to withdraw or count.
    const newcomer = asUser(await createUser({ username: email, name: 'Newcomer', email, role: 'viewer', is_active: true }));
    expect(await pendingChangesOf(email)).toEqual([]);
    await expect(withdrawConfigChange(newcomer, ids[0]!, caller)).rejects.toMatchObject({ status: 409 });
    expect(await getChange(ids[0]!)).toMatchObject({ status: 'rejected', reviewed_by: boss.username });
  });

  it('a proposal made while its account is being deleted is rejected with the others, not left pending', async () => {
    const boss = await superadmin('proposals-boss-2');
    const email = 'racer@example.com';
    const u = await createUser({ username: email, name: 'Racer', email, role: 'viewer', is_active: true });
    const racer: Principal = { userId: u.id, username: u.username, name: u.name, email: u.email, role: u.role };
    const edit = (n: number) => defaultRuleText('risk-rules').replace(/^/, `# race ${n}\n`);
    const first = (await submitRuleSet(racer, 'risk-rules', edit(1), caller)) as { change_id: string };
    let late: { change_id: string } | undefined;
    // The delete's transaction waits until a second proposal is stored: it read one pending, two are.
    const held = whileHeld(
      proxy,
      (r) => r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('user_delete'),
      async () => {
        late = (await submitRuleSet(racer, 'risk-rules', edit(2), caller)) as { change_id: string };
      },
    );
    await removeUser(boss, email, caller);
    await held.done();
    for (const id of [first.change_id, late!.change_id]) expect(await getChange(id), id).toMatchObject({ status: 'rejected' });
    expect(await pendingChangesOf(email)).toEqual([]);
    const [entry] = (await listAudit('user_delete')).filter((e) => e.target === email);
    expect((entry!.detail as { proposals_rejected: string[] }).proposals_rejected.sort()).toEqual([first.change_id, late!.change_id].sort());
  });
});

describe('two superadmins changing one account from the users list', () => {
  const send = (token: string, method: 'GET' | 'PATCH' | 'DELETE', email?: string, body?: unknown, ifMatch?: string) =>
    call(settings as Handler, {
      method,
      path: email ? `/api/settings/users/${email}` : '/api/settings/users',
      routeKey: email ? `${method} /api/settings/users/{email}` : 'GET /api/settings/users',
      ...(email ? { params: { email } } : {}),
      headers: { authorization: `Bearer ${token}`, ...(ifMatch ? { 'if-match': ifMatch } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const listed = async (token: string, email: string) => (await send(token, 'GET')).json!.users.find((u: any) => u.email === email);

  it('the second change, made on the version the first one replaced, is a 409 with what is stored now, and changes nothing', async () => {
    const alice = await userToken('superadmin', 'list-alice');
    const bob = await userToken('superadmin', 'list-bob');
    await createUser({
      username: 'listed-target',
      name: 'Listed',
      email: 'listed-target@example.com',
      role: 'viewer',
      is_active: true,
      password_hash: await hashPassword('pw-12345678'),
    });
    // Both read the list: the same account, the same version.
    const seenByAlice = await listed(alice, 'listed-target@example.com');
    const seenByBob = await listed(bob, 'listed-target@example.com');
    expect(seenByBob.version).toBe(seenByAlice.version);
    const read = `"u${seenByAlice.version}"`;

    const first = await send(alice, 'PATCH', 'listed-target@example.com', { role: 'admin' }, read);
    expect(first.statusCode).toBe(200);
    expect(first.json!.user).toMatchObject({ role: 'admin', is_active: true, version: seenByAlice.version + 1 });
    expect(first.headers?.ETag).toBe(`"u${seenByAlice.version + 1}"`);

    const auditBefore = (await listAudit()).filter((e) => e.target === 'listed-target@example.com').length;
    const second = await send(bob, 'PATCH', 'listed-target@example.com', { is_active: false }, read);
    expect(second.statusCode).toBe(409);
    expect(second.headers?.['Content-Type']).toMatch(/application\/problem\+json/);
    expect(second.json).toMatchObject({
      status: 409,
      detail: expect.stringMatching(
        /^listed-target@example\.com was changed at .+ after you read it \(by another request: another superadmin, or another tab of yours\): nothing was changed/,
      ),
      current_etag: first.headers?.ETag,
      current: { role: 'admin', is_active: true },
    });
    expect(await getUser('listed-target')).toMatchObject({ role: 'admin', is_active: true, version: seenByAlice.version + 1 });
    // A delete made on that read is refused as well.
    const gone = await send(bob, 'DELETE', 'listed-target@example.com', undefined, read);
    expect(gone.statusCode).toBe(409);
    expect(await getUser('listed-target')).toMatchObject({ role: 'admin', is_active: true });
    expect((await listAudit()).filter((e) => e.target === 'listed-target@example.com')).toHaveLength(auditBefore);

    // On the version stored now, the change is made; without If-Match, as before, on whatever is stored.
    const again = await send(bob, 'PATCH', 'listed-target@example.com', { is_active: false }, second.json!.current_etag);
    expect(again.statusCode).toBe(200);
    expect(again.json!.user).toMatchObject({ role: 'admin', is_active: false });
    const plain = await send(alice, 'PATCH', 'listed-target@example.com', { role: 'viewer' });
    expect(plain.statusCode, JSON.stringify(plain.json)).toBe(200);
    expect(await getUser('listed-target')).toMatchObject({ role: 'viewer', is_active: false, version: seenByAlice.version + 3 });
    // A malformed If-Match is a 400, not a guess.
    const malformed = await send(alice, 'PATCH', 'listed-target@example.com', { role: 'admin' }, 'W/"u1"');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json!.detail).toMatch(/If-Match must be the ETag/);
    const current = `"u${(await getUser('listed-target'))!.version}"`;
    expect((await send(alice, 'DELETE', 'listed-target@example.com', undefined, current)).statusCode).toBe(200);
    expect(await getUser('listed-target')).toBeUndefined();
  });

  it('a password reset takes the same If-Match: on a stale read a 409 with what is stored now, nothing reset; on the current one it resets and moves the version', async () => {
    const alice = await userToken('superadmin', 'reset-alice');
    const bob = await userToken('superadmin', 'reset-bob');
    await createUser({
      username: 'reset-target',
      name: 'Reset',
      email: 'reset-target@example.com',
      role: 'viewer',
      is_active: true,
      password_hash: await hashPassword('pw-12345678'),
    });
    const reset = (token: string, ifMatch?: string) =>
      call(settings as Handler, {
        method: 'POST',
        path: '/api/settings/users/reset-target@example.com/password-reset',
        routeKey: 'POST /api/settings/users/{email}/password-reset',
        params: { email: 'reset-target@example.com' },
        headers: { authorization: `Bearer ${token}`, ...(ifMatch ? { 'if-match': ifMatch } : {}) },
      });
    const read = `"u${(await listed(bob, 'reset-target@example.com')).version}"`;
    // Alice deactivates the account after Bob read the list.
    const deactivated = await send(alice, 'PATCH', 'reset-target@example.com', { is_active: false }, read);
    expect(deactivated.statusCode).toBe(200);
    const auditBefore = (await listAudit()).filter((e) => e.target === 'reset-target@example.com').length;
    const stale = await reset(bob, read);
    expect(stale.statusCode).toBe(409);
    expect(stale.json).toMatchObject({
      status: 409,
      detail: expect.stringMatching(
        /^reset-target@example\.com was changed at .+ after you read it \(by another request: another superadmin, or another tab of yours\): nothing was changed/,
      ),
      current_etag: deactivated.headers?.ETag,
      current: { role: 'viewer', is_active: false },
    });
    const stored = await getUser('reset-target');
    expect(stored).toMatchObject({ is_active: false, version: deactivated.json!.user.version });
    expect(stored!.password_reset_at).toBeUndefined();
    expect((await listAudit()).filter((e) => e.target === 'reset-target@example.com')).toHaveLength(auditBefore);
    expect((await reset(bob, 'W/"u1"')).statusCode).toBe(400);

    // Reactivated, and reset on the version now stored: made, and the version moves as a PATCH's does.
    const active = await send(alice, 'PATCH', 'reset-target@example.com', { is_active: true }, stale.json!.current_etag);
    expect(active.statusCode).toBe(200);
    const made = await reset(bob, String(active.headers?.ETag));
    expect(made.statusCode, JSON.stringify(made.json)).toBe(200);
    expect(await getUser('reset-target')).toMatchObject({ is_active: true, version: active.json!.user.version + 1, password_reset_at: expect.any(String) });
    // The answer carries the moved version's ETag: the next change on it needs no second read.
    expect(made.headers?.ETag).toBe(`"u${active.json!.user.version + 1}"`);
    expect((await reset(bob, String(active.headers?.ETag))).statusCode).toBe(409);
    expect((await send(bob, 'PATCH', 'reset-target@example.com', { role: 'admin' }, String(made.headers?.ETag))).statusCode).toBe(200);
  });

  it('an account stored before versions were kept reads as version 0 and is changed on it once', async () => {
    const carol = await userToken('superadmin', 'list-carol');
    const old = await createUser({ username: 'unversioned', name: 'Old', email: 'unversioned@example.com', role: 'viewer', is_active: true });
    const { version: _none, ...stored } = old;
    await putItem('users', { pk: 'USERS', sk: 'USER#unversioned', ...stored });
    expect((await listed(carol, 'unversioned@example.com')).version).toBe(0);
    expect((await send(carol, 'PATCH', 'unversioned@example.com', { role: 'admin' }, '"u0"')).statusCode).toBe(200);
    expect((await send(carol, 'PATCH', 'unversioned@example.com', { role: 'viewer' }, '"u0"')).statusCode).toBe(409);
    expect(await getUser('unversioned')).toMatchObject({ role: 'admin', version: 1 });
  });
});
