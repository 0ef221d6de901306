// LDAP login against a real OpenLDAP server (Debian's slapd, started by the
// test on loopback, see ./slapd.ts): success creates an LDAP account, a
// directory entry never logs in as a built-in account of the same name, wrong
// passwords and dead servers fall back to the built-in users, an unresponsive
// server is skipped for the back-off, ldaps/StartTLS trust LDAP_CA_CERT, and
// parallel attempts are capped before any bind reaches the server, and an LDAP session is not
// renewed past its first token: the directory is asked again at the next sign-in.
import { decodeJwt } from 'jose';
import { createServer, type Server, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeDnValue, ldapAuthenticate } from '../../shared/auth/ldap.js';
import { hashPassword } from '../../shared/auth/passwords.js';
import { forgetSecrets } from '../../shared/config/secrets.js';
import { resetSettings } from '../../shared/config/env.js';
import { tokenSettings } from '../../shared/config/tokens.js';
import { signAccessToken } from '../../shared/auth/jwt.js';
import { changePassword, login, untilClockReads } from '../../shared/auth/sign-in.js';
import { listManagedUsers, removeUser, updateUser } from '../../shared/auth/user-admin.js';
import { principalOf } from '../../shared/auth/principal.js';
import { listAudit } from '../../shared/db/audit.js';
import { MAX_LOGIN_ATTEMPTS } from '../../shared/db/sessions.js';
import { createUser, getUser } from '../../shared/db/users.js';
import { freePort } from '../../infra/local/dynamodb-local.js';
import { useTestTables } from '../support/dynamo.js';
import { call, type Handler } from '../support/events.js';
import { handler as authHandler } from '../../functions/auth.js';
import { passwordUser, useTestJwtSecret } from '../support/tokens.js';
import { makeTestCa, PEOPLE_BASE, startSlapd, type Person, type Slapd, type TestCa } from './slapd.js';

const PEOPLE: Person[] = [
  // The directory's own "admin": a person whose uid happens to be the built-in superadmin's username.
  { uid: 'admin', password: 'ldap-admin-password', cn: 'Directory Admin', mail: 'admin@example.org' },
  { uid: 'alice', password: 'alice-secret', cn: 'Alice Liddell', mail: 'alice@example.org' },
  { uid: 'bob', password: 'bob-secret', cn: 'Bob Builder', mail: 'bob@example.org' },
  { uid: 'carol', password: 'carol-secret', cn: 'Carol Danvers', mail: 'carol@example.org' },
  { uid: 'dave', password: 'dave-secret', cn: 'Dave Lister', mail: 'dave@example.org' },
  { uid: 'erin', password: 'erin-secret', cn: 'Erin Hunt', mail: 'erin@example.org' },
  { uid: 'frank', password: 'frank-secret', cn: 'Frank Poole', mail: 'frank@example.org' },
  { uid: 'ivan', password: 'ivan-secret', cn: 'Ivan Ivanov', mail: 'ivan@example.org' },
  { uid: 'renata', password: 'renata-secret', cn: 'Renata Renewal', mail: 'renata@example.org' },
  // Only the outage test signs in as judy: its failures lock her name for the rest of the file.
  { uid: 'judy', password: 'judy-secret', cn: 'Judy Hopps', mail: 'judy@example.org' },
  // Directory entries whose name, or address, no account field holds.
  { uid: 'grace', password: 'grace-secret', cn: `Grace ${'H'.repeat(200)}`, mail: 'grace@example.org' },
  { uid: 'heidi', password: 'heidi-secret', cn: 'Heidi', mail: `${'h'.repeat(250)}@example.org` },
  // A name that reads as another: a right-to-left override shows "Oscar \u202Enimda" as "Oscar admin".
  { uid: 'oscar', password: 'oscar-secret', cn: 'Oscar \u202Enimda', mail: 'oscar@example.org' },
  // An entry its person may bind as but not read back (no read access to one's own entry).
  { uid: 'mallory@example.org', password: 'mallory-secret', cn: 'Mallory', mail: 'mallory@example.org', unreadable: true },
  // Entries named by cn, for a DN template by cn: a login name other than the account's (the entry's uid).
  { uid: 'csmith', password: 'csmith-secret', cn: 'carol.smith', mail: 'csmith@example.org', rdn: 'cn' },
  { uid: 'local-ops', password: 'opsdir-secret', cn: 'opsdir', mail: 'opsdir@example.org', rdn: 'cn' },
  { uid: 'nomail', password: 'nomail-secret', cn: 'no.mail', rdn: 'cn' },
];
const BUILTIN_ADMIN_PASSWORD = 'built-in-admin-password';
const caller = { ip: '127.0.0.1', userAgent: 'vitest' };
const LDAP_VARS = ['LDAP_URL', 'LDAP_USER_DN_TEMPLATE', 'LDAP_TIMEOUT_MS', 'LDAP_ROLE_MAP', 'LDAP_BACKOFF_SECONDS', 'LDAP_CA_CERT', 'LDAP_STARTTLS'];
let slapd: Slapd;
let tlsSlapd: Slapd;
let ca: TestCa;

