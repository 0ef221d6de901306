// A session renewed (POST /api/auth/renew): the same session id and sign-in time, the account as it is
// now, an expiry never past sign-in + JWT_SESSION_MAX_SECONDS, no renewal outliving a deactivation it raced,
// and a logout that ends every token of the session, older or newer than the one signed out with, whatever
// the settings were when each was signed. Through the real handlers on DynamoDB Local.
import { decodeJwt } from 'jose';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handler as auth } from '../../functions/auth.js';
import { handler as settings } from '../../functions/settings.js';
import { signAccessToken } from '../../shared/auth/jwt.js';
import { principalOf } from '../../shared/auth/principal.js';
import { getItem } from '../../shared/db/client.js';
import { untilClockReads } from '../../shared/auth/sign-in.js';
import { SESSION_MAX_LIMIT, TOKEN_TTL_LIMIT } from '../../shared/config/tokens.js';
import { getUser } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import { whileHeld, type DynamoProxy } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { passwordUser, userToken, useTestJwtSecret } from '../support/tokens.js';

let superadmin: string;
let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  useTestJwtSecret();
  superadmin = await userToken('superadmin', 'renewal-root');
});

afterEach(() => {
  delete process.env.JWT_TTL_SECONDS;
  delete process.env.JWT_SESSION_MAX_SECONDS;
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const post = (path: string, token?: string, body?: unknown) =>
  call(auth as Handler, {
    method: 'POST',
    path,
    routeKey: `POST ${path}`,
    headers: { ...(token ? bearer(token) : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const me = (token: string) => call(auth as Handler, { method: 'GET', path: '/api/auth/me', routeKey: 'GET /api/auth/me', headers: bearer(token) });
const login = async (username: string, password: string): Promise<string> => {
  const res = await post('/api/auth/login', undefined, { username, password });
  expect(res.statusCode).toBe(200);
  return res.json!.access_token as string;
};
const renew = (token: string) => post('/api/auth/renew', token);
/** A superadmin's PATCH of someone's account (role, activation). */
const updateUser = (email: string, change: Record<string, unknown>) =>
  call(settings as Handler, {
    method: 'PATCH',
    path: `/api/settings/users/${email}`,
    routeKey: 'PATCH /api/settings/users/{email}',
    params: { email },
    headers: { ...bearer(superadmin), 'content-type': 'application/json' },
    body: JSON.stringify(change),
  });
const claims = (token: string) => decodeJwt(token) as { jti: string; iat: number; exp: number; auth_time: number; role: string };
const now = () => Math.floor(Date.now() / 1000);

describe('POST /api/auth/renew', () => {
  it('answers a token of the same session, signed now, that works; the one it replaces works on until its own expiry', async () => {
    await passwordUser('renewer', 'renewer-password');
    const first = await login('renewer', 'renewer-password');
    const res = await renew(first);
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ token_type: 'bearer', user: { username: 'renewer', role: 'viewer' } });
    const renewed = res.json!.access_token as string;
    const [before, after] = [claims(first), claims(renewed)];
    expect(after.jti).toBe(before.jti);
    expect(after.auth_time).toBe(before.auth_time);
    expect(after.iat).toBeGreaterThanOrEqual(before.iat);
    // The lifetime the settings give (JWT_TTL_SECONDS' default): a full one, from the renewal.
    expect(after.exp - after.iat).toBe(43_200);
    expect((await me(renewed)).statusCode).toBe(200);
    expect((await me(first)).statusCode).toBe(200);
  });

  it("carries the account's role as it is now", async () => {
    await passwordUser('promoted', 'promoted-password');
    const token = await login('promoted', 'promoted-password');
    const patched = await updateUser('promoted@example.org', { role: 'admin' });
    expect(patched.statusCode).toBe(200);
    const res = await renew(token);
    expect(res.json!.user.role).toBe('admin');
    expect(claims(res.json!.access_token).role).toBe('admin');
  });

  it('never signs a token past the end of the session: sign-in + JWT_SESSION_MAX_SECONDS', async () => {
    process.env.JWT_TTL_SECONDS = '600';
    process.env.JWT_SESSION_MAX_SECONDS = '900';
    await passwordUser('long-lived', 'long-lived-password');
    const user = (await getUser('long-lived'))!;
    // A session signed in 800 s ago, its token signed then (as the key signs, so as the service did).
    const signedIn = now() - 800;
    const old = await signAccessToken(principalOf(user), undefined, { id: `session-${signedIn}`, authTime: signedIn });
    expect(claims(old).exp).toBe(signedIn + 900);

    const res = await renew(old);
    expect(res.statusCode).toBe(200);
    const renewed = claims(res.json!.access_token);
    expect(renewed.auth_time).toBe(signedIn);
    // 100 s of the session are left, not the 600 of a token's lifetime.
    expect(renewed.exp).toBe(signedIn + 900);
    expect(renewed.exp - renewed.iat).toBeLessThan(600);
  });

  it('answers 401, not a token already expired, once JWT_SESSION_MAX_SECONDS lowered since has put the session past its end', async () => {
    process.env.JWT_TTL_SECONDS = '3600';
    await passwordUser('lowered', 'lowered-password');
    const user = (await getUser('lowered'))!;
    const signedIn = now() - 1000;
    const token = await signAccessToken(principalOf(user), undefined, { id: `session-lowered-${signedIn}`, authTime: signedIn });
    expect(claims(token).exp).toBeGreaterThan(now());
    process.env.JWT_SESSION_MAX_SECONDS = '900';
    const res = await renew(token);
    expect(res.statusCode).toBe(401);
    expect(res.json!.detail).toMatch(/longest life: sign in again/);
  });

  it('is refused (401) for a token the account no longer takes: after a password change, or a deactivation', async () => {
    await passwordUser('changer', 'changer-password');
    const old = await login('changer', 'changer-password');
    const changed = await post('/api/auth/password', old, { current_password: 'changer-password', new_password: 'changer-password-2' });
    expect(changed.statusCode).toBe(200);
    expect((await renew(old)).statusCode).toBe(401);

    await passwordUser('leaver', 'leaver-password');
    const leaving = await login('leaver', 'leaver-password');
    const deactivated = await updateUser('leaver@example.org', { is_active: false });
    expect(deactivated.statusCode).toBe(200);
    expect((await renew(leaving)).statusCode).toBe(401);
  });

  it('a renewal signed while a deactivation was being written is refused, and a reactivation does not bring it back', async () => {
    await passwordUser('racer', 'racer-password');
    const token = await login('racer', 'racer-password');
    let raced: string | undefined;
    // The renewal reads the account before the deactivation is written, and signs in a later second than the
    // deactivation's tokens_valid_from: its iat alone would pass, its session's sign-in does not.
    const held = whileHeld(
      proxy,
      (r) => r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('racer@example.org'),
      async () => {
        await untilClockReads((Math.floor(Date.now() / 1000) + 1) * 1000);
        const res = await renew(token);
        expect(res.statusCode).toBe(200);
        raced = res.json!.access_token as string;
      },
    );
    expect((await updateUser('racer@example.org', { is_active: false })).statusCode).toBe(200);
    await held.done();
    expect(claims(raced!).iat).toBeGreaterThanOrEqual((await getUser('racer'))!.tokens_valid_from!);
    expect((await updateUser('racer@example.org', { is_active: true })).statusCode).toBe(200);
    expect((await me(raced!)).statusCode).toBe(401);
    expect((await me(token)).statusCode).toBe(401);
    // The account itself is back: a new sign-in works.
    expect((await me(await login('racer', 'racer-password'))).statusCode).toBe(200);
  });
});

describe('a logout ends the whole session', () => {
  it('signing out with the renewed token ends the older one, and signing out with an older one ends the renewed', async () => {
    await passwordUser('tabs', 'tabs-password');
    const first = await login('tabs', 'tabs-password');
    const renewed = (await renew(first)).json!.access_token as string;
    expect((await post('/api/auth/logout', renewed)).statusCode).toBe(200);
    expect((await me(first)).statusCode).toBe(401);
    expect((await renew(first)).statusCode).toBe(401);

    // A copy of the tab kept the older token and signs out with it.
    const second = await login('tabs', 'tabs-password');
    const newer = (await renew(second)).json!.access_token as string;
    expect((await post('/api/auth/logout', second)).statusCode).toBe(200);
    expect((await me(newer)).statusCode).toBe(401);
  });

  it('keeps the session revoked until no token of it can be alive, though the settings were lowered since a renewal', async () => {
    // A renewal in a later second, under a 30-day token lifetime, outlives the token signed out with...
    process.env.JWT_TTL_SECONDS = String(30 * 86_400);
    process.env.JWT_SESSION_MAX_SECONDS = String(60 * 86_400);
    await passwordUser('revoked-long', 'revoked-long-password');
    const token = await login('revoked-long', 'revoked-long-password');
    await untilClockReads((claims(token).iat + 1) * 1000);
    const renewed = claims((await renew(token)).json!.access_token as string);
    expect(renewed.exp).toBeGreaterThan(claims(token).exp);
    // ...and both settings are lowered before the logout.
    process.env.JWT_TTL_SECONDS = '600';
    process.env.JWT_SESSION_MAX_SECONDS = '3600';
    const before = now();
    expect((await post('/api/auth/logout', token)).statusCode).toBe(200);
    const revoked = await getItem<{ expires_at: number }>('users', { pk: `REVOKED#${renewed.jti}`, sk: 'TOKEN' }, true);
    expect(revoked!.expires_at).toBeGreaterThanOrEqual(renewed.exp);
    // The bound is the settings' largest values (no token lives longer past its signing, or its sign-in), plus a
    // renewal racing the logout: never forever.
    expect(revoked!.expires_at).toBeLessThanOrEqual(Math.min(now() + TOKEN_TTL_LIMIT + 60, renewed.auth_time + SESSION_MAX_LIMIT));
    expect(revoked!.expires_at).toBeGreaterThanOrEqual(before + TOKEN_TTL_LIMIT);
  });
});
