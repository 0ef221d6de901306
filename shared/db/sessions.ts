// Session state in the `users` table: login-attempt windows per username (the
// 5-per-15-minutes lockout) and per address (failed logins from one network), and
// revoked token ids (logout). All expire by TTL and are also checked against the
// clock, since TTL deletion is best effort. Keys: `LOGIN#<username>` / `LOGIN_FROM#<address
// or IPv6 /64>` with sk `ATTEMPTS`; under `LOGIN#<username>`, sk `KNOWN#<address>` (a network
// the username signed in from lately) and `ATTEMPTS#<address>` (that network's own window);
// `REVOKED#<token id>` with sk `TOKEN`.
//
// The lockout reserves an attempt BEFORE any password is checked: one
// conditional update adds 1 to the window's count only while it is below 5.
// However many requests arrive at once, at most 5 of them get a reservation
// per window, so at most 5 passwords are checked; the others are refused
// without a check. A failed check leaves its reservation counted (it is the
// failure); a success clears the window (see clearLoginAttempts).
import { isIP } from 'node:net';
import { ConditionFailed, deleteItem, getItem, putItem, tableName, type TransactItem, updateItem } from './client.js';

export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_LOGIN_ATTEMPTS = 5;
/**
 * Failed logins from one address (an IPv6 /64) per window, whatever the usernames: the per-username
 * lockout does not slow one password tried on many names (spraying), nor a flood of failures, each
 * an audit entry. A successful login gives its place back, so an office behind one NAT signing in
 * all morning is never held up; 30 failures in 15 minutes is not typing.
 */
export const MAX_FAILED_LOGINS_PER_ADDRESS = 30;

/**
 * How long a network a username signed in from stays known to it (each success renews it): a known
 * network keeps 5 checks of its own when strangers have filled the username's window (reserveLoginAttempt).
 */
export const KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600;

type WindowKey = { pk: string; sk: string };
const throttleKey = (username: string): WindowKey => ({ pk: `LOGIN#${username.toLowerCase()}`, sk: 'ATTEMPTS' });
const knownAddressKey = (username: string, block: string): WindowKey => ({ pk: `LOGIN#${username.toLowerCase()}`, sk: `KNOWN#${block}` });
const knownWindowKey = (username: string, block: string): WindowKey => ({ pk: `LOGIN#${username.toLowerCase()}`, sk: `ATTEMPTS#${block}` });
const addressKey = (address: string): WindowKey => ({ pk: `LOGIN_FROM#${addressBlock(address)}`, sk: 'ATTEMPTS' });

/**
 * What one sender holds: an IPv4 address, or an IPv6 address's /64 (one host is handed a whole
 * /64, so counting single IPv6 addresses would count nothing). An IPv4-mapped IPv6 address, however
 * written, is its IPv4; a zone (`%eth0`) is dropped. Anything else (never from API Gateway) is its text.
 */
export function addressBlock(address: string): string {
  const ip = address.replace(/%.*$/, '').toLowerCase();
  if (isIP(ip) !== 6) return ip;
  const groups = ipv6Groups(ip);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(ip: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const text = dotted
    ? `${ip.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`
    : ip;
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => Number.parseInt(g, 16));
}

const revokedKey = (tokenId: string) => ({ pk: `REVOKED#${tokenId}`, sk: 'TOKEN' });

const epoch = (now: Date) => Math.floor(now.getTime() / 1000);

/**
 * A reserved attempt (its number in the window), or the seconds until the username may try again and
 * whether this is the window's first refusal (the one the audit log records: a refusal checks no
 * password, so it costs an attacker nothing, and an entry for each would flood the log).
 */
export type LoginReservation =
  | { reserved: true; attempt: number; windowStart: number; knownAddress?: string; nameLockedOut?: true }
  | { reserved: false; retryAfterSeconds: number; firstRefusal: boolean };

