// Every account has an email, and an email names exactly one account, since the
// settings routes address accounts by email: against a real slapd and DynamoDB
// Local, through the auth and settings handlers. An LDAP entry without a usable
// mail, or with another account's, gets no account; simultaneous first logins
// with one mail make one; accounts stored before the rule (no email, or a shared
// one) are not guessed between, and an LDAP login repairs them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as auth } from '../../functions/auth.js';
import { handler as settings } from '../../functions/settings.js';
import { hashPassword } from '../../shared/auth/passwords.js';
import { forgetSecrets } from '../../shared/config/secrets.js';
import { listAudit } from '../../shared/db/audit.js';
import { putItem } from '../../shared/db/client.js';
import { createUser, findUsersByEmail, getUser, listUsers, type UserRecord } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';
import { PEOPLE_BASE, startSlapd, type Person, type Slapd } from './slapd.js';

const PEOPLE: Person[] = [
  { uid: 'nomail', password: 'nomail-secret', cn: 'No Mail' },
  { uid: 'badmail', password: 'badmail-secret', cn: 'Bad Mail', mail: 'not an address' },
  // Two entries with one mail (in two spellings).
  { uid: 'twin-a', password: 'twin-a-secret', cn: 'Twin A', mail: 'twins@example.org' },
  { uid: 'twin-b', password: 'twin-b-secret', cn: 'Twin B', mail: 'Twins@Example.org' },
  // The mail of a built-in account.
  { uid: 'shadow', password: 'shadow-secret', cn: 'Shadow', mail: 'ops@example.com' },
  { uid: 'leaver', password: 'leaver-secret', cn: 'Leaver', mail: 'leaver@example.org' },
  // Accounts stored before the rule: without an email (ivy, quiet), with a shared one (henry).
  { uid: 'ivy', password: 'ivy-secret', cn: 'Ivy', mail: 'ivy@example.org' },
  { uid: 'quiet', password: 'quiet-secret', cn: 'Quiet' },
  { uid: 'henry', password: 'henry-secret', cn: 'Henry', mail: 'henry@example.org' },
];
const LDAP_VARS = ['LDAP_URL', 'LDAP_USER_DN_TEMPLATE', 'LDAP_TIMEOUT_MS'];
let slapd: Slapd;
let proxy: DynamoProxy;
let superadmin: string;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  useTestJwtSecret();
  slapd = await startSlapd(PEOPLE);
  Object.assign(process.env, { LDAP_URL: slapd.url, LDAP_USER_DN_TEMPLATE: `uid={username},${PEOPLE_BASE}`, LDAP_TIMEOUT_MS: '3000' });
  forgetSecrets();
  superadmin = await userToken('superadmin', 'root');
  await createUser({
    username: 'local-ops',
    name: 'Local Ops',
    email: 'ops@example.com',
    role: 'admin',
    is_active: true,
    password_hash: await hashPassword('local-ops-pw'),
  });
});

afterAll(async () => {
  await slapd?.stop();
  for (const v of LDAP_VARS) delete process.env[v];
  forgetSecrets();
});

const json = { 'content-type': 'application/json' };

const login = (username: string, password: string) =>
  call(auth as Handler, {
    method: 'POST',
    path: '/api/auth/login',
    routeKey: 'POST /api/auth/login',
    headers: json,
    body: JSON.stringify({ username, password }),
  });

