// One canonical username (NFKC, lowercase, a strict character set) for the
// lockout, the account and the LDAP bind, against a real slapd: OpenLDAP binds
// `ｃａｒｏｌ` or `c𝐚rol` as uid=carol, so every such spelling must be carol
// (her one account, her role, her lockout window, her deactivation), and
// anything outside the character set is refused before any bind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../shared/auth/passwords.js';
import type { Principal } from '../../shared/auth/principal.js';
import { login, NOT_A_USERNAME } from '../../shared/auth/sign-in.js';
import { updateUser } from '../../shared/auth/user-admin.js';
import { forgetSecrets } from '../../shared/config/secrets.js';
import { listAudit } from '../../shared/db/audit.js';
import { createUser, getUser, listUsers } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import { useTestJwtSecret } from '../support/tokens.js';
import { PEOPLE_BASE, startSlapd, type Slapd } from './slapd.js';

const CAROL_DN = `uid=carol,${PEOPLE_BASE}`;
const LDAP_VARS = ['LDAP_URL', 'LDAP_USER_DN_TEMPLATE', 'LDAP_TIMEOUT_MS', 'LDAP_ROLE_MAP'];
const caller = { ip: '127.0.0.1', userAgent: 'vitest' };
/** Spellings slapd binds as uid=carol. */
const VARIANTS = ['ｃａｒｏｌ', 'ｃarol', 'c𝐚rol', 'CAROL', ' Ｃaｒol '];
let slapd: Slapd;

const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (error: { status?: number }) => error.status,
  );
const carolBinds = async () => (await slapd.binds()).filter((dn) => dn === CAROL_DN).length;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  slapd = await startSlapd([{ uid: 'carol', password: 'carol-secret', cn: 'Carol Danvers', mail: 'carol@example.org' }]);
  Object.assign(process.env, {
    LDAP_URL: slapd.url,
    LDAP_USER_DN_TEMPLATE: `uid={username},${PEOPLE_BASE}`,
    LDAP_TIMEOUT_MS: '3000',
    LDAP_ROLE_MAP: 'carol=admin',
  });
  forgetSecrets();
});

afterAll(async () => {
  await slapd?.stop();
  for (const v of LDAP_VARS) delete process.env[v];
  forgetSecrets();
});

describe('one canonical username', () => {
  it('logs every spelling of carol in as her one account, with her LDAP_ROLE_MAP role', async () => {
    const carol = await login('carol', 'carol-secret', caller);
    expect(carol.user).toMatchObject({ username: 'carol', role: 'admin' });
    for (const variant of VARIANTS) {
      expect((await login(variant, 'carol-secret', caller)).user, variant).toEqual(carol.user);
    }
    expect((await listUsers()).map((u) => u.username)).toEqual(['carol']);
  });

  it('refuses a name outside the allowed characters as a wrong password, before any bind', async () => {
    const before = (await slapd.binds()).length;
    // soft hyphen and zero-width space (which LDAP servers map away), a space, DN syntax
    for (const name of ['carol\u00ad', 'ca\u200brol', 'ca rol', 'carol,ou=people']) {
      await expect(login(name, 'carol-secret', caller), JSON.stringify(name)).rejects.toMatchObject({ status: 401, message: 'Invalid username or password.' });
    }
    expect((await slapd.binds()).length).toBe(before);
    const refused = (await listAudit('login_failed')).filter((e) => e.detail.reason === 'invalid_username');
    // Never the text typed (often a password in the wrong field), nor its length: a marker.
    expect(refused.map((e) => [e.actor, e.target, e.detail])).toEqual(Array(4).fill([NOT_A_USERNAME, NOT_A_USERNAME, { reason: 'invalid_username' }]));
  });

  it('gives built-in users the same canonical form, and makes no account under any other', async () => {
    const ops = await createUser({
      username: 'ＬＯＣＡＬ－ＯＰＳ',
      name: 'Local Ops',
      email: 'ops@example.com',
      role: 'viewer',
      is_active: true,
      password_hash: await hashPassword('local-ops-pw'),
    });
    expect(ops.username).toBe('local-ops');
    expect((await login('Ｌocal-ops', 'local-ops-pw', caller)).user.id).toBe(ops.id);
    await expect(createUser({ username: 'ca\u200brol', name: 'x', email: 'x@example.com', role: 'viewer', is_active: true })).rejects.toThrow(
      'Not a valid username',
    );
  });

  it('once carol is deactivated, no spelling of her name logs in, and none makes a new account', async () => {
    const root = await createUser({ username: 'root', name: 'Root', email: 'root@example.com', role: 'superadmin', is_active: true });
    const actor: Principal = { userId: root.id, username: root.username, name: root.name, email: root.email, role: root.role };
    await updateUser(actor, 'carol@example.org', { is_active: false }, caller);
    const accounts = (await listUsers()).length;
    const binds = await carolBinds();
    // carol and 4 spellings: 5 attempts, all within her window
    for (const name of ['carol', ...VARIANTS.slice(0, 4)]) expect(await statusOf(login(name, 'carol-secret', caller)), name).toBe(401);
    expect(await carolBinds()).toBe(binds + 5); // slapd accepted each: only the account refused them
    expect((await listUsers()).length).toBe(accounts);
    expect(await getUser('carol')).toMatchObject({ is_active: false, source: 'ldap' });
  });
});

describe('the lockout of carol', () => {
  // Fresh tables: a window of its own, not the attempts the tests above made.
  beforeAll(() => useTestTables());

  it('counts every spelling in her one window: after 5 wrong guesses even the right password in a 6th is 429, unchecked', async () => {
    const before = await carolBinds();
    for (const [i, name] of ['carol', ...VARIANTS.slice(0, 4)].entries()) {
      expect(await statusOf(login(name, `guess-${i}`, caller)), name).toBe(401);
    }
    expect(await statusOf(login(VARIANTS[4]!, 'carol-secret', caller))).toBe(429);
    expect(await statusOf(login('carol', 'carol-secret', caller))).toBe(429);
    expect(await carolBinds()).toBe(before + 5);
  });
});