const dnOf = (uid: string) => `uid=${uid},${PEOPLE_BASE}`;
/** POST /api/auth/renew through the auth group's handler, as API Gateway calls it. */
const renewRequest = (token: string) =>
  call(authHandler as Handler, { method: 'POST', path: '/api/auth/renew', routeKey: 'POST /api/auth/renew', headers: { authorization: `Bearer ${token}` } });

/** Points LDAP at `url` with the test defaults, replacing every LDAP setting. */
function useLdap(url: string, extra: Record<string, string> = {}): void {
  for (const v of LDAP_VARS) delete process.env[v];
  Object.assign(process.env, {
    LDAP_URL: url,
    LDAP_USER_DN_TEMPLATE: `uid={username},${PEOPLE_BASE}`,
    LDAP_TIMEOUT_MS: '3000',
    LDAP_ROLE_MAP: 'bob=admin',
    ...extra,
  });
  forgetSecrets();
}

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  ca = await makeTestCa();
  [slapd, tlsSlapd] = await Promise.all([startSlapd(PEOPLE), startSlapd(PEOPLE, ca)]);
  // the built-in superadmin (as bootstrap creates it), and a built-in user who is not in LDAP
  await createUser({
    username: 'admin',
    name: 'Administrator',
    email: 'admin@fleet-health.local',
    role: 'superadmin',
    is_active: true,
    password_hash: await hashPassword(BUILTIN_ADMIN_PASSWORD),
  });
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
  await Promise.all([slapd?.stop(), tlsSlapd?.stop()]);
  if (ca) await rm(ca.dir, { recursive: true, force: true });
  for (const v of LDAP_VARS) delete process.env[v];
  forgetSecrets();
});

