import { SignJWT, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCE, ISSUER, resetSigningKey, verifyAccessToken } from '../../shared/auth/jwt.js';
import { TEST_JWT_SECRET, signedToken as tokenFor, useTestJwtSecret } from '../support/tokens.js';

const claims = { username: 'ann', name: 'Ann', email: 'ann@example.com', role: 'admin' };
const key = (secret: string) => new TextEncoder().encode(secret);

describe('access tokens', () => {
  beforeAll(() => useTestJwtSecret());

  it('round-trips the principal', async () => {
    const verified = await verifyAccessToken(await tokenFor('admin', 'ann'));
    expect(verified?.principal).toEqual({ userId: 'id-ann', username: 'ann', name: 'The admin', email: 'ann@example.com', role: 'admin' });
  });

  it('refuses a token signed with another key', async () => {
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(key('another-secret-another-secret-another-secret'));
    expect(await verifyAccessToken(forged)).toBeNull();
  });

  it('refuses alg none', async () => {
    const unsecured = new UnsecuredJWT(claims).setSubject('x').setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt().setExpirationTime('1h').encode();
    expect(await verifyAccessToken(unsecured)).toBeNull();
  });

  it('refuses an expired token, a wrong audience or issuer, and a bad role', async () => {
    // With a jti, as every token we sign has: without one each of them failed the claims, whatever it was meant to test.
    const base = () => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setJti('j').setIssuedAt();
    const k = key(TEST_JWT_SECRET);
    const expired = await base()
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 10)
      .sign(k);
    const audience = await base().setIssuer(ISSUER).setAudience('someone-else').setExpirationTime('1h').sign(k);
    const issuer = await base().setIssuer('evil').setAudience(AUDIENCE).setExpirationTime('1h').sign(k);
    const role = await new SignJWT({ ...claims, role: 'root' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setJti('j')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(k);
    // Expired a second ago is expired: no clock tolerance on exp.
    const justExpired = await base()
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 1)
      .sign(k);
    for (const token of [expired, justExpired, audience, issuer, role]) expect(await verifyAccessToken(token)).toBeNull();
    // The same token unexpired is accepted: each refusal above is for the one thing it changes.
    const valid = await base().setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('1h').sign(k);
    expect(await verifyAccessToken(valid)).not.toBeNull();
  });

  it('refuses a token issued in the future, or whose sign-in comes after it was issued', async () => {
    const now = Math.floor(Date.now() / 1000);
    const signed = (iat: number, extra: Record<string, number> = {}) =>
      new SignJWT({ ...claims, ...extra })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('x')
        .setJti('j')
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(now + 3600)
        .sign(key(TEST_JWT_SECRET));
    // A sign-in a day ahead would survive a "sign out everywhere" made before it.
    expect(await verifyAccessToken(await signed(now + 86_400))).toBeNull();
    expect(await verifyAccessToken(await signed(now, { auth_time: now + 86_400 }))).toBeNull();
    // Within a minute's clock difference, and a sign-in before the token, are accepted.
    expect(await verifyAccessToken(await signed(now + 30, { auth_time: now - 600 }))).toMatchObject({ authTime: now - 600 });
  });

  it('refuses claims longer than any token we sign holds (jti and username are DynamoDB keys)', async () => {
    const signed = (extra: Record<string, string>, subject = 'x') =>
      new SignJWT({ ...claims, ...extra })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(subject)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(key(TEST_JWT_SECRET));
    const long = 'a'.repeat(5000);
    for (const token of [await signed({ jti: long }), await signed({ jti: 'j', username: long }), await signed({ jti: 'j' }, long)]) {
      expect(await verifyAccessToken(token)).toBeNull();
    }
    expect(await verifyAccessToken(await signed({ jti: 'j' }))).not.toBeNull();
  });

  it('refuses a signing key shorter than 32 bytes', async () => {
    process.env.JWT_SECRET = 'short';
    resetSigningKey();
    await expect(tokenFor('viewer')).rejects.toThrow(/at least 32 bytes/);
    useTestJwtSecret();
  });
});
