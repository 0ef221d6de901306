// The claim of "the running refresh of these kinds" (issue 21 §2): a lease lock
// (shared/db/locks.ts) per kinds set, named `refresh:<kinds, sorted, comma-joined>`
// and owned by the run's id. The refresh routes claim it (shared/scoring/refresh.ts);
// the recompute worker takes the run up under it and releases it when the run ends.
// A run's lease also bounds it: one still running past it is recorded failed, for good.
// Apart from refresh.ts so the worker's bundle carries neither the route's settings nor its answers.
import { randomUUID } from 'node:crypto';
import { ConditionFailed, WriteConflict } from '../db/client.js';
import { acquireLock, heartbeatLock, lockHolder, releaseLock, takeOverLock } from '../db/locks.js';
import { expireRefresh, finishRefresh, getRefresh, type RefreshRecord, type SnapshotKind, startRefreshRun } from '../db/scores.js';
import { WORKERS } from '../workers.js';

/**
 * A run's lease: a run still `running` this long after its worker took it up (or after it was recorded, while
 * no worker has) has died with its worker (timeout, crash) or its event came too late: it counts as failed.
 */
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
    const running = await currentRefresh(holder.owner);
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

const EXPIRED = 'the refresh did not finish (see the recompute logs)';

/**
 * `run` as it stands. One still `running` past its lease (REFRESH_LEASE_MS) is recorded failed first, and
 * only then answered so: that answer is final, as a worker whose event comes later no longer starts the run.
 */
export async function settleRefresh(run: RefreshRecord, now = Date.now()): Promise<RefreshRecord> {
  if (run.status !== 'running' || now - Date.parse(run.worker_started_at ?? run.started_at) <= REFRESH_LEASE_MS) return run;
  await expireRefresh(run.refresh_id, EXPIRED, REFRESH_LEASE_MS, now);
  // Failed now, or taken up or finished by its worker just before: the record says which.
  return (await getRefresh(run.refresh_id)) ?? run;
}

/** Run `id` as it stands (`settleRefresh`); undefined when it is not recorded. */
export async function currentRefresh(id: string): Promise<RefreshRecord | undefined> {
  const run = await getRefresh(id);
  return run && settleRefresh(run);
}

/**
 * The worker's start of run `id`: whether to compute it. Lambda may deliver its event twice, or late (it waits
 * in Lambda's queue), so only a run still `running`, taken up by no worker before and within its lease is
 * started (startRefreshRun), and only while the claim is still its own: once the lease ended, another run of
 * these kinds may hold it. The claim is then renewed for a lease from now, as the run's lease starts again;
 * a run started whose claim is another's is recorded failed, so two refreshes of the same kinds never run at once.
 */
export async function takeUpRefresh(id: string, kinds: readonly SnapshotKind[]): Promise<boolean> {
  if (!(await startRefreshRun(id, randomUUID(), REFRESH_LEASE_MS))) return false;
  try {
    await heartbeatLock(refreshLockName(kinds), id, REFRESH_LEASE_MS);
    return true;
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    await finishRefresh(id, { status: 'failed', error: 'another refresh of these kinds took its place (see the recompute logs)' });
    return false;
  }
}