describe('LDAP login against slapd', () => {
  beforeAll(() => useLdap(slapd.url));

  it('logs an LDAP user in and creates their account (source ldap, viewer) on first login', async () => {
    const res = await login('alice', 'alice-secret', caller);
    expect(res.user).toMatchObject({ username: 'alice', name: 'Alice Liddell', email: 'alice@example.org', role: 'viewer' });
    expect(await getUser('alice')).toMatchObject({ source: 'ldap', is_active: true });
    expect((await getUser('alice'))?.password_hash).toBeUndefined();
    // Its password is the directory's: the service has none to change.
    await expect(changePassword(principalOf((await getUser('alice'))!), 'alice-secret', 'another-secret', caller)).rejects.toMatchObject({
      status: 409,
      message: expect.stringMatching(/^Your password is your directory’s \(LDAP\): change it there\./),
    });
    // Audited with the account, in its transaction: the directory's user made it, from where they logged in.
    const created = () => listAudit('user_create').then((entries) => entries.filter((e) => e.actor === 'alice'));
    expect(await created()).toEqual([
      expect.objectContaining({
        actor: 'alice',
        role: 'viewer',
        target: 'alice@example.org',
        detail: { source: 'ldap', role: 'viewer', name: 'Alice Liddell' },
        ip: caller.ip,
        user_agent: caller.userAgent,
      }),
    ]);
    // the second login reuses the account, and audits no second creation
    const again = await login('alice', 'alice-secret', caller);
    expect(again.user.id).toBe(res.user.id);
    expect(await created()).toHaveLength(1);
    expect(await slapd.binds()).toContain(dnOf('alice'));
  });

  it('passes over a directory name longer than an account holds or holding a bidirectional control; an address no account holds is refused (403), nothing stored', async () => {
    const res = await login('grace', 'grace-secret', caller);
    expect(res.user).toMatchObject({ username: 'grace', name: 'grace', email: 'grace@example.org' });
    expect(await getUser('grace')).toMatchObject({ source: 'ldap', name: 'grace', email: 'grace@example.org' });
    // So is a name holding a bidirectional control (shared/text.ts): the account is named by its login name.
    expect((await login('oscar', 'oscar-secret', caller)).user).toMatchObject({ username: 'oscar', name: 'oscar' });
    // Stored without an email, the account could not be addressed by the settings routes.
    await expect(login('heidi', 'heidi-secret', caller)).rejects.toMatchObject({ status: 403, message: expect.stringContaining('no usable mail attribute') });
    expect(await getUser('heidi')).toBeUndefined();
  });

  it("renews an LDAP session only up to its first token's expiry: who may sign in is the directory's to say, at sign-in", async () => {
    const token = (await login('renata', 'renata-secret', caller)).access_token;
    const first = decodeJwt(token) as { jti: string; iat: number; exp: number; auth_time: number };
    // A built-in account's renewal a second later would expire a second later; this one's does not.
    await untilClockReads((first.iat + 1) * 1000);
    const res = await renewRequest(token);
    expect(res.statusCode).toBe(200);
    const renewed = decodeJwt(res.json!.access_token as string) as typeof first;
    expect(renewed).toMatchObject({ jti: first.jti, auth_time: first.auth_time, exp: first.exp });
    expect(renewed.iat).toBeGreaterThan(first.iat);
  });

  it('renews an LDAP session never past the token it renews, nor to a token dead on arrival, when JWT_TTL_SECONDS was changed since its sign-in', async () => {
    const signedIn = decodeJwt((await login('renata', 'renata-secret', caller)).access_token) as { jti: string; iat: number; cred?: string };
    // The session as it stands two hours after its sign-in under the TTL then: its first token lives on past now.
    const ttl = tokenSettings().JWT_TTL_SECONDS;
    const session = { id: signedIn.jti, authTime: signedIn.iat - 7_200, lastsSeconds: ttl };
    const token = await signAccessToken(principalOf((await getUser('renata'))!), signedIn.cred, session);
    const held = decodeJwt(token) as { iat: number; exp: number };
    expect(held.exp).toBe(session.authTime + ttl);
    const renewed = async () => {
      const res = await renewRequest(token);
      expect(res.statusCode).toBe(200);
      return decodeJwt(res.json!.access_token as string) as { iat: number; exp: number };
    };
    try {
      // Lowered to an hour, shorter than the session's age: the renewal is not a token expired before it was signed,
      // which would sign out a tab whose own token still had hours to live.
      process.env.JWT_TTL_SECONDS = '3600';
      resetSettings();
      const shorter = await renewed();
      expect(shorter.exp).toBeGreaterThan(shorter.iat);
      expect(shorter.exp).toBeLessThanOrEqual(held.exp);
      // Raised to a day: the renewal does not outlive the first token, which is all the directory's sign-in gave.
      process.env.JWT_TTL_SECONDS = String(86_400);
      resetSettings();
      expect((await renewed()).exp).toBe(held.exp);
    } finally {
      delete process.env.JWT_TTL_SECONDS;
      resetSettings();
    }
  });

  it('maps roles from LDAP_ROLE_MAP', async () => {
    expect((await login('bob', 'bob-secret', caller)).user.role).toBe('admin');
  });

  it('a wrong LDAP password falls back to the built-in users, and is 401 when they refuse too', async () => {
    await expect(login('alice', 'wrong', caller)).rejects.toMatchObject({ status: 401 });
    const local = await login('local-ops', 'local-ops-pw', caller); // not in LDAP: built-in login
    expect(local.user).toMatchObject({ username: 'local-ops', role: 'admin' });
  });

  it("never sends a built-in account's password to the directory, nor signs in to it through LDAP", async () => {
    // uid=admin is a directory person too, but the name is the built-in superadmin's: only its built-in password counts.
    await expect(login('admin', 'ldap-admin-password', caller)).rejects.toMatchObject({ status: 401 });
    const builtIn = await login('admin', BUILTIN_ADMIN_PASSWORD, caller);
    expect(builtIn.user).toMatchObject({ username: 'admin', role: 'superadmin' });
    const logins = (await listAudit('login')).filter((e) => e.target === 'admin');
    expect(logins[0]!.detail).toEqual({ method: 'local' });
    // Neither password was bound as the name's DN (over ldap:// it would have crossed the network as typed).
    expect(await slapd.binds()).not.toContain(dnOf('admin'));
    // slapd does accept the directory's own credentials for that DN.
    expect(await ldapAuthenticate('admin', 'ldap-admin-password')).toMatchObject({ name: 'Directory Admin' });
    // the account is untouched and still built-in
    expect(await getUser('admin')).toMatchObject({ source: 'local', role: 'superadmin', email: 'admin@fleet-health.local' });
  });

  it('signs in with a right password whose entry the directory will not read back: the login name is the account', async () => {
    const res = await login('mallory@example.org', 'mallory-secret', caller);
    expect(res.user).toMatchObject({ username: 'mallory@example.org', name: 'mallory@example.org', email: 'mallory@example.org', role: 'viewer' });
    expect(await getUser('mallory@example.org')).toMatchObject({ source: 'ldap' });
    await expect(login('mallory@example.org', 'wrong', caller)).rejects.toMatchObject({ status: 401 });
  });

  it('by a DN template of cn, audits a sign-in under the account (the entry uid), and refuses an entry whose uid is a built-in account', async () => {
    useLdap(slapd.url, { LDAP_USER_DN_TEMPLATE: `cn={username},${PEOPLE_BASE}` });
    try {
      const res = await login('carol.smith', 'csmith-secret', caller);
      expect(res.user).toMatchObject({ username: 'csmith', email: 'csmith@example.org' });
      const logins = (await listAudit('login')).filter((e) => e.ip === caller.ip && e.detail.method === 'ldap');
      expect(logins[0]).toMatchObject({ actor: 'csmith', target: 'csmith' });
      // opsdir's entry has uid local-ops, a built-in account's name: LDAP does not sign in to it.
      await expect(login('opsdir', 'opsdir-secret', caller)).rejects.toMatchObject({ status: 401 });
      const conflicts = (await listAudit('login_failed')).filter((e) => e.detail.reason === 'ldap_identity_conflict');
      expect(conflicts[0]!.detail).toEqual({ reason: 'ldap_identity_conflict', method: 'ldap', account_source: 'local' });
      expect(await getUser('local-ops')).toMatchObject({ source: 'local', email: 'ops@example.com' });
      // A first login refused (no mail) is audited under the account it would have been.
      await expect(login('no.mail', 'nomail-secret', caller)).rejects.toMatchObject({ status: 403 });
      const refused = (await listAudit('login_failed')).filter((e) => e.detail.reason === 'ldap_no_email');
      expect(refused.map((e) => e.actor)).toContain('nomail');
      expect(refused.map((e) => e.actor)).not.toContain('no.mail');
    } finally {
      useLdap(slapd.url);
    }
  });

  it('keeps an LDAP account out by deactivating it: deleting one is refused (409), since its next login would make it again', async () => {
    const made = await login('ivan', 'ivan-secret', caller);
    const superadmin = principalOf((await getUser('admin'))!);
    const listed = (await listManagedUsers()).users.find((u) => u.email === 'ivan@example.org');
    expect(listed).toMatchObject({ source: 'ldap', is_active: true });
    await expect(removeUser(superadmin, 'ivan@example.org', caller)).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining('signs in through the directory (LDAP): deleting the account would not keep it out'),
    });
    expect((await getUser('ivan'))?.id).toBe(made.user.id); // nothing deleted
    await updateUser(superadmin, 'ivan@example.org', { is_active: false }, caller);
    await expect(login('ivan', 'ivan-secret', caller)).rejects.toMatchObject({ status: 401 });
    expect(await getUser('ivan')).toMatchObject({ id: made.user.id, is_active: false }); // not made again
  });

  it('links only to accounts created from LDAP: a built-in account made later is not taken over', async () => {
    // dave has a built-in account (e.g. invited before LDAP was configured) and an LDAP entry
    await createUser({
      username: 'dave',
      name: 'Dave (built-in)',
      email: 'dave@fleet.example',
      role: 'admin',
      is_active: true,
      password_hash: await hashPassword('dave-builtin-pw'),
    });
    await expect(login('dave', 'dave-secret', caller)).rejects.toMatchObject({ status: 401 });
    expect((await login('dave', 'dave-builtin-pw', caller)).user).toMatchObject({ name: 'Dave (built-in)', role: 'admin' });
  });

  it('falls back to the built-in users when the LDAP server is down', async () => {
    useLdap(`ldap://127.0.0.1:${await freePort()}`);
    try {
      expect(await ldapAuthenticate('alice', 'alice-secret')).toBe('unavailable');
      expect((await login('local-ops', 'local-ops-pw', caller)).user.username).toBe('local-ops');
      // bob has no built-in password: his could not be checked, which is not a wrong one.
      await expect(login('bob', 'bob-secret', caller)).rejects.toMatchObject({
        status: 503,
        message: expect.stringContaining('directory (LDAP) is not answering'),
      });
    } finally {
      useLdap(slapd.url);
    }
  });

  it('while the directory does not answer, a login says so (503), counted as any failure, the same for every name', async () => {
    await passwordUser('kim', 'kim-builtin-pw');
    useLdap(`ldap://127.0.0.1:${await freePort()}`, { LDAP_BACKOFF_SECONDS: '0' });
    const office = { ip: '192.0.2.77', userAgent: 'vitest' };
    try {
      // judy's password is the directory's; kim's wrong one is checked against her built-in one: the same answers,
      // so which names have a built-in password stays unsaid.
      for (const [name, password] of [
        ['judy', 'judy-secret'],
        ['kim', 'not-it'],
      ] as const) {
        for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++) {
          await expect(login(name, password, office), name).rejects.toMatchObject({ status: 503, headers: { 'Retry-After': '5' } });
        }
        await expect(login(name, password, office), name).rejects.toMatchObject({ status: 429 });
      }
    } finally {
      useLdap(slapd.url);
    }
    const outage = (await listAudit('login_failed')).filter((e) => e.ip === office.ip).map((e) => [e.actor, e.detail.reason]);
    expect(outage.filter(([, reason]) => reason === 'ldap_unavailable')).toHaveLength(MAX_LOGIN_ATTEMPTS);
    expect(outage.filter(([actor, reason]) => actor === 'kim' && reason === 'bad_credentials')).toHaveLength(MAX_LOGIN_ATTEMPTS);
  });

  it('never sends an empty password (an unauthenticated bind)', async () => {
    const before = (await slapd.binds()).length;
    expect(await ldapAuthenticate('alice', '')).toBe('refused');
    expect((await slapd.binds()).length).toBe(before);
  });

  it('escapes DN syntax in usernames', async () => {
    expect(escapeDnValue('alice,ou=admins')).toBe('alice\\,ou\\=admins');
    expect(escapeDnValue(' #x ')).toBe('\\ #x\\ ');
    expect(await ldapAuthenticate('alice,ou=people', 'alice-secret')).toBe('refused');
    // slapd logs the DN normalized, with the escaped characters in hex: all of it is the uid value
    expect((await slapd.binds()).at(-1)).toBe(`uid=alice\\2Cou\\3Dpeople,${PEOPLE_BASE}`);
  });

  it('40 parallel logins for one LDAP user: at most 5 binds reach the server, the rest answer 429, then even the right password', async () => {
    const before = (await slapd.binds()).filter((dn) => dn === dnOf('carol')).length;
    // All wrong: a success would clear the window (by design), and an LDAP bind is fast enough to
    // clear it while some of the 40 are still reserving, which would make the count a race.
    // From an address of their own: 40 failures would fill the caller's address window (30) for the tests after this one.
    const guesser = { ip: '198.51.100.40', userAgent: 'vitest' };
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => login('carol', `guess-${i}`, guesser)));
    const statuses = results.map((r) => (r.status === 'fulfilled' ? 200 : (r.reason as { status: number }).status));
    const checked = statuses.filter((s) => s !== 429).length;
    expect(checked).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - checked);
    const binds = (await slapd.binds()).filter((dn) => dn === dnOf('carol')).length - before;
    expect(binds).toBeLessThanOrEqual(5);
    expect(binds).toBe(checked);
    // The window is full: the right password is refused unchecked, and slapd sees no bind for it.
    await expect(login('carol', 'carol-secret', caller)).rejects.toMatchObject({ status: 429 });
    expect((await slapd.binds()).filter((dn) => dn === dnOf('carol')).length - before).toBe(binds);
  });
});

