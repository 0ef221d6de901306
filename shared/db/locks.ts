// Lease locks (table `locks`; REFERENCE "A lease lock on DynamoDB"): one holder
// at a time, taken only when absent or expired, kept alive by heartbeats,
// released by its owner. A crashed holder blocks others for one lease at most.
//   pk = LOCK#<name>, sk = LOCK → { owner, rvn, expires_at (ms), ttl }
import { randomUUID } from 'node:crypto';
import { ConditionFailed, conditionalWrite, deleteItem, getItem, putItem, updateItem } from './client.js';
import { lockPartitionKey } from './tables.js';

const key = (name: string) => ({ pk: lockPartitionKey(name), sk: 'LOCK' });
const ttlOf = (expiresAt: number) => Math.floor(expiresAt / 1000) + 86_400;
/** The lock held by `owner` for a new lease (a fresh rvn), as acquire and take-over write it. */
const leaseItem = (name: string, owner: string, leaseMs: number, now: number) => ({
  ...key(name),
  owner,
  rvn: randomUUID(),
  expires_at: now + leaseMs,
  ttl: ttlOf(now + leaseMs),
});

export interface LockHolder {
  owner: string;
  expires_at: number;
}

/** Takes the lock for `owner`; false when someone else holds an unexpired lease. Returns the expired holder it replaced, if any. */
export async function acquireLock(name: string, owner: string, leaseMs: number, now = Date.now()): Promise<{ acquired: boolean; replaced?: LockHolder }> {
  const before = await getItem('locks', key(name), true);
  const written = await putLease(leaseItem(name, owner, leaseMs, now), {
    ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now',
    ExpressionAttributeValues: { ':now': now },
  });
  if (!written) return { acquired: false };
  const replaced = before && Number(before.expires_at) < now ? { owner: String(before.owner), expires_at: Number(before.expires_at) } : undefined;
  return { acquired: true, replaced };
}

/**
 * Takes the lock over from `from`, a holder known to be done with it though its lease runs on
 * (it finished without releasing). False when the lock is no longer `from`'s (someone else took it).
 */
export async function takeOverLock(name: string, from: string, owner: string, leaseMs: number, now = Date.now()): Promise<boolean> {
  return putLease(leaseItem(name, owner, leaseMs, now), {
    ConditionExpression: '#owner = :from',
    ExpressionAttributeNames: { '#owner': 'owner' },
    ExpressionAttributeValues: { ':from': from },
  });
}

/**
 * Writes a new lease under `condition`: whether it is in place. A lease is ours when the item carries
 * the rvn this write made, so a write whose answer was lost, and whose retry then met it, still holds
 * the lock (client.ts conditionalWrite) rather than leave it held by nobody working for one lease.
 */
async function putLease(lease: ReturnType<typeof leaseItem>, condition: Parameters<typeof putItem>[2]): Promise<boolean> {
  const place = { pk: lease.pk, sk: lease.sk };
  const { written } = await conditionalWrite(
    'locks',
    place,
    () => putItem('locks', lease, condition),
    (item) => item.rvn === lease.rvn,
  );
  return written;
}

/** Extends the owner's lease; ConditionFailed when the lock is no longer ours. */
export async function heartbeatLock(name: string, owner: string, leaseMs: number, now = Date.now()): Promise<void> {
  await updateItem('locks', key(name), {
    UpdateExpression: 'SET rvn = :rvn, expires_at = :exp, #ttl = :ttl',
    ConditionExpression: '#owner = :me',
    ExpressionAttributeNames: { '#owner': 'owner', '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':rvn': randomUUID(), ':exp': now + leaseMs, ':ttl': ttlOf(now + leaseMs), ':me': owner },
    ReturnValues: 'NONE',
  });
}

/** Releases the lock if `owner` still holds it (a no-op otherwise). */
export async function releaseLock(name: string, owner: string): Promise<void> {
  try {
    await deleteItem('locks', key(name), {
      ConditionExpression: '#owner = :me',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':me': owner },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
  }
}

/**
 * Ends `owner`'s lease if it has lapsed (a conditional delete), so a holder that was only slow to renew finds
 * the lock gone at its next heartbeat instead of renewing a lease someone already gave up on. False when
 * `owner` holds a live lease (it renewed in time); true when the lock is no longer its (ended here, or
 * absent, or someone else's).
 */
export async function endLapsedLease(name: string, owner: string, now = Date.now()): Promise<boolean> {
  try {
    await deleteItem('locks', key(name), {
      ConditionExpression: '#owner = :me AND expires_at < :now',
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':me': owner, ':now': now },
    });
    return true;
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    return (await lockHolder(name, now))?.owner !== owner;
  }
}

/** The current holder, if its lease has not expired. */
export async function lockHolder(name: string, now = Date.now()): Promise<LockHolder | undefined> {
  const item = await getItem('locks', key(name), true);
  return item && Number(item.expires_at) >= now ? { owner: String(item.owner), expires_at: Number(item.expires_at) } : undefined;
}
