// Accounts and access through the real local server on DynamoDB Local:
// login, lockout, invitations, activation, user management, logout, audit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../../shared/auth/caller.js';
import { resetSettings } from '../../shared/config/env.js';
import { startTestService } from '../support/local-service.js';

const ADMIN_PASSWORD = 'bootstrap-password-1';
/** The token CloudFront would send with a viewer's address (the service runs in this process: set as a local run sets it). */
const ORIGIN_TOKEN = 'accounts-origin-token-0123456789abcdefghijklmnop';
let service: LocalService;

beforeAll(async () => {
  process.env.ORIGIN_VERIFY_TOKEN = ORIGIN_TOKEN;
  resetSettings();
  service = await startTestService({ adminUsername: 'admin', adminEmail: 'admin@example.com', adminPassword: ADMIN_PASSWORD });
});

afterAll(async () => {
  await service?.stop();
  delete process.env.ORIGIN_VERIFY_TOKEN;
  resetSettings();
});

interface Sent {
  status: number;
  body: any;
  headers: Headers;
}

async function send(method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Sent> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: {
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const login = (username: string, password: string) => send('POST', '/api/auth/login', { body: { username, password } });

async function tokenOf(username: string, password: string): Promise<string> {
  const res = await login(username, password);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token;
}

/** Every audit entry of one action, newest first, through the paginated listing. */
async function auditEntries(token: string, action: string): Promise<any[]> {
  const entries: any[] = [];
  for (let page = 1; ; page++) {
    const res = await send('GET', `/api/settings/audit?action=${action}&page=${page}&page_size=100`, { token });
    expect(res.status).toBe(200);
    entries.push(...res.body.entries);
    if (res.body.entries.length < 100) return entries;
  }
}

async function inviteAndActivate(inviter: string, email: string, role: string, password: string): Promise<string> {
  const invited = await send('POST', '/api/settings/users/invite', { token: inviter, body: { email, display_name: email.split('@')[0], role } });
  expect(invited.status, JSON.stringify(invited.body)).toBe(200);
  const activated = await send('POST', '/api/auth/activate', { body: { token: invited.body.activation_token, password } });
  expect(activated.status).toBe(200);
  return activated.body.access_token;
}

// Bursts of 30 and 40 logins, a scrypt each, in this process beside the service: more than the 30 s default under load.
describe('login', { timeout: 90_000 }, () => {
  it('logs the bootstrap superadmin in and answers /me', async () => {
    const res = await login('Admin', ADMIN_PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      token_type: 'bearer',
      user: { id: expect.any(String), username: 'admin', name: 'Administrator', email: 'admin@example.com', role: 'superadmin' },
    });
    const me = await send('GET', '/api/auth/me', { token: res.body.access_token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual(res.body.user);
  });

  it('401 for a wrong password or an unknown user, with the same answer', async () => {
    const wrong = await login('admin', 'not-the-password');
    const unknown = await login('nobody', 'not-the-password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.detail).toBe(unknown.body.detail);
    expect(wrong.headers.get('content-type')).toBe('application/problem+json');
  });

  it('locks a username out after 5 failures in 15 minutes: 429 with Retry-After, even with the right password, but not for its own network', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    await inviteAndActivate(admin, 'locked@example.com', 'viewer', 'locked-password');
    // From a network the account never signed in from (a viewer address CloudFront vouches for).
    const stranger = { [ORIGIN_VERIFY_HEADER]: ORIGIN_TOKEN, [VIEWER_ADDRESS_HEADER]: '198.51.100.200' };
    const loginFrom = (password: string) => send('POST', '/api/auth/login', { body: { username: 'locked@example.com', password }, headers: stranger });
    for (let i = 0; i < 5; i++) expect((await loginFrom(`wrong-${i}`)).status).toBe(401);
    const blocked = await loginFrom('locked-password');
    expect(blocked.status).toBe(429);
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    // The owner, from the network the account was activated from (this test's own address), keeps 5 checks of its own.
    expect((await login('locked@example.com', 'locked-password')).status).toBe(200);
    // other usernames are not affected
    expect((await login('admin', ADMIN_PASSWORD)).status).toBe(200);
  });

  it('40 simultaneous logins for one username: at most 5 passwords are checked, the rest 429 before any check; unknown usernames alike', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    await inviteAndActivate(admin, 'rush@example.com', 'viewer', 'rush-password');
    for (const [i, username] of ['rush@example.com', 'nobody-at-all'].entries()) {
      // Each request from a viewer address of its own, as CloudFront vouches for one: the username's lockout alone
      // is at work here (40 failures from one address would meet its limit of 30 too, below).
      const fromViewer = (n: number) => ({ [ORIGIN_VERIFY_HEADER]: ORIGIN_TOKEN, [VIEWER_ADDRESS_HEADER]: `198.51.${100 + i}.${n + 1}` });
      // All wrong: a success clears the window by design, which would make the count a race with the burst.
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, n) => send('POST', '/api/auth/login', { body: { username, password: `guess-${n}` }, headers: fromViewer(n) })),
      );
      const checked = answers.filter((a) => a.status !== 429);
      expect(checked.length, username).toBeGreaterThanOrEqual(1);
      expect(checked.length, username).toBeLessThanOrEqual(5);
      for (const a of checked) expect(a.status, username).toBe(401);
      for (const a of answers.filter((x) => x.status === 429)) {
        expect(a.headers.get('content-type')).toBe('application/problem+json');
        const retryAfter = Number(a.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(15 * 60);
      }
      // the audit log agrees: a bad_credentials entry only after a real check, and one locked_out for the
      // window's refusals (one each would let anyone flood the log for nothing: a refusal checks no password)
      // An unknown name is audited as no account's (it may be a password typed into the wrong field), from these addresses.
      const target = i === 0 ? username : '(no such account)';
      const failed = (await auditEntries(admin, 'login_failed')).filter((e) => e.target === target && e.ip?.startsWith(`198.51.${100 + i}.`));
      expect(failed.filter((e) => e.detail.reason === 'bad_credentials')).toHaveLength(answers.filter((a) => a.status === 401).length);
      const lockouts = answers.filter((a) => a.status === 429 && Number(a.headers.get('retry-after')) > 1).length;
      expect(failed.filter((e) => e.detail.reason === 'locked_out')).toHaveLength(lockouts > 0 ? 1 : 0);
      // the window is full: even the right password is refused unchecked (from a network the name never signed in from)
      const locked = await send('POST', '/api/auth/login', { body: { username, password: 'rush-password' }, headers: fromViewer(99) });
      expect(locked.status).toBe(429);
      expect(locked.body.limit).toBe('username');
    }
  });

  it('a password sprayed over 30 names from one address: then every login from it is refused, audited once; other addresses are not', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const fromSprayer = { [ORIGIN_VERIFY_HEADER]: ORIGIN_TOKEN, [VIEWER_ADDRESS_HEADER]: '203.0.113.66' };
    // Five at a time, as a sprayer paces itself: thirty password checks at once outlasted the auth function's time on
    // a busy 2-core machine (503s), which is the test machine's limit, not what this test is about.
    const sprayed: { status: number }[] = [];
    for (let batch = 0; batch < 6; batch++) {
      sprayed.push(
        ...(await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            send('POST', '/api/auth/login', { body: { username: `staff-${batch * 5 + i}`, password: 'Winter2026!' }, headers: fromSprayer }),
          ),
        )),
      );
    }
    expect(sprayed.map((a) => a.status)).toEqual(Array(30).fill(401));
    for (let n = 0; n < 2; n++) {
      const refused = await send('POST', '/api/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD }, headers: fromSprayer });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ limit: 'address', detail: 'Too many failed logins from your network; try again later.' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    const refusals = (await auditEntries(admin, 'login_failed')).filter((e) => e.detail.reason === 'address_locked_out');
    expect(refusals.map((e) => e.ip)).toEqual(['203.0.113.66']);
    expect((await login('admin', ADMIN_PASSWORD)).status).toBe(200);
  });

  it('422 when username or password is missing', async () => {
    const res = await send('POST', '/api/auth/login', { body: { username: 'admin' } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['body', 'password']);
  });
});