describe('LDAP back-off after an outage', () => {
  let blackhole: Server;
  const held: Socket[] = [];
  let connections = 0;
  let blackholeUrl: string;

  beforeAll(async () => {
    // accepts TCP, never answers: what a hung LDAP server looks like
    blackhole = createServer((socket) => {
      connections++;
      held.push(socket);
      socket.on('error', () => undefined);
    });
    const port = await freePort();
    await new Promise<void>((r) => blackhole.listen(port, '127.0.0.1', () => r()));
    blackholeUrl = `ldap://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    for (const s of held) s.destroy();
    await new Promise<void>((r) => blackhole.close(() => r()));
    useLdap(slapd.url);
  });

  it('after a timeout, logins skip LDAP for the back-off and go straight to the built-in users', async () => {
    useLdap(blackholeUrl, { LDAP_TIMEOUT_MS: '300', LDAP_BACKOFF_SECONDS: '600' });
    // the first login waits for the timeout, then falls back
    expect((await login('local-ops', 'local-ops-pw', caller)).user.username).toBe('local-ops');
    expect(connections).toBe(1);
    // within the back-off, nothing contacts the server
    for (let i = 0; i < 3; i++) expect((await login('local-ops', 'local-ops-pw', caller)).user.username).toBe('local-ops');
    await expect(login('erin', 'erin-secret', caller)).rejects.toMatchObject({ status: 503 }); // LDAP-only user: no LDAP now
    expect(await ldapAuthenticate('alice', 'alice-secret')).toBe('unavailable');
    expect(connections).toBe(1);
  });

  it('the back-off belongs to the unreachable server: a working one is used at once', async () => {
    useLdap(slapd.url, { LDAP_BACKOFF_SECONDS: '600' });
    expect((await login('erin', 'erin-secret', caller)).user).toMatchObject({ username: 'erin' });
  });

  it('LDAP_BACKOFF_SECONDS=0 turns the back-off off: every login tries the server', async () => {
    const before = connections;
    useLdap(`${blackholeUrl}/`, { LDAP_TIMEOUT_MS: '200', LDAP_BACKOFF_SECONDS: '0' });
    for (let i = 0; i < 2; i++) expect((await login('local-ops', 'local-ops-pw', caller)).user.username).toBe('local-ops');
    expect(connections - before).toBe(2);
  });
});

describe('ldaps and StartTLS with a private CA (LDAP_CA_CERT)', () => {
  afterAll(() => useLdap(slapd.url));

  it('a directory refusing binds over a plain connection meets a built-in name as a directory one: 503 for any wrong password', async () => {
    useLdap(tlsSlapd.url, { LDAP_BACKOFF_SECONDS: '0' }); // ldap://, no StartTLS: slapd answers confidentialityRequired
    const office = { ip: '192.0.2.90', userAgent: 'vitest' };
    await expect(login('erin', 'erin-secret', office)).rejects.toMatchObject({ status: 503 });
    await expect(login('local-ops', 'not-it', office)).rejects.toMatchObject({ status: 503 });
    expect((await login('local-ops', 'local-ops-pw', office)).user.username).toBe('local-ops');
    // The probe bound a name no entry has, never the built-in account's.
    expect(await tlsSlapd.binds()).not.toContain(dnOf('local-ops'));
  });

  it('logs in over ldaps when LDAP_CA_CERT holds the CA', async () => {
    useLdap(tlsSlapd.ldapsUrl!, { LDAP_CA_CERT: ca.caPem, LDAP_BACKOFF_SECONDS: '0' });
    expect((await login('frank', 'frank-secret', caller)).user).toMatchObject({ username: 'frank', name: 'Frank Poole' });
    expect(await tlsSlapd.binds()).toContain(dnOf('frank'));
  });

  it('upgrades ldap:// with StartTLS, verified against the same CA', async () => {
    useLdap(tlsSlapd.url, { LDAP_CA_CERT: ca.caPem, LDAP_STARTTLS: 'true', LDAP_BACKOFF_SECONDS: '0' });
    expect(await ldapAuthenticate('bob', 'bob-secret')).toMatchObject({ name: 'Bob Builder', role: 'admin' });
    // this server refuses password binds without TLS: without StartTLS the same credentials get nowhere
    useLdap(tlsSlapd.url, { LDAP_CA_CERT: ca.caPem, LDAP_BACKOFF_SECONDS: '0' });
    expect(await ldapAuthenticate('bob', 'bob-secret')).toBe('unavailable');
  });

  it('without the CA the server is untrusted: no bind is sent, and login falls back to the built-in users', async () => {
    const cases: Record<string, string>[] = [{}, { LDAP_STARTTLS: 'true' }, { LDAP_CA_CERT: 'placeholder, not a PEM' }];
    for (const settings of cases) {
      const url = 'LDAP_STARTTLS' in settings ? tlsSlapd.url : tlsSlapd.ldapsUrl!;
      useLdap(url, { ...settings, LDAP_BACKOFF_SECONDS: '0' });
      const before = (await tlsSlapd.binds()).length;
      expect(await ldapAuthenticate('alice', 'alice-secret')).toBe('unavailable');
      expect((await tlsSlapd.binds()).length).toBe(before);
      expect((await login('local-ops', 'local-ops-pw', caller)).user.username).toBe('local-ops');
    }
  });
});