/**
 * Reserves one password check for `username` in the current 15-minute window.
 * Refused (with Retry-After seconds) when the window already holds 5 attempts, unless the caller's
 * `address` (none when it cannot be trusted) is a network the username signed in from within
 * KNOWN_ADDRESS_SECONDS (rememberAddress): that network then has 5 checks of its own this window
 * (`knownAddress` says the reservation is in it). Five guesses from anywhere would otherwise keep
 * the account's owner out for as long as someone cared to send them, the only superadmin included;
 * a stranger still gets 5 checks per window in all, whatever its addresses.
 */
export async function reserveLoginAttempt(username: string, now = new Date(), address?: string): Promise<LoginReservation> {
  const reservation = await reserveInWindow(throttleKey(username), MAX_LOGIN_ATTEMPTS, now);
  if (reservation.reserved || address === undefined) return reservation;
  const block = addressBlock(address);
  const known = await getItem('users', knownAddressKey(username, block), true);
  if (!known || Number(known.known_until) <= epoch(now)) return reservation;
  const own = await reserveInWindow(knownWindowKey(username, block), MAX_LOGIN_ATTEMPTS, now);
  // The name's window was refused first: its first refusal (the one the audit log records) must not be lost.
  if (!own.reserved) return { ...own, firstRefusal: own.firstRefusal || reservation.firstRefusal };
  return { ...own, knownAddress: block, ...(reservation.firstRefusal ? { nameLockedOut: true as const } : {}) };
}

/** After a successful sign-in from `address`: a network this username now knows (reserveLoginAttempt), for KNOWN_ADDRESS_SECONDS. */
export async function rememberAddress(username: string, address: string, now = new Date()): Promise<void> {
  const knownUntil = epoch(now) + KNOWN_ADDRESS_SECONDS;
  await putItem('users', { ...knownAddressKey(username, addressBlock(address)), known_until: knownUntil, ttl: knownUntil + 3600 });
}

/**
 * Reserves one password check from `address` (shared/auth/caller.ts) in its current 15-minute window.
 * Refused when the window holds MAX_FAILED_LOGINS_PER_ADDRESS; a success gives its place back
 * (releaseAddressAttempt), so only failures stay counted.
 */
export function reserveAddressAttempt(address: string, now = new Date()): Promise<LoginReservation> {
  return reserveInWindow(addressKey(address), MAX_FAILED_LOGINS_PER_ADDRESS, now);
}

/**
 * After a successful login (or a refusal that checked no password): its place in its address's window is
 * given back, if that window is still current. Not idempotent: a give-back whose answer was lost and
 * retried gives back two places, one more failure allowed in that window, which is rare and harmless
 * beside a record of every success in the window's item.
 */
export async function releaseAddressAttempt(address: string, reservation: { windowStart: number }): Promise<void> {
  try {
    await updateItem('users', addressKey(address), {
      UpdateExpression: 'ADD attempts :less',
      ConditionExpression: 'window_start = :start AND attempts > :none',
      ExpressionAttributeValues: { ':less': -1, ':start': reservation.windowStart, ':none': 0 },
      ReturnValues: 'NONE',
    });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
  }
}