describe('invitation and activation', () => {
  it('invite → activate → login as that user → /me', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const invited = await send('POST', '/api/settings/users/invite', {
      token: admin,
      body: { email: 'Dana@Example.com', display_name: 'Dana Ops', role: 'admin' },
    });
    expect(invited.status).toBe(200);
    // SES is not configured locally: the token comes back for sharing by hand
    expect(invited.body).toEqual({ status: 'ok', email_sent: false, email_problem: 'not_configured', activation_token: expect.stringMatching(/^[\w-]{43}$/) });

    // not active yet
    expect((await login('dana@example.com', 'whatever-password')).status).toBe(401);

    const short = await send('POST', '/api/auth/activate', { body: { token: invited.body.activation_token, password: 'short' } });
    expect(short.status).toBe(422);
    expect(short.body.detail).toBe('password: must be at least 8 characters');

    const activated = await send('POST', '/api/auth/activate', { body: { token: invited.body.activation_token, password: 'dana-password' } });
    expect(activated.status).toBe(200);
    expect(activated.body.user).toMatchObject({ username: 'dana@example.com', email: 'dana@example.com', name: 'Dana Ops', role: 'admin' });

    const again = await send('POST', '/api/auth/activate', { body: { token: invited.body.activation_token, password: 'dana-password' } });
    expect(again.status).toBe(400);

    const dana = await tokenOf('dana@example.com', 'dana-password');
    expect((await send('GET', '/api/auth/me', { token: dana })).body).toMatchObject({ email: 'dana@example.com', role: 'admin' });
  });

  it('400 for an unknown token', async () => {
    const res = await send('POST', '/api/auth/activate', { body: { token: 'x'.repeat(43), password: 'long-enough' } });
    expect(res.status).toBe(400);
  });

  it('409 for an email that exists; 403 for an admin inviting a superadmin; 403 for a viewer', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const body = { email: 'admin@example.com', display_name: 'Twin', role: 'viewer' };
    expect((await send('POST', '/api/settings/users/invite', { token: admin, body })).status).toBe(409);

    const adminUser = await inviteAndActivate(admin, 'second-admin@example.com', 'admin', 'second-admin-pw');
    const up = await send('POST', '/api/settings/users/invite', {
      token: adminUser,
      body: { email: 'boss@example.com', display_name: 'Boss', role: 'superadmin' },
    });
    expect(up.status).toBe(403);
    const ok = await send('POST', '/api/settings/users/invite', {
      token: adminUser,
      body: { email: 'junior@example.com', display_name: 'Junior', role: 'viewer' },
    });
    expect(ok.status).toBe(200);

    const viewer = await inviteAndActivate(admin, 'viewer1@example.com', 'viewer', 'viewer1-password');
    expect(
      (await send('POST', '/api/settings/users/invite', { token: viewer, body: { email: 'v2@example.com', display_name: 'V', role: 'viewer' } })).status,
    ).toBe(403);
  });
});

