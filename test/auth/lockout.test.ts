// The login-attempt reservation on DynamoDB Local: at most 5 attempts per
// username per 15-minute window, however many ask at once; a new window after
// the old one ends; a success clears the window only when no attempt was
// reserved after it. Times are passed in, never read from the clock.
import { beforeAll, describe, expect, it } from 'vitest';
import { clearLoginAttempts, LOGIN_WINDOW_SECONDS, MAX_LOGIN_ATTEMPTS, reserveLoginAttempt, type LoginReservation } from '../../shared/db/sessions.js';
import { useTestTables } from '../support/dynamo.js';

const T0 = new Date('2030-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const reserved = (r: LoginReservation) => {
  if (!r.reserved) throw new Error(`expected a reservation, got Retry-After ${r.retryAfterSeconds}`);
  return r;
};

beforeAll(async () => {
  await useTestTables();
});

describe('login attempt reservation', () => {
  it('reserves 5 attempts per window, then refuses with the seconds left in the window', async () => {
    const attempts = [];
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++) attempts.push(reserved(await reserveLoginAttempt('Carla', at(i * 10))).attempt);
    expect(attempts).toEqual([1, 2, 3, 4, 5]);
    // The window's first refusal says so (the audit log records that one), the later ones do not.
    expect(await reserveLoginAttempt('carla', at(100))).toEqual({ reserved: false, retryAfterSeconds: LOGIN_WINDOW_SECONDS - 100, firstRefusal: true });
    expect(await reserveLoginAttempt('CARLA', at(LOGIN_WINDOW_SECONDS - 1))).toEqual({ reserved: false, retryAfterSeconds: 1, firstRefusal: false });
    // another username has its own window
    expect(reserved(await reserveLoginAttempt('someone-else', at(100))).attempt).toBe(1);
  });

  it('opens a new window once the old one has ended', async () => {
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++) reserved(await reserveLoginAttempt('dora', at(0)));
    expect((await reserveLoginAttempt('dora', at(LOGIN_WINDOW_SECONDS - 1))).reserved).toBe(false);
    const next = reserved(await reserveLoginAttempt('dora', at(LOGIN_WINDOW_SECONDS)));
    expect(next).toEqual({ reserved: true, attempt: 1, windowStart: Math.floor(at(LOGIN_WINDOW_SECONDS).getTime() / 1000) });
  });

  it('grants exactly 5 of 40 simultaneous reservations, in a fresh window and in an old one', async () => {
    for (const [username, now] of [
      ['eve', at(0)],
      ['eve', at(LOGIN_WINDOW_SECONDS * 3)],
    ] as const) {
      const results = await Promise.all(Array.from({ length: 40 }, () => reserveLoginAttempt(username, now)));
      const granted = results.filter((r) => r.reserved);
      expect(granted).toHaveLength(MAX_LOGIN_ATTEMPTS);
      expect(granted.map((r) => r.attempt).sort()).toEqual([1, 2, 3, 4, 5]);
      for (const r of results) if (!r.reserved) expect(r.retryAfterSeconds).toBe(LOGIN_WINDOW_SECONDS);
    }
  });

  it('a success clears the window only when no attempt was reserved after it', async () => {
    const first = reserved(await reserveLoginAttempt('fay', at(0)));
    const second = reserved(await reserveLoginAttempt('fay', at(1)));
    await clearLoginAttempts('fay', first); // another attempt came after: the window stands
    expect(reserved(await reserveLoginAttempt('fay', at(2))).attempt).toBe(3);
    const latest = reserved(await reserveLoginAttempt('fay', at(3)));
    expect(latest.attempt).toBe(4);
    await clearLoginAttempts('fay', second); // still not the latest
    await clearLoginAttempts('fay', latest); // the latest: cleared
    expect(reserved(await reserveLoginAttempt('fay', at(4))).attempt).toBe(1);
  });
});
