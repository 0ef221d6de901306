// Deactivation ends a user's tokens for good (DESIGN §6): reactivating the
// account does not bring back a token issued before the deactivation, also one
// issued in the same second (iat has one-second resolution), while a login
// after the reactivation works at once. Through the real handlers on DynamoDB Local.
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as auth } from '../../functions/auth.js';
import { handler as settings } from '../../functions/settings.js';
import { hashPassword } from '../../shared/auth/passwords.js';
import { untilClockReads } from '../../shared/auth/sign-in.js';
import { createUser } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

let superadmin: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  superadmin = await userToken('superadmin', 'root');
});

const me = (token: string) =>
  call(auth as Handler, { method: 'GET', path: '/api/auth/me', routeKey: 'GET /api/auth/me', headers: { authorization: `Bearer ${token}` } });

const login = (username: string, password: string) =>
  call(auth as Handler, {
    method: 'POST',
    path: '/api/auth/login',
    routeKey: 'POST /api/auth/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });

async function setActive(email: string, is_active: boolean): Promise<void> {
  const res = await call(settings as Handler, {
    method: 'PATCH',
    path: `/api/settings/users/${email}`,
    routeKey: 'PATCH /api/settings/users/{email}',
    params: { email },
    headers: { authorization: `Bearer ${superadmin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ is_active }),
  });
  expect(res.statusCode).toBe(200);
}

async function member(username: string, password: string): Promise<void> {
  await createUser({
    username,
    name: username,
    email: `${username}@example.com`,
    role: 'viewer',
    is_active: true,
    password_hash: await hashPassword(password),
  });
}

const second = () => Math.floor(Date.now() / 1000);

describe('tokens after a deactivation', () => {
  it('an old token is 401 from the deactivation on, also after the reactivation; a new login works', async () => {
    await member('victim', 'victim-password');
    const old = (await login('victim', 'victim-password')).json!.access_token as string;
    expect((await me(old)).statusCode).toBe(200);

    await setActive('victim@example.com', false);
    expect((await me(old)).statusCode).toBe(401);
    await setActive('victim@example.com', true);
    expect((await me(old)).statusCode).toBe(401);

    // Likely within the deactivation's second: the login still answers a token that works.
    const fresh = await login('victim', 'victim-password');
    expect(fresh.statusCode).toBe(200);
    expect((await me(fresh.json!.access_token as string)).statusCode).toBe(200);
    expect((await me(old)).statusCode).toBe(401);
  });

  it('refuses a token issued in the same second as the deactivation, after the reactivation', async () => {
    await member('quick', 'quick-password');
    // Retried until token and deactivation fall in one second (nearly always the first time).
    for (let round = 0; ; round++) {
      const start = second();
      const token = await userToken('viewer', 'quick');
      await setActive('quick@example.com', false);
      const sameSecond = second() === start;
      await setActive('quick@example.com', true);
      if (!sameSecond && round < 5) continue;
      expect(sameSecond).toBe(true);
      expect((await me(token)).statusCode).toBe(401);
      break;
    }
  });

  it('waits for the valid second by Date.now(), also after busy work, when one timer would fire early (a new token then dead on arrival)', async () => {
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setImmediate(resolve));
      // Busy work in this turn, as a password hash's is: the loop's cached clock falls behind Date.now().
      const busyUntil = Date.now() + 40;
      while (Date.now() < busyUntil);
      const target = Date.now() + 60;
      await untilClockReads(target);
      expect(Date.now()).toBeGreaterThanOrEqual(target);
    }
  });
});