describe('user management', () => {
  it('lists users, changes roles, and protects oneself and the last superadmin', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const carol = await inviteAndActivate(admin, 'carol@example.com', 'viewer', 'carol-password');

    const list = await send('GET', '/api/settings/users', { token: admin });
    expect(list.status).toBe(200);
    expect(list.body.users).toEqual(
      expect.arrayContaining([
        {
          id: expect.any(String),
          email: 'carol@example.com',
          display_name: 'carol',
          role: 'viewer',
          is_active: true,
          source: 'local',
          invitation_pending: false,
          password_reset_pending: false,
          // Invited (1), then activated (2): each write of the account moves it.
          version: 2,
        },
      ]),
    );

    const promoted = await send('PATCH', '/api/settings/users/carol@example.com', { token: admin, body: { role: 'superadmin' } });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toEqual({ status: 'ok', user: expect.objectContaining({ email: 'carol@example.com', role: 'superadmin' }) });
    // carol's existing token now carries her new role
    expect((await send('GET', '/api/llm-usage/pricing', { token: carol })).status).not.toBe(403);

    // nobody changes themselves
    expect((await send('PATCH', '/api/settings/users/admin@example.com', { token: admin, body: { is_active: false } })).status).toBe(409);
    expect((await send('DELETE', '/api/settings/users/admin@example.com', { token: admin })).status).toBe(409);

    // carol demotes admin: allowed while carol remains; then admin is not superadmin
    expect((await send('PATCH', '/api/settings/users/admin@example.com', { token: carol, body: { role: 'admin' } })).status).toBe(200);
    // carol is now the last active superadmin: admin (now only admin) cannot touch her, and she cannot demote herself
    expect((await send('PATCH', '/api/settings/users/carol@example.com', { token: admin, body: { role: 'viewer' } })).status).toBe(403);
    expect((await send('PATCH', '/api/settings/users/carol@example.com', { token: carol, body: { role: 'viewer' } })).status).toBe(409);
    // restore
    expect((await send('PATCH', '/api/settings/users/admin@example.com', { token: carol, body: { role: 'superadmin' } })).status).toBe(200);

    expect((await send('PATCH', '/api/settings/users/nobody@example.com', { token: carol, body: { role: 'viewer' } })).status).toBe(404);
    expect((await send('DELETE', '/api/settings/users/nobody@example.com', { token: carol })).status).toBe(404);
    expect((await send('PATCH', '/api/settings/users/carol@example.com', { token: admin, body: {} })).status).toBe(422);
    expect((await send('PATCH', '/api/settings/users/carol@example.com', { token: admin, body: { role: 'root' } })).status).toBe(422);
  });

  it("a deactivated user's token stops working at once and they cannot log in", async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const erin = await inviteAndActivate(admin, 'erin@example.com', 'superadmin', 'erin-password');
    // two active superadmins (admin, erin; carol from the test before too): demote the others first
    const users = (await send('GET', '/api/settings/users', { token: admin })).body.users as { email: string; role: string; is_active: boolean }[];
    for (const u of users.filter((x) => x.role === 'superadmin' && x.is_active && x.email !== 'admin@example.com' && x.email !== 'erin@example.com')) {
      expect((await send('PATCH', `/api/settings/users/${u.email}`, { token: admin, body: { is_active: false } })).status).toBe(200);
    }
    // erin deactivates admin: allowed (erin remains) ...
    expect((await send('PATCH', '/api/settings/users/admin@example.com', { token: erin, body: { is_active: false } })).status).toBe(200);
    // ... and admin's token stopped working at once
    expect((await send('GET', '/api/auth/me', { token: admin })).status).toBe(401);
    expect((await login('admin', ADMIN_PASSWORD)).status).toBe(401);
    // reactivate admin so later tests have them
    expect((await send('PATCH', '/api/settings/users/admin@example.com', { token: erin, body: { is_active: true } })).status).toBe(200);
  });

  it('a deleted user cannot log in and their token stops working', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const frank = await inviteAndActivate(admin, 'frank@example.com', 'viewer', 'frank-password');
    expect((await send('GET', '/api/auth/me', { token: frank })).status).toBe(200);
    expect((await send('DELETE', '/api/settings/users/frank@example.com', { token: admin })).body).toEqual({ status: 'ok' });
    expect((await send('GET', '/api/auth/me', { token: frank })).status).toBe(401);
    expect((await login('frank@example.com', 'frank-password')).status).toBe(401);
  });

  it('roles lists the three roles', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    expect((await send('GET', '/api/settings/roles', { token: admin })).body).toEqual({ roles: ['superadmin', 'admin', 'viewer'] });
  });
});

