import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBootstrapAdmin } from '../../shared/auth/bootstrap.js';
import { hashPassword, verifyPassword } from '../../shared/auth/passwords.js';
import { listAudit } from '../../shared/db/audit.js';
import { createUser, deleteUser, findUsersByEmail, getUser } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

describe('passwords', () => {
  it('verifies only the right password, with a fresh salt each time', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$17\$8\$1\$/);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('x', 'not-a-hash')).toBe(false);
  });
});

const anotherSuperadmin = () => createUser({ username: 'lead', name: 'Lead', email: 'lead-super@example.com', role: 'superadmin', is_active: true });

describe('bootstrap superadmin', () => {
  // Each on tables of its own: the bootstrap happens once per database.
  beforeEach(async () => {
    await useTestTables();
  });

  it('creates the superadmin once, with a generated password shown only then', async () => {
    const first = await ensureBootstrapAdmin('Root', 'root@example.com');
    expect(first.created).toBe(true);
    expect(first.generatedPassword).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const user = await getUser('root');
    expect(user).toMatchObject({ username: 'root', role: 'superadmin', is_active: true, email: 'root@example.com' });
    expect(await verifyPassword(first.generatedPassword!, user!.password_hash!)).toBe(true);

    const again = await ensureBootstrapAdmin('root', 'root@example.com', 'another-password');
    expect(again).toEqual({ created: false, username: 'root' });
    expect(await verifyPassword(first.generatedPassword!, (await getUser('root'))!.password_hash!)).toBe(true);
    // Audited once, as every other way an account appears is: the log says who made this superadmin, and how.
    expect(await listAudit('user_create')).toEqual([
      expect.objectContaining({ actor: 'root', role: null, target: 'root@example.com', detail: { source: 'bootstrap', role: 'superadmin' } }),
    ]);
  });

  it('does not make a deleted bootstrap account again, at the next start or with another password; another username it makes', async () => {
    expect((await ensureBootstrapAdmin('admin', 'admin@example.com', 'first-password')).created).toBe(true);
    await anotherSuperadmin(); // the last active superadmin cannot be deleted
    await deleteUser((await getUser('admin'))!);
    expect(await ensureBootstrapAdmin('admin', 'admin@example.com', 'new-password')).toEqual({ created: false, username: 'admin' });
    expect(await getUser('admin')).toBeUndefined();
    // Another bootstrap username is still made: the way back should every superadmin be lost.
    expect((await ensureBootstrapAdmin('rescue', 'rescue@example.com', 'rescue-password')).created).toBe(true);
  });

  it('marks an account made before the marker existed, so deleting it later is for good too', async () => {
    await createUser({ username: 'admin', name: 'Administrator', email: 'admin@example.com', role: 'superadmin', is_active: true });
    expect(await ensureBootstrapAdmin('admin', 'admin@example.com')).toEqual({ created: false, username: 'admin' });
    await anotherSuperadmin();
    await deleteUser((await getUser('admin'))!);
    expect((await ensureBootstrapAdmin('admin', 'admin@example.com')).created).toBe(false);
  });

  it('uses ADMIN_PASSWORD when given and creates one record under concurrent starts', async () => {
    const results = await Promise.all([1, 2, 3].map(() => ensureBootstrapAdmin('ops', 'ops@example.com', 'chosen-password')));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.every((r) => r.generatedPassword === undefined)).toBe(true);
    expect(await verifyPassword('chosen-password', (await getUser('ops'))!.password_hash!)).toBe(true);
  });

  it('is not made under another account’s email, nor under an invalid one: the error names ADMIN_EMAIL', async () => {
    await createUser({ username: 'ops-lead', name: 'Ops Lead', email: 'lead@example.com', role: 'admin', is_active: true });
    await expect(ensureBootstrapAdmin('chief', 'Lead@Example.com', 'chief-password')).rejects.toThrow(
      "ADMIN_EMAIL Lead@Example.com is another account's email already; choose another address for chief.",
    );
    await expect(ensureBootstrapAdmin('chief', 'not an address', 'chief-password')).rejects.toThrow(
      'ADMIN_EMAIL "not an address" is not a valid email address.',
    );
    expect(await getUser('chief')).toBeUndefined();
    expect((await findUsersByEmail('lead@example.com')).map((u) => u.username)).toEqual(['ops-lead']);
  });
});