async function reserveInWindow(key: WindowKey, max: number, now: Date): Promise<LoginReservation> {
  const at = epoch(now);
  const cutoff = at - LOGIN_WINDOW_SECONDS;
  // A few rounds at most: each lost race means another request changed the window meanwhile.
  for (let round = 0; round < 4; round++) {
    try {
      const item = await updateItem('users', key, {
        UpdateExpression: 'ADD attempts :one',
        ConditionExpression: 'window_start > :cutoff AND attempts < :max',
        ExpressionAttributeValues: { ':one': 1, ':cutoff': cutoff, ':max': max },
      });
      return { reserved: true, attempt: Number(item?.attempts), windowStart: Number(item?.window_start) };
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
    }
    const current = await getItem('users', key, true);
    if (current && Number(current.window_start) > cutoff) {
      if (Number(current.attempts) >= max) {
        const windowStart = Number(current.window_start);
        return {
          reserved: false,
          retryAfterSeconds: Math.max(1, windowStart + LOGIN_WINDOW_SECONDS - at),
          firstRefusal: await claimFirstRefusal(key, windowStart),
        };
      }
      continue; // a window opened or was cleared meanwhile: count in it
    }
    // No window, or an old one: open a new window holding this attempt (a concurrent opener wins; then count in its window).
    try {
      await putItem(
        'users',
        { ...key, window_start: at, attempts: 1, ttl: at + LOGIN_WINDOW_SECONDS + 3600 },
        {
          ConditionExpression: 'attribute_not_exists(pk) OR window_start <= :cutoff',
          ExpressionAttributeValues: { ':cutoff': cutoff },
        },
      );
      return { reserved: true, attempt: 1, windowStart: at };
    } catch (raced) {
      if (!(raced instanceof ConditionFailed)) throw raced;
    }
  }
  // Still contended after several rounds: refuse rather than check unreserved (no lockout: not audited as one).
  return { reserved: false, retryAfterSeconds: 1, firstRefusal: false };
}

/** Marks the window's first refusal; true for the one request that did (conditional: concurrent refusals race for it). */
async function claimFirstRefusal(key: WindowKey, windowStart: number): Promise<boolean> {
  try {
    await updateItem('users', key, {
      UpdateExpression: 'SET refused_window = :ws',
      ConditionExpression: 'window_start = :ws AND (attribute_not_exists(refused_window) OR refused_window <> :ws)',
      ExpressionAttributeValues: { ':ws': windowStart },
      ReturnValues: 'NONE',
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}

/**
 * After a successful login: clears the window, but only when no other attempt
 * was reserved after this one (the count is still this attempt's number). While
 * other attempts are in flight (an attack in progress, or the user on two
 * devices), the window stays as it is, so a success never grants more checks
 * to requests racing it; the window then ends on its own.
 */
export async function clearLoginAttempts(username: string, reservation: { attempt: number; windowStart: number; knownAddress?: string }): Promise<void> {
  const key = reservation.knownAddress === undefined ? throttleKey(username) : knownWindowKey(username, reservation.knownAddress);
  try {
    await deleteItem('users', key, {
      ConditionExpression: 'attempts = :attempt AND window_start = :start',
      ExpressionAttributeValues: { ':attempt': reservation.attempt, ':start': reservation.windowStart },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
  }
}

/**
 * Ends the username's failed-login window whatever it holds, and the window of the network the link was
 * taken from: its password was just set anew through a reset link, so the failures they counted were against
 * a password that no longer exists (the person who forgot theirs is the one most likely to have filled them,
 * and would meet a 429 with the new one).
 */
export async function forgetLoginAttempts(username: string, address?: string): Promise<void> {
  await deleteItem('users', throttleKey(username));
  if (address !== undefined) await deleteItem('users', knownWindowKey(username, addressBlock(address)));
}

/** A revoked token's item, kept until the token would have expired anyway. */
const revokedItem = (tokenId: string, expiresAtEpoch: number) => ({ ...revokedKey(tokenId), expires_at: expiresAtEpoch, ttl: expiresAtEpoch + 3600 });

/** Revokes one token as a transaction action: a logout revokes and audits in one transaction. */
export function revokeTokenAction(tokenId: string, expiresAtEpoch: number): TransactItem {
  return { Put: { TableName: tableName('users'), Item: revokedItem(tokenId, expiresAtEpoch) } };
}

/** Revokes one token on its own: a logout whose audit entry could not be written still revokes. */
export async function revokeToken(tokenId: string, expiresAtEpoch: number): Promise<void> {
  await putItem('users', revokedItem(tokenId, expiresAtEpoch));
}

export async function isTokenRevoked(tokenId: string): Promise<boolean> {
  return (await getItem('users', revokedKey(tokenId), true)) !== undefined;
}