describe("changing one's own password", () => {
  it('checks the current one, ends every earlier session, signs in again with the new one, and is audited', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const first = await inviteAndActivate(admin, 'pat@example.com', 'viewer', 'pat-password-1');
    const second = await tokenOf('pat@example.com', 'pat-password-1'); // another session of the same person
    const change = (token: string, current_password: string, new_password: string) =>
      send('POST', '/api/auth/password', { token, body: { current_password, new_password } });

    const wrong = await change(first, 'not-the-password', 'pat-password-2');
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toBe('The current password is not right: nothing was changed.');
    expect((await change(first, 'pat-password-1', 'short')).status).toBe(422);
    expect((await change(first, 'pat-password-1', 'pat-password-1')).status).toBe(400);
    expect((await send('GET', '/api/auth/me', { token: second })).status).toBe(200); // nothing changed yet

    const changed = await change(first, 'pat-password-1', 'pat-password-2');
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ token_type: 'bearer', user: { email: 'pat@example.com', role: 'viewer' } });
    expect((await send('GET', '/api/auth/me', { token: changed.body.access_token })).status).toBe(200);
    for (const ended of [first, second]) expect((await send('GET', '/api/auth/me', { token: ended })).status).toBe(401);
    expect((await login('pat@example.com', 'pat-password-1')).status).toBe(401);
    expect((await login('pat@example.com', 'pat-password-2')).status).toBe(200);
    const [entry] = (await auditEntries(admin, 'password_change')).filter((e) => e.actor === 'pat@example.com');
    expect(entry).toMatchObject({ role: 'viewer', target: 'pat@example.com' });
    expect(JSON.stringify(entry)).not.toContain('pat-password');
  });

  it('is no way around the login lockout: wrong current passwords count as failed logins', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const token = await inviteAndActivate(admin, 'guess@example.com', 'viewer', 'guess-password-1');
    // From a network the account never signed in from (a taken token used elsewhere): the name's 5 checks, no more.
    const elsewhere = { [ORIGIN_VERIFY_HEADER]: ORIGIN_TOKEN, [VIEWER_ADDRESS_HEADER]: '198.51.100.202' };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const body = { current_password: `guess-${i}`, new_password: 'guess-password-2' };
      statuses.push((await send('POST', '/api/auth/password', { token, body, headers: elsewhere })).status);
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
    // The lockout the 6th met is audited, as a login's is.
    const lockouts = (await auditEntries(admin, 'login_failed')).filter((e) => e.target === 'guess@example.com' && e.detail.reason === 'locked_out');
    expect(lockouts).toMatchObject([{ detail: { method: 'password_change' } }]);
    const signIn = await send('POST', '/api/auth/login', { body: { username: 'guess@example.com', password: 'guess-password-1' }, headers: elsewhere });
    expect(signIn.status).toBe(429);
  });
});

