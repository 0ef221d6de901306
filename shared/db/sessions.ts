// Session state in the `users` table: failed-login windows per username (the
// 5-per-15-minutes lockout) and revoked token ids (logout). Both expire by TTL
// and are also checked against the clock, since TTL deletion is best effort.
import { ConditionFailed, deleteItem, getItem, putItem, updateItem } from './client.js';

export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const MAX_LOGIN_FAILURES = 5;

const throttleKey = (username: string) => ({ pk: `LOGIN#${username.toLowerCase()}`, sk: 'FAILURES' });
const revokedKey = (tokenId: string) => ({ pk: `REVOKED#${tokenId}`, sk: 'TOKEN' });

const epoch = (now: Date) => Math.floor(now.getTime() / 1000);

/** Seconds until the username may try again, or 0 when it is not locked out. */
export async function loginLockoutSeconds(username: string, now = new Date()): Promise<number> {
  const item = await getItem('users', throttleKey(username), true);
  if (!item) return 0;
  const windowEnd = Number(item.window_start) + LOGIN_WINDOW_SECONDS;
  if (windowEnd <= epoch(now) || Number(item.failures) < MAX_LOGIN_FAILURES) return 0;
  return windowEnd - epoch(now);
}

/** Counts a failure in the current 15-minute window, starting a new window when the last one ended. */
export async function recordLoginFailure(username: string, now = new Date()): Promise<void> {
  const key = throttleKey(username);
  const start = epoch(now);
  try {
    await updateItem('users', key, {
      UpdateExpression: 'ADD failures :one',
      ConditionExpression: 'window_start > :cutoff',
      ExpressionAttributeValues: { ':one': 1, ':cutoff': start - LOGIN_WINDOW_SECONDS },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    // No window, or an old one: open a new window (a concurrent opener wins; then count in it).
    try {
      await putItem('users', { ...key, window_start: start, failures: 1, ttl: start + LOGIN_WINDOW_SECONDS + 3600 }, {
        ConditionExpression: 'attribute_not_exists(pk) OR window_start <= :cutoff',
        ExpressionAttributeValues: { ':cutoff': start - LOGIN_WINDOW_SECONDS },
      });
    } catch (raced) {
      if (!(raced instanceof ConditionFailed)) throw raced;
      await updateItem('users', key, { UpdateExpression: 'ADD failures :one', ExpressionAttributeValues: { ':one': 1 } });
    }
  }
}

export async function clearLoginFailures(username: string): Promise<void> {
  await deleteItem('users', throttleKey(username));
}

/** Revokes one token until it would have expired anyway. */
export async function revokeToken(tokenId: string, expiresAtEpoch: number): Promise<void> {
  await putItem('users', { ...revokedKey(tokenId), expires_at: expiresAtEpoch, ttl: expiresAtEpoch + 3600 });
}

export async function isTokenRevoked(tokenId: string): Promise<boolean> {
  return (await getItem('users', revokedKey(tokenId), true)) !== undefined;
}
