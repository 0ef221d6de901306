// Password hashes, and the decoy an unknown user's login is checked against: a hash in the
// current parameters (so its check costs what a real account's does) that no password matches.
import { describe, expect, it } from 'vitest';
import { DECOY_HASH, hashPassword, verifyPassword } from '../../shared/auth/passwords.js';

describe('password hashes', () => {
  it('a hash verifies its password only', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', hash)).toBe(false);
  });

  it('the decoy is built in the parameters and key length of a real hash, and no password matches it', async () => {
    const real = (await hashPassword('any')).split('$');
    const decoy = DECOY_HASH.split('$');
    expect(decoy.slice(0, 4)).toEqual(real.slice(0, 4));
    expect(Buffer.from(decoy[5]!, 'base64').length).toBe(Buffer.from(real[5]!, 'base64').length);
    for (const password of ['', 'decoy password for unknown users', 'admin']) expect(await verifyPassword(password, DECOY_HASH)).toBe(false);
  });
});