describe("a superadmin resets someone's password", () => {
  const resetOf = (token: string, email: string) => send('POST', `/api/settings/users/${encodeURIComponent(email)}/password-reset`, { token });
  /** A failed login from a viewer address of its own: the test's own address keeps its place for the other tests' failures. */
  const fromElsewhere = { [ORIGIN_VERIFY_HEADER]: ORIGIN_TOKEN, [VIEWER_ADDRESS_HEADER]: '198.51.100.201' };

  it('ends the password and every session at once; its link sets a new one, once, and signs in; audited, with no token', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const before = await inviteAndActivate(admin, 'forgot@example.com', 'admin', 'forgotten-password');
    // Only a superadmin resets: an admin gets 403 (the route's roles).
    expect((await resetOf(before, 'admin@example.com')).status).toBe(403);

    const reset = await resetOf(admin, 'Forgot@Example.com');
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect(reset.body).toEqual({
      status: 'ok',
      email_sent: false,
      email_problem: 'not_configured',
      reset_token: expect.stringMatching(/^[\w-]{43}$/),
      expires_at: expect.any(String),
    });
    const days = (Date.parse(reset.body.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(2.99);
    expect(days).toBeLessThanOrEqual(3);
    expect((await send('GET', '/api/auth/me', { token: before })).status).toBe(401);
    const old = await send('POST', '/api/auth/login', { body: { username: 'forgot@example.com', password: 'forgotten-password' }, headers: fromElsewhere });
    expect(old.status).toBe(401);
    const listed = async () => (await send('GET', '/api/settings/users', { token: admin })).body.users.find((u: any) => u.email === 'forgot@example.com');
    expect(await listed()).toMatchObject({
      is_active: true,
      role: 'admin',
      invitation_pending: false,
      password_reset_pending: true,
      password_reset_expires_at: reset.body.expires_at,
    });

    const taken = await send('POST', '/api/auth/activate', { body: { token: reset.body.reset_token, password: 'remembered-password' } });
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    expect(taken.body.user).toMatchObject({ email: 'forgot@example.com', role: 'admin' });
    expect((await send('GET', '/api/auth/me', { token: taken.body.access_token })).status).toBe(200);
    const again = await send('POST', '/api/auth/activate', { body: { token: reset.body.reset_token, password: 'another-password' } });
    expect(again.status).toBe(400);
    expect((await login('forgot@example.com', 'remembered-password')).status).toBe(200);
    const now = await listed();
    expect(now).toMatchObject({ is_active: true, password_reset_pending: false });
    expect(now.password_reset_expires_at).toBeUndefined();

    const [resetEntry] = (await auditEntries(admin, 'password_reset')).filter((e) => e.target === 'forgot@example.com');
    expect(resetEntry).toMatchObject({ actor: 'admin', role: 'superadmin', detail: { expires_at: reset.body.expires_at } });
    const [setEntry] = (await auditEntries(admin, 'password_set')).filter((e) => e.target === 'forgot@example.com');
    expect(setEntry).toMatchObject({ actor: 'forgot@example.com', role: 'admin' });
    expect(JSON.stringify([resetEntry, setEntry])).not.toContain(reset.body.reset_token);
  });

  it("refuses, changing nothing, one's own account, a pending invitation and a deactivated account (409), and no account (404)", async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    await send('POST', '/api/settings/users/invite', { token: admin, body: { email: 'not-yet@example.com', display_name: 'Not Yet', role: 'viewer' } });
    await inviteAndActivate(admin, 'gone@example.com', 'viewer', 'gone-password');
    expect((await send('PATCH', '/api/settings/users/gone%40example.com', { token: admin, body: { is_active: false } })).status).toBe(200);
    const answers = {
      own: await resetOf(admin, 'admin@example.com'),
      pending: await resetOf(admin, 'not-yet@example.com'),
      deactivated: await resetOf(admin, 'gone@example.com'),
      unknown: await resetOf(admin, 'nobody@example.com'),
    };
    expect(Object.fromEntries(Object.entries(answers).map(([k, a]) => [k, a.status]))).toEqual({ own: 409, pending: 409, deactivated: 409, unknown: 404 });
    for (const a of Object.values(answers)) expect(a.headers.get('content-type')).toBe('application/problem+json');
    expect(answers.pending.body.detail).toMatch(/invite the address again/);
    expect(answers.deactivated.body.detail).toMatch(/reactivate it first/);
    expect((await login('admin', ADMIN_PASSWORD)).status).toBe(200);
    expect(
      (await auditEntries(admin, 'password_reset')).filter((e) => ['admin@example.com', 'not-yet@example.com', 'gone@example.com'].includes(e.target)),
    ).toEqual([]);
    // Reactivated, the account signs in with the password it had: a refused reset took nothing.
    expect((await send('PATCH', '/api/settings/users/gone%40example.com', { token: admin, body: { is_active: true } })).status).toBe(200);
    expect((await login('gone@example.com', 'gone-password')).status).toBe(200);
  });
});