const userRoute = (method: 'PATCH' | 'DELETE', email: string, body?: unknown) =>
  call(settings as Handler, {
    method,
    path: `/api/settings/users/${email}`,
    routeKey: `${method} /api/settings/users/{email}`,
    params: { email },
    headers: { authorization: `Bearer ${superadmin}`, ...(body ? json : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

const invite = (email: string) =>
  call(settings as Handler, {
    method: 'POST',
    path: '/api/settings/users/invite',
    routeKey: 'POST /api/settings/users/invite',
    headers: { authorization: `Bearer ${superadmin}`, ...json },
    body: JSON.stringify({ email, display_name: 'Invitee', role: 'viewer' }),
  });

/** An account as stored before an email named one account (no email item), written as the repository lays it out. */
async function storedBefore(username: string, email: string, source: 'local' | 'ldap'): Promise<UserRecord> {
  const at = new Date().toISOString();
  const record: UserRecord = {
    id: `legacy-${username}`,
    username,
    name: username,
    email,
    role: 'viewer',
    is_active: true,
    source,
    created_at: at,
    updated_at: at,
    version: 0,
  };
  // Nor a version: accounts written before versions were kept hold none (read as 0).
  const { version: _none, ...stored } = record;
  await putItem('users', { pk: 'USERS', sk: `USER#${username}`, ...stored });
  return record;
}

describe('an LDAP account needs an email of its own', () => {
  it('refuses an entry without a usable mail with a 403 saying so, and stores no account', async () => {
    const accounts = await listUsers();
    for (const uid of ['nomail', 'badmail']) {
      const res = await login(uid, `${uid}-secret`);
      expect(res.statusCode, uid).toBe(403);
      expect(res.headers?.['Content-Type']).toBe('application/problem+json');
      expect(res.json!.detail).toBe(
        `Your directory entry (${uid}) has no usable mail attribute, and every account needs an email address: ask the directory administrator to add one.`,
      );
      expect(await getUser(uid)).toBeUndefined();
    }
    expect(await listUsers()).toEqual(accounts);
    const refused = (await listAudit('login_failed')).filter((e) => e.detail.reason === 'ldap_no_email');
    expect(refused.map((e) => [e.target, e.detail.method])).toEqual([
      ['badmail', 'ldap'],
      ['nomail', 'ldap'],
    ]);
  });

  it('refuses an entry whose mail is a built-in account’s email with a 409, and stores nothing', async () => {
    const res = await login('shadow', 'shadow-secret');
    expect(res.statusCode).toBe(409);
    expect(res.json!.detail).toBe(
      "The mail of your directory entry (shadow), ops@example.com, is another account's email already, and an email names one account: ask the directory administrator to change it, or an administrator to remove the other account.",
    );
    expect(await getUser('shadow')).toBeUndefined();
    expect((await findUsersByEmail('ops@example.com')).map((u) => u.username)).toEqual(['local-ops']);
  });

  it('two entries with one mail logging in at the same moment: one account, the other 409', async () => {
    // Both transactions are held until both are sent: each login has checked the accounts and found the mail free.
    let sent = 0;
    let release!: () => void;
    const bothSent = new Promise<void>((resolve) => (release = resolve));
    const stop = proxy.watch(({ operation, input }) => {
      if (operation !== 'TransactWriteItems' || !JSON.stringify(input).includes('EMAIL#twins@example.org')) return undefined;
      if (++sent === 2) release();
      return { hold: bothSent };
    });
    let results: Awaited<ReturnType<typeof login>>[];
    try {
      results = await Promise.all([login('twin-a', 'twin-a-secret'), login('twin-b', 'twin-b-secret')]);
    } finally {
      stop();
    }
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const holders = await findUsersByEmail('twins@example.org');
    expect(holders).toHaveLength(1);
    expect(results.find((r) => r.statusCode === 200)!.json!.user.username).toBe(holders[0]!.username);
    // The refused one stays refused; the holder logs in as before.
    const loser = holders[0]!.username === 'twin-a' ? 'twin-b' : 'twin-a';
    expect((await login(loser, `${loser}-secret`)).statusCode).toBe(409);
    expect(await getUser(loser)).toBeUndefined();
    expect((await login(holders[0]!.username, `${holders[0]!.username}-secret`)).statusCode).toBe(200);
  });
});

describe('an email is held from creation to deletion', () => {
  it('held by a pending invitation and by a deactivated account; freed by deletion', async () => {
    expect((await invite('leaver@example.org')).statusCode).toBe(200);
    expect((await login('leaver', 'leaver-secret')).statusCode).toBe(409); // the invitee's address
    expect((await userRoute('DELETE', 'leaver@example.org')).statusCode).toBe(200);

    const first = await login('leaver', 'leaver-secret');
    expect(first.statusCode).toBe(200);
    expect(first.json!.user).toMatchObject({ username: 'leaver', email: 'leaver@example.org' });
    expect((await userRoute('PATCH', 'leaver@example.org', { is_active: false })).statusCode).toBe(200);
    expect((await invite('leaver@example.org')).statusCode).toBe(409);
    // A directory account is kept out by deactivation, not deletion (its next login would make it again): it keeps the address.
    expect((await userRoute('DELETE', 'leaver@example.org')).statusCode).toBe(409);
    expect((await invite('leaver@example.org')).statusCode).toBe(409);

    // A built-in account, deactivated and then deleted, frees its address.
    await createUser({ username: 'stayer', name: 'Stayer', email: 'stayer@example.org', role: 'viewer', is_active: true, password_hash: 'x' });
    expect((await userRoute('PATCH', 'stayer@example.org', { is_active: false })).statusCode).toBe(200);
    expect((await invite('stayer@example.org')).statusCode).toBe(409);
    expect((await userRoute('DELETE', 'stayer@example.org')).statusCode).toBe(200);
    expect((await invite('stayer@example.org')).statusCode).toBe(200);
  });
});

describe('accounts stored before an email named one account', () => {
  it('PATCH and DELETE of a shared email answer 409 naming the accounts, and change nothing', async () => {
    const local = await storedBefore('old-local', 'shared@example.com', 'local');
    const henry = await storedBefore('henry', 'shared@example.com', 'ldap');
    for (const res of [await userRoute('PATCH', 'shared@example.com', { role: 'admin' }), await userRoute('DELETE', 'shared@example.com')]) {
      expect(res.statusCode).toBe(409);
      expect(res.headers?.['Content-Type']).toBe('application/problem+json');
      expect(res.json!.detail).toMatch(
        /^The email shared@example.com is ambiguous: it names 2 accounts \((henry \(ldap\), old-local \(local\)|old-local \(local\), henry \(ldap\))\)/,
      );
    }
    expect(await getUser('old-local')).toEqual(local);
    expect(await getUser('henry')).toEqual(henry);
    expect((await invite('shared@example.com')).statusCode).toBe(409);

    // The LDAP account takes its entry's mail at its next login: each email names one account again.
    const res = await login('henry', 'henry-secret');
    expect(res.statusCode).toBe(200);
    expect(res.json!.user.email).toBe('henry@example.org');
    expect((await userRoute('PATCH', 'shared@example.com', { role: 'admin' })).json!.user).toMatchObject({ id: local.id, role: 'admin' });
    expect((await userRoute('PATCH', 'henry@example.org', { is_active: false })).json!.user).toMatchObject({ id: henry.id, is_active: false });
  });

  it('an LDAP account stored without an email takes its entry’s mail, and is refused while the entry has none', async () => {
    const ivy = await storedBefore('ivy', '', 'ldap');
    const res = await login('ivy', 'ivy-secret');
    expect(res.statusCode).toBe(200);
    expect(res.json!.user).toMatchObject({ id: ivy.id, email: 'ivy@example.org' });
    // The move is audited in its transaction, the directory's user as the actor.
    expect((await listAudit('user_update')).filter((e) => e.actor === 'ivy')).toEqual([
      expect.objectContaining({
        role: 'viewer',
        target: 'ivy@example.org',
        detail: { source: 'ldap', before: { email: '' }, after: { email: 'ivy@example.org' } },
      }),
    ]);
    expect((await userRoute('PATCH', 'ivy@example.org', { is_active: false })).statusCode).toBe(200);
    expect(await getUser('ivy')).toMatchObject({ id: ivy.id, email: 'ivy@example.org', is_active: false });

    const quiet = await storedBefore('quiet', '', 'ldap');
    expect((await login('quiet', 'quiet-secret')).statusCode).toBe(403);
    expect(await getUser('quiet')).toEqual(quiet);
  });
});
