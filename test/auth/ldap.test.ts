// LDAP login against a real LDAP server (ldapjs, in process): success creates
// the account, wrong password and a server that is down fall back to the
// built-in users, and usernames cannot inject DN syntax.
import ldap from 'ldapjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeDnValue, ldapAuthenticate } from '../../shared/auth/ldap.js';
import { hashPassword } from '../../shared/auth/passwords.js';
import { login } from '../../shared/auth/sign-in.js';
import { createUser, getUser } from '../../shared/db/users.js';
import { freePort } from '../../infra/local/dynamodb-local.js';
import { useTestTables } from '../support/dynamo.js';
import { useTestJwtSecret } from '../support/tokens.js';

const BASE = 'ou=people,dc=example,dc=org';
const PEOPLE: Record<string, { password: string; cn: string; mail: string }> = {
  alice: { password: 'alice-secret', cn: 'Alice Liddell', mail: 'alice@example.org' },
  bob: { password: 'bob-secret', cn: 'Bob Builder', mail: 'bob@example.org' },
};
const caller = { ip: '127.0.0.1', userAgent: 'vitest' };
const binds: string[] = [];
let server: ldap.Server;
let url: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  server = ldap.createServer();
  server.bind(BASE, (req: any, res: any, next: any) => {
    const dn = req.dn.toString().replace(/\s/g, '');
    binds.push(dn);
    const uid = /^uid=([^,]+),ou=people,dc=example,dc=org$/.exec(dn)?.[1];
    const person = uid ? PEOPLE[uid] : undefined;
    if (!person || person.password !== req.credentials) return next(new ldap.InvalidCredentialsError());
    res.end();
    return next();
  });
  server.search(BASE, (req: any, res: any, next: any) => {
    const uid = /^uid=([^,]+),/.exec(req.dn.toString().replace(/\s/g, ''))?.[1];
    const person = uid ? PEOPLE[uid] : undefined;
    if (person) res.send({ dn: req.dn.toString(), attributes: { cn: person.cn, mail: person.mail, uid } });
    res.end();
    return next();
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  url = `ldap://127.0.0.1:${port}`;
  Object.assign(process.env, { LDAP_URL: url, LDAP_USER_DN_TEMPLATE: `uid={username},${BASE}`, LDAP_TIMEOUT_MS: '2000', LDAP_ROLE_MAP: 'bob=admin' });
  // a built-in user who is not in LDAP, and one whose name LDAP also knows
  await createUser({ username: 'local-ops', name: 'Local Ops', email: 'ops@example.com', role: 'admin', is_active: true, password_hash: await hashPassword('local-ops-pw') });
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  for (const v of ['LDAP_URL', 'LDAP_USER_DN_TEMPLATE', 'LDAP_TIMEOUT_MS', 'LDAP_ROLE_MAP']) delete process.env[v];
});

describe('LDAP login', () => {
  it('logs an LDAP user in and creates their account as viewer on first login', async () => {
    const res = await login('alice', 'alice-secret', caller);
    expect(res.user).toMatchObject({ username: 'alice', name: 'Alice Liddell', email: 'alice@example.org', role: 'viewer' });
    expect(await getUser('alice')).toMatchObject({ source: 'ldap', is_active: true });
    expect((await getUser('alice'))?.password_hash).toBeUndefined();
    // the second login reuses the account
    const again = await login('alice', 'alice-secret', caller);
    expect(again.user.id).toBe(res.user.id);
  });

  it('maps roles from LDAP_ROLE_MAP', async () => {
    expect((await login('bob', 'bob-secret', caller)).user.role).toBe('admin');
  });

  it('a wrong LDAP password falls back to the built-in users, and is 401 when they refuse too', async () => {
    await expect(login('alice', 'wrong', caller)).rejects.toMatchObject({ status: 401 });
    const local = await login('local-ops', 'local-ops-pw', caller); // not in LDAP: built-in login
    expect(local.user).toMatchObject({ username: 'local-ops', role: 'admin' });
  });

  it('falls back to the built-in users when the LDAP server is down', async () => {
    const down = await freePort();
    process.env.LDAP_URL = `ldap://127.0.0.1:${down}`;
    try {
      expect(await ldapAuthenticate('alice', 'alice-secret')).toBeNull();
      expect((await login('local-ops', 'local-ops-pw', caller)).user.username).toBe('local-ops');
      await expect(login('bob', 'bob-secret', caller)).rejects.toMatchObject({ status: 401 }); // bob has no built-in password
    } finally {
      process.env.LDAP_URL = url;
    }
  });

  it('never sends an empty password (an unauthenticated bind)', async () => {
    const before = binds.length;
    expect(await ldapAuthenticate('alice', '')).toBeNull();
    expect(binds.length).toBe(before);
  });

  it('escapes DN syntax in usernames', async () => {
    expect(escapeDnValue('alice,ou=admins')).toBe('alice\\,ou\\=admins');
    expect(escapeDnValue(' #x ')).toBe('\\ #x\\ ');
    expect(await ldapAuthenticate('alice,ou=people', 'alice-secret')).toBeNull();
    expect(binds.at(-1)).toBe('uid=alice\\,ou\\=people,ou=people,dc=example,dc=org');
  });
});