describe('logout and audit', () => {
  it('logout revokes the token and records the session duration', async () => {
    const token = await tokenOf('admin', ADMIN_PASSWORD);
    const other = await tokenOf('admin', ADMIN_PASSWORD);
    const out = await send('POST', '/api/auth/logout', { token, headers: { 'X-Session-Duration': '42' } });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ ok: true });
    // The answers the browser kept to revalidate (the watch pages': private, no-cache) leave with the session.
    expect(out.headers.get('clear-site-data')).toBe('"cache"');
    expect((await send('GET', '/api/auth/me', { token })).status).toBe(401);
    expect((await send('GET', '/api/auth/me', { token: other })).status).toBe(200); // only that session ends
    await send('POST', '/api/auth/logout', { token: other, headers: { 'X-Session-Duration': 'a while' } });
    // Not plain decimal seconds (0x10, 5e-324), or beyond any session's life (JWT_SESSION_MAX_SECONDS' bound, 365 days): still a logout, recorded as null.
    for (const duration of ['0x10', '1e16', '31536000.5', '5e-324', '12.34567']) {
      const session = await tokenOf('admin', ADMIN_PASSWORD);
      expect((await send('POST', '/api/auth/logout', { token: session, headers: { 'X-Session-Duration': duration } })).status).toBe(200);
      expect((await send('GET', '/api/auth/me', { token: session })).status).toBe(401);
    }

    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const audit = await send('GET', '/api/settings/audit?action=logout', { token: admin });
    expect(audit.status).toBe(200);
    expect(audit.body.entries.map((e: any) => e.detail.session_duration_seconds).slice(0, 7)).toEqual([12.346, null, null, null, null, null, 42]);
  });

  it('lists entries newest first with action types, filters by action, and never stores secrets', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const all = await send('GET', '/api/settings/audit?page_size=100', { token: admin });
    expect(all.status).toBe(200);
    expect(all.body.action_types).toEqual(expect.arrayContaining(['login', 'logout', 'invite', 'login_failed', 'activate', 'user_update', 'user_delete']));
    const times = all.body.entries.map((e: any) => e.at);
    expect(times).toEqual([...times].sort().reverse());
    expect(all.body.entries[0]).toEqual({
      id: expect.any(String),
      at: expect.any(String),
      actor: expect.any(String),
      role: expect.anything(),
      action: expect.any(String),
      target: expect.anything(),
      detail: expect.any(Object),
      ip: expect.any(String),
      user_agent: expect.any(String),
    });
    const actions = new Set(all.body.entries.map((e: any) => e.action));
    for (const a of ['login', 'login_failed', 'logout', 'invite', 'activate', 'user_update', 'user_delete']) expect(actions.has(a), a).toBe(true);

    const invites = await send('GET', '/api/settings/audit?action=invite', { token: admin });
    expect(invites.body.entries.length).toBeGreaterThan(0);
    expect(invites.body.entries.every((e: any) => e.action === 'invite')).toBe(true);

    const text = JSON.stringify(all.body);
    for (const secret of [ADMIN_PASSWORD, 'dana-password', 'carol-password', 'scrypt$', 'activation_token', 'access_token']) {
      expect(text).not.toContain(secret);
    }

    const paged = await send('GET', '/api/settings/audit?page=2&page_size=5', { token: admin });
    expect(paged.body).toMatchObject({ page: 2, page_size: 5, total: all.body.total });
    expect(paged.body.entries).toEqual(all.body.entries.slice(5, 10));
    expect((await send('GET', '/api/settings/audit?page_size=500', { token: admin })).status).toBe(422);
    const unknown = await send('GET', '/api/settings/audit?action=logins', { token: admin });
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(unknown.body)).toContain('action');
  });

  it('viewers cannot read users or the audit log', async () => {
    const admin = await tokenOf('admin', ADMIN_PASSWORD);
    const viewer = await inviteAndActivate(admin, 'gail@example.com', 'viewer', 'gail-password');
    expect((await send('GET', '/api/settings/users', { token: viewer })).status).toBe(403);
    expect((await send('GET', '/api/settings/audit', { token: viewer })).status).toBe(403);
  });
});
