// Server-side embed session reference tokens (table `embed-sessions`), one per
// user. The item expires by TTL when the session does; reads also check the
// clock, since TTL deletion is best effort. The token is never returned to a
// browser nor logged.
import { ConditionFailed, deleteItem, getItem, putItem } from './client.js';

const key = (userId: string) => ({ pk: `USER#${userId}`, sk: 'EMBED_SESSION' });

const epoch = (now: Date) => Math.floor(now.getTime() / 1000);

export interface StoredEmbedSession {
  sessionReferenceToken: string;
  /** Epoch seconds when the session ends. */
  expiresAt: number;
}

/** The user's live session reference token, or undefined when there is none (or it has expired). */
export async function getEmbedSession(userId: string, now = new Date()): Promise<StoredEmbedSession | undefined> {
  const item = await getItem('embed-sessions', key(userId), true);
  if (!item || typeof item.session_reference_token !== 'string') return undefined;
  const expiresAt = Number(item.expires_at);
  if (!(expiresAt > epoch(now))) return undefined;
  return { sessionReferenceToken: item.session_reference_token, expiresAt };
}

/**
 * Stores the user's reference token, expiring `ttlSeconds` from now, in place of `replacing` (the token read
 * before, or undefined when there was none): false, and nothing written, when another live token was stored
 * since (another acquire of the same user). `replacing: 'any'` replaces whatever is stored.
 */
export async function putEmbedSession(
  userId: string,
  sessionReferenceToken: string,
  ttlSeconds: number,
  replacing: string | undefined | 'any',
  now = new Date(),
): Promise<boolean> {
  const expiresAt = epoch(now) + ttlSeconds;
  const item = { ...key(userId), session_reference_token: sessionReferenceToken, expires_at: expiresAt, ttl: expiresAt };
  if (replacing === 'any') {
    await putItem('embed-sessions', item);
    return true;
  }
  try {
    await putItem('embed-sessions', item, {
      // The token itself too: a retried put whose first answer was lost meets its own write.
      ConditionExpression: `attribute_not_exists(pk) OR expires_at <= :now OR session_reference_token = :new${replacing === undefined ? '' : ' OR session_reference_token = :read'}`,
      ExpressionAttributeValues: { ':now': epoch(now), ':new': sessionReferenceToken, ...(replacing === undefined ? {} : { ':read': replacing }) },
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}

/** Deletes the user's reference token if it is still `token` (a concurrent acquire may have stored a new one). */
export async function deleteEmbedSession(userId: string, token: string): Promise<void> {
  try {
    await deleteItem('embed-sessions', key(userId), { ConditionExpression: 'session_reference_token = :old', ExpressionAttributeValues: { ':old': token } });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
  }
}
