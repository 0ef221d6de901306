// The login-attempt reservation on DynamoDB Local: at most 5 attempts per
// username per 15-minute window, however many ask at once; a new window after
// the old one ends; a success clears the window only when no attempt was
// reserved after it; a network the username signed in from keeps 5 of its own
// once strangers filled the window. Times are passed in where the window's clock matters.
import { beforeAll, describe, expect, it } from 'vitest';
import { login, NO_SUCH_ACCOUNT, USERNAME_LIMIT } from '../../shared/auth/sign-in.js';
import { listAudit } from '../../shared/db/audit.js';
import {
  clearLoginAttempts,
  KNOWN_ADDRESS_SECONDS,
  LOGIN_WINDOW_SECONDS,
  MAX_LOGIN_ATTEMPTS,
  rememberAddress,
  reserveLoginAttempt,
  type LoginReservation,
} from '../../shared/db/sessions.js';
import { useTestTables } from '../support/dynamo.js';
import { passwordUser, useTestJwtSecret } from '../support/tokens.js';

const T0 = new Date('2030-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const reserved = (r: LoginReservation) => {
  if (!r.reserved) throw new Error(`expected a reservation, got Retry-After ${r.retryAfterSeconds}`);
  return r;
};

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
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

  it('keeps 5 checks of its own for a network the username signed in from, once strangers filled its window', async () => {
    await rememberAddress('gina', '203.0.113.5', at(0));
    await rememberAddress('gina', '2001:db8:0:9::1', at(0));
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++)
      expect(reserved(await reserveLoginAttempt('gina', at(10), `198.51.100.${i + 1}`)).knownAddress).toBeUndefined();
    // A stranger's network, or none that can be trusted (an edge server's): refused.
    expect((await reserveLoginAttempt('gina', at(20), '198.51.100.9')).reserved).toBe(false);
    expect((await reserveLoginAttempt('gina', at(20))).reserved).toBe(false);
    // The known networks (an IPv6 one by its /64): each a window of its own.
    const own = [];
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++) own.push(reserved(await reserveLoginAttempt('gina', at(30 + i), '203.0.113.5')));
    expect(own.map((r) => [r.attempt, r.knownAddress])).toEqual([1, 2, 3, 4, 5].map((n) => [n, '203.0.113.5']));
    expect(await reserveLoginAttempt('gina', at(40), '203.0.113.5')).toEqual({
      reserved: false,
      retryAfterSeconds: LOGIN_WINDOW_SECONDS - 10,
      firstRefusal: true,
    });
    expect(reserved(await reserveLoginAttempt('gina', at(40), '2001:db8:0:9:aaaa::2')).knownAddress).toBe('2001:db8:0:9::/64');
    // A success clears the window it was reserved in, not the name's.
    await clearLoginAttempts('gina', own[4] as LoginReservation & { reserved: true });
    expect(reserved(await reserveLoginAttempt('gina', at(50), '203.0.113.5')).attempt).toBe(1);
    expect((await reserveLoginAttempt('gina', at(50), '198.51.100.9')).reserved).toBe(false);
    // Known for KNOWN_ADDRESS_SECONDS from its last sign-in only.
    await rememberAddress('hana', '203.0.113.6', at(-KNOWN_ADDRESS_SECONDS));
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++) reserved(await reserveLoginAttempt('hana', at(0)));
    expect((await reserveLoginAttempt('hana', at(1), '203.0.113.6')).reserved).toBe(false);
  });

  it('lets the owner sign in from their network while strangers keep the name locked', async () => {
    await passwordUser('ivan', 'ivan-pw-1', 'superadmin');
    const office = { ip: '203.0.113.20', userAgent: 'vitest' };
    await expect(login('ivan', 'ivan-pw-1', office)).resolves.toMatchObject({ user: { username: 'ivan' } });
    for (let i = 0; i < MAX_LOGIN_ATTEMPTS; i++) {
      await expect(login('ivan', 'guess', { ip: `198.51.100.${20 + i}`, userAgent: 'attacker' })).rejects.toMatchObject({ status: 401 });
    }
    // ivan from the office, first to meet the full window: signed in through the office's own window.
    await expect(login('ivan', 'ivan-pw-1', office)).resolves.toMatchObject({ user: { username: 'ivan' } });
    // The right password from a network ivan never signed in from: the name's lockout.
    await expect(login('ivan', 'ivan-pw-1', { ip: '198.51.100.40', userAgent: 'vitest' })).rejects.toMatchObject({
      status: 429,
      extra: { limit: USERNAME_LIMIT },
    });
    // The lockout is audited once, though the owner's sign-in took the window's first refusal.
    const lockouts = (await listAudit('login_failed')).filter((e) => e.target === 'ivan' && e.detail.reason === 'locked_out');
    expect(lockouts).toHaveLength(1);
  });

  it('records a failed login naming no account without the name typed (often a password in the wrong field)', async () => {
    await passwordUser('jana', 'jana-pw-1');
    const caller = { ip: '203.0.113.30', userAgent: 'vitest' };
    await expect(login('winter2026', 'jana@example.org', caller)).rejects.toMatchObject({ status: 401 });
    await expect(login('jana', 'wrong-pw', caller)).rejects.toMatchObject({ status: 401 });
    const failed = (await listAudit('login_failed')).filter((e) => e.ip === caller.ip);
    expect(failed.map((e) => [e.actor, e.target, e.detail.reason])).toEqual([
      ['jana', 'jana', 'bad_credentials'],
      [NO_SUCH_ACCOUNT, NO_SUCH_ACCOUNT, 'bad_credentials'],
    ]);
    expect(JSON.stringify(await listAudit())).not.toContain('winter2026');
  });
});
