// Failed logins per address, on DynamoDB Local: the per-username lockout does not slow one
// password tried on many names (spraying), nor a flood of failures each written to the audit
// log. At most MAX_FAILED_LOGINS_PER_ADDRESS (30) per address (an IPv6 /64) per 15 minutes;
// a success gives its place back; an edge server's address (CloudFront's word unchecked) is
// never limited. Times are passed in where the window's clock matters.
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../shared/auth/passwords.js';
import { login } from '../../shared/auth/sign-in.js';
import { listAudit } from '../../shared/db/audit.js';
import { addressBlock, LOGIN_WINDOW_SECONDS, MAX_FAILED_LOGINS_PER_ADDRESS, releaseAddressAttempt, reserveAddressAttempt } from '../../shared/db/sessions.js';
import { createUser } from '../../shared/db/users.js';
import { useTestTables } from '../support/dynamo.js';
import { useTestJwtSecret } from '../support/tokens.js';

const T0 = new Date('2030-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (error: { status?: number }) => error.status,
  );
const from = (ip: string, edgeAddress?: boolean) => ({ ip, userAgent: 'vitest', ...(edgeAddress ? { edgeAddress } : {}) });

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  await createUser({
    username: 'nina',
    name: 'Nina',
    email: 'nina@example.org',
    role: 'viewer',
    is_active: true,
    password_hash: await hashPassword('nina-pw'),
  });
});

describe('the address window', () => {
  it('counts an IPv4 address alone, an IPv6 address by its /64, a mapped IPv4 as itself, however written', async () => {
    expect(addressBlock('203.0.113.9')).toBe('203.0.113.9');
    expect(addressBlock('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressBlock('2001:db8:0:1::abcd')).toBe('2001:db8:0:1::/64');
    expect(addressBlock('2001:0DB8:0000:0001:ffff:1:2:3')).toBe('2001:db8:0:1::/64');
    expect(addressBlock('2001:db8::1')).toBe('2001:db8:0:0::/64');
    // However written: a mapped IPv4 in hex, a dotted tail, a zone.
    expect(addressBlock('::FFFF:cb00:7109')).toBe('203.0.113.9');
    expect(addressBlock('::1:2:3:4:5.6.7.8')).toBe('0:0:1:2::/64');
    expect(addressBlock('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    // Two hosts of one /64 share a window; the next /64 has its own.
    for (let i = 0; i < MAX_FAILED_LOGINS_PER_ADDRESS; i++) expect((await reserveAddressAttempt(`2001:db8:0:7::${i + 1}`, at(i))).reserved).toBe(true);
    expect(await reserveAddressAttempt('2001:db8:0:7:1:2:3:4', at(40))).toEqual({
      reserved: false,
      retryAfterSeconds: LOGIN_WINDOW_SECONDS - 40,
      firstRefusal: true,
    });
    expect((await reserveAddressAttempt('2001:db8:0:8::1', at(40))).reserved).toBe(true);
  });

  it('gives a place back only in the window it was taken in', async () => {
    const first = await reserveAddressAttempt('192.0.2.50', at(0));
    if (!first.reserved) throw new Error('expected a reservation');
    await releaseAddressAttempt('192.0.2.50', first);
    expect(await reserveAddressAttempt('192.0.2.50', at(1))).toMatchObject({ reserved: true, attempt: 1 });
    // A later window's count is not lowered by an older window's success.
    const next = await reserveAddressAttempt('192.0.2.50', at(LOGIN_WINDOW_SECONDS + 1));
    await releaseAddressAttempt('192.0.2.50', first);
    expect(await reserveAddressAttempt('192.0.2.50', at(LOGIN_WINDOW_SECONDS + 2))).toMatchObject({ reserved: true, attempt: 2 });
    expect(next).toMatchObject({ reserved: true, attempt: 1 });
  });
});

// Each failed login costs a scrypt (about 0.3 s of a core, four at a time): 30 and more of them passed 17 s of the
// 30 s default on a quiet CI machine, and timed out on a loaded one.
describe('logins from one address', { timeout: 90_000 }, () => {
  it('refuses a password sprayed over many names after 30 failures, even a right one, with one audit entry; another address is not held', async () => {
    const sprayer = from('203.0.113.7');
    const sprayed = await Promise.all(Array.from({ length: MAX_FAILED_LOGINS_PER_ADDRESS }, (_, i) => statusOf(login(`name-${i}`, 'Winter2026!', sprayer))));
    expect(sprayed).toEqual(Array(MAX_FAILED_LOGINS_PER_ADDRESS).fill(401));
    for (const [name, password] of [
      ['nina', 'nina-pw'],
      ['someone', 'Winter2026!'],
      ['x y', 'Winter2026!'], // not a username at all: refused before its decoy check
    ])
      await expect(login(name!, password!, sprayer)).rejects.toMatchObject({
        status: 429,
        message: 'Too many failed logins from your network; try again later.',
      });
    const refusals = (await listAudit('login_failed')).filter((e) => e.detail.reason === 'address_locked_out');
    expect(refusals.map((e) => e.ip)).toEqual(['203.0.113.7']);
    expect((await login('nina', 'nina-pw', from('203.0.113.8'))).user.username).toBe('nina');
    // CloudFront's word could not be checked: the address is an edge server's, shared, and not limited.
    expect(await statusOf(login('nina', 'nina-pw', from('203.0.113.7', true)))).toBe(200);
  });

  it('gives back the place of a login refused by its username’s lockout: one person’s retries do not fill the window for everyone behind the address', async () => {
    const colleague = from('198.51.100.30');
    // A script retrying an old password: 5 checked failures, then refusals that check nothing.
    const retries = [];
    for (let i = 0; i < MAX_FAILED_LOGINS_PER_ADDRESS + 5; i++) retries.push(await statusOf(login('stale-script', 'old-password', colleague)));
    expect(retries).toEqual([...Array(5).fill(401), ...Array(MAX_FAILED_LOGINS_PER_ADDRESS).fill(429)]);
    expect(await statusOf(login('nina', 'nina-pw', colleague))).toBe(200);
  });

  it('gives a success its place back: only failures fill the window', async () => {
    const office = from('198.51.100.20');
    const typos = await Promise.all(Array.from({ length: MAX_FAILED_LOGINS_PER_ADDRESS - 1 }, (_, i) => statusOf(login(`typo-${i}`, 'wrong', office))));
    expect(typos).toEqual(Array(MAX_FAILED_LOGINS_PER_ADDRESS - 1).fill(401));
    for (let i = 0; i < 3; i++) expect(await statusOf(login('nina', 'nina-pw', office))).toBe(200);
    expect(await statusOf(login('nina', 'wrong', office))).toBe(401); // the 30th failure
    expect(await statusOf(login('nina', 'nina-pw', office))).toBe(429);
  });
});
