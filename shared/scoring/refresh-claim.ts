// The claim of "the running refresh of these kinds" (issue 21 §2): a lease lock
// (shared/db/locks.ts) per kinds set, named `refresh:<kinds, sorted, comma-joined>`
// and owned by the run's id. The refresh routes claim it (shared/scoring/refresh.ts);
// the recompute worker releases it when the run ends. Apart from refresh.ts so the
// worker's bundle carries neither the route's settings nor its answers.
import { WriteConflict } from '../db/client.js';
import { acquireLock, lockHolder, releaseLock, takeOverLock } from '../db/locks.js';
import { getRefresh, type SnapshotKind } from '../db/scores.js';
import { WORKERS } from '../workers.js';

/** A run still `running` this long after it started has died with its worker (timeout, crash): it counts as failed. */
export const REFRESH_LEASE_MS = (WORKERS.recompute.timeoutSeconds + 30) * 1000;

/** How long a claim may stand before its run is recorded: a request records it right after claiming. */
export const STARTING_MS = 5_000;

/** The lease lock naming "the running refresh of these kinds": `refresh:<kinds, sorted, comma-joined>`. */
export const refreshLockName = (kinds: readonly SnapshotKind[]) => `refresh:${[...kinds].sort().join(',')}`;

/**
 * Claims "the running refresh of these kinds" for run `id` (its lease: REFRESH_LEASE_MS).
 * Answers the id of the refresh already running (and holding the claim) instead, if any;
 * a claim not recorded yet is joined while it is new (STARTING_MS), and one whose run has finished
 * (or was never recorded since) but was not released yet is taken over.
 */
export async function claimRefresh(id: string, kinds: readonly SnapshotKind[]): Promise<string | undefined> {
  const name = refreshLockName(kinds);
  // Another loop only when the holder changed between two reads (it expired, or another request took it over).
  for (let attempt = 0; attempt < 5; attempt++) {
    if ((await acquireLock(name, id, REFRESH_LEASE_MS)).acquired) return undefined;
    const holder = await lockHolder(name);
    if (!holder) continue;
    const running = await getRefresh(holder.owner);
    if (running?.status === 'running') return running.refresh_id;
    // Claimed moments ago and not recorded yet: that request is starting its run (it records it right
    // after the claim), so this one joins it rather than start a second.
    if (!running && Date.now() - (holder.expires_at - REFRESH_LEASE_MS) < STARTING_MS) return holder.owner;
    if (await takeOverLock(name, holder.owner, id, REFRESH_LEASE_MS)) return undefined;
  }
  // A conflict, answered 409 like any other (shared/http): never a 500.
  throw new WriteConflict();
}

/** Lets go of the claim, if run `id` still holds it (the worker, when its run ends). */
export async function releaseRefresh(id: string, kinds: readonly SnapshotKind[]): Promise<void> {
  await releaseLock(refreshLockName(kinds), id);
}
