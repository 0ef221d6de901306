// The claim of "the running refresh of these kinds" (issue 21 §2): a lease lock
// (shared/db/locks.ts) per kinds set, named `refresh:<kinds, sorted, comma-joined>`
// and owned by the run's id. The refresh routes claim it (shared/scoring/refresh.ts);
// the recompute worker takes the run up under it and releases it when the run ends.
// A run's lease also bounds it: one still running past it is recorded failed, for good.
// A run queued after another has that one's lease to wait in, then its own (QUEUED_LEASE_MS).
// A request joins a run only if that run computes with the rules current for it (the versions
// recorded with the run, or a run whose worker has not loaded any yet); otherwise its own run is
// queued after it, and waits for its end and its claim: never two runs of one claim at once.
// Apart from refresh.ts so the worker's bundle carries neither the route's settings nor its answers.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { ConditionFailed, WriteConflict } from '../db/client.js';
import { acquireLock, heartbeatLock, lockHolder, releaseLock, takeOverLock } from '../db/locks.js';
import { getCurrentRuleSet } from '../db/rules.js';
import {
  expireRefresh,
  finishRefresh,
  getRefresh,
  queueRefreshAfter,
  type RefreshRecord,
  type RuleVersions,
  SNAPSHOT_KINDS,
  type SnapshotKind,
  startRefreshRun,
} from '../db/scores.js';
import { createLogger, errorFields, type Logger } from '../log.js';
import { WORKERS } from '../workers.js';

let logger: Logger | undefined;
const log = () => (logger ??= createLogger('refresh-claim'));

/**
 * A run's lease: a run still `running` this long after its worker took it up (or after it was recorded, while
 * no worker has; a queued run has QUEUED_LEASE_MS for that) has died with its worker (timeout, crash) or its
 * event came too late: it counts as failed.
 */
export const REFRESH_LEASE_MS = (WORKERS.recompute.timeoutSeconds + 30) * 1000;

/**
 * A run queued after another (recorded with `after`) waits for that one's end first: its worker may take it up
 * within two leases of its recording (the run ahead's lease, then its own), and no later.
 */
export const QUEUED_LEASE_MS = 2 * REFRESH_LEASE_MS;

/** `run`'s lease: REFRESH_LEASE_MS, but QUEUED_LEASE_MS from its recording for a queued run no worker has taken up. */
const leaseOf = (run: RefreshRecord) => (run.after !== undefined && run.worker_started_at === undefined ? QUEUED_LEASE_MS : REFRESH_LEASE_MS);

/** What a queued run's worker waits at most in one invocation before it hands the wait on to a new one. */
const WAIT_PER_INVOCATION_MS = 60_000;

/**
 * What a queued run's worker keeps of its invocation for the run itself: it waits for the run ahead only while
 * more than this is left (so a minute of a whole invocation), then hands the wait on to a new invocation
 * (takeUpRefresh). However long the run ahead takes, the run has at least this, not what a wait left of one.
 */
export const RUN_TIME_KEPT_MS = WORKERS.recompute.timeoutSeconds * 1000 - WAIT_PER_INVOCATION_MS;

/**
 * Invocations a queued run's wait may take: the route's, then one per WAIT_PER_INVOCATION_MS of its lease.
 * Lambda ends a chain of invocations passing one event on after 16 (its recursive loop detection): under it.
 */
export const WAIT_INVOCATIONS = 1 + Math.ceil(QUEUED_LEASE_MS / WAIT_PER_INVOCATION_MS);

/** How long a claim may stand before its run is recorded: a request records it right after claiming. */
export const STARTING_MS = 5_000;

/** The lease lock naming "the running refresh of these kinds": `refresh:<kinds, sorted, comma-joined>`. */
export const refreshLockName = (kinds: readonly SnapshotKind[]) => `refresh:${[...kinds].sort().join(',')}`;

/** The health and risk rule versions in force: a run loads both, whatever its kinds (fleet-view.ts computeFleetView). */
export async function currentRuleVersions(): Promise<RuleVersions> {
  const [health, risk] = await Promise.all([getCurrentRuleSet('health-rules'), getCurrentRuleSet('risk-rules')]);
  return { health: health?.version ?? 0, risk: risk?.version ?? 0 };
}

/**
 * Whether `run` computes with `rules` or newer: one no worker has taken up loads the rules after now (its
 * worker loads them once it has), one taken up at least the versions recorded with it (read before it was).
 */
const computesWith = (run: RefreshRecord, rules: RuleVersions) =>
  run.worker_started_at === undefined || (run.rules !== undefined && run.rules.health >= rules.health && run.rules.risk >= rules.risk);

/** What a request does about a claim: join a run (its id), start its own run (undefined), or start it queued after a run. */
export type RefreshClaim = string | { after: string } | undefined;

/**
 * Claims "the running refresh of these kinds" for run `id` (its lease: REFRESH_LEASE_MS), for a request that
 * read `rules` (currentRuleVersions) at its start. Answers the id of a run to join instead, if one computes
 * with those rules: the running run, or the run queued after it. When neither does, run `id` is queued after
 * the running run (`{ after }`: recorded so, it waits for that run's end and then takes the claim). A claim
 * not recorded yet is joined while it is new (STARTING_MS), and one whose run has finished (or was never
 * recorded since) with nothing queued after it, but was not released yet, is taken over (undefined).
 */
export async function claimRefresh(id: string, kinds: readonly SnapshotKind[], rules?: RuleVersions): Promise<RefreshClaim> {
  const name = refreshLockName(kinds);
  const wanted = rules ?? (await currentRuleVersions());
  // Another loop only when the holder changed between two reads (it expired, or another request took it over or queued first).
  for (let attempt = 0; attempt < 5; attempt++) {
    if ((await acquireLock(name, id, REFRESH_LEASE_MS)).acquired) return undefined;
    const holder = await lockHolder(name);
    if (!holder) continue;
    const run = await currentRefresh(holder.owner);
    if (run) {
      const place = await placeBy(run, id, wanted);
      if (place === 'again') continue;
      if (place !== 'take-over') return place;
    } else if (Date.now() - (holder.expires_at - REFRESH_LEASE_MS) < STARTING_MS) {
      // Claimed moments ago and not recorded yet: that request is starting its run (it records it right
      // after the claim), so this one joins it rather than start a second (its worker loads the rules later).
      return holder.owner;
    }
    if (await takeOverLock(name, holder.owner, id, REFRESH_LEASE_MS)) return undefined;
  }
  // A conflict, answered 409 like any other (shared/http): never a 500.
  throw new WriteConflict();
}

/**
 * Where a request that read `rules` goes, by `holder`, the run holding the claim: that run if it computes with
 * them, else the run queued after it if that one does, else queued after it (written on its record, so later
 * requests join the queued run). 'take-over': the holder has ended with no run queued after it; 'again': a
 * queued run has loaded older rules (it holds the claim now), or another request queued first.
 */
async function placeBy(holder: RefreshRecord, id: string, rules: RuleVersions): Promise<RefreshClaim | 'take-over' | 'again'> {
  if (holder.status === 'running' && computesWith(holder, rules)) return holder.refresh_id;
  const nextId = holder.next_refresh_id;
  const next = nextId === undefined ? undefined : await currentRefresh(nextId);
  if (next?.status === 'running') return computesWith(next, rules) ? next.refresh_id : 'again';
  // Queued moments ago and not recorded yet: its request records it right after queueing it.
  if (nextId !== undefined && !next && Date.now() - Date.parse(holder.next_at ?? '') < STARTING_MS) return nextId;
  if (holder.status !== 'running') return 'take-over';
  // Nothing queued after it, or a run that is gone (never recorded, or ended): this request's run goes there.
  return (await queueRefreshAfter(holder.refresh_id, id, nextId)) ? { after: holder.refresh_id } : 'again';
}

/** Between two looks of a queued run's worker at the run it waits for. */
const QUEUED_POLL_MS = 500;

/**
 * A queued run's worker (run `id`, queued after run `after`) waits until `after` has ended, then takes the claim
 * from it (`after`'s worker hands it over when it ends: releaseRefresh), by `until` (looking at least once).
 * True when the claim is this run's, or another run's (the take-up then finds out which); false when time is up first.
 */
async function awaitClaim(id: string, kinds: readonly SnapshotKind[], after: string, until: number): Promise<boolean> {
  const name = refreshLockName(kinds);
  for (let first = true; first || Date.now() < until; first = false) {
    const holder = await lockHolder(name);
    if (holder?.owner === id) return true;
    if (!holder) {
      if ((await acquireLock(name, id, REFRESH_LEASE_MS)).acquired) return true;
      continue;
    }
    if (holder.owner !== after) return true;
    // Ended (or past its lease, now recorded failed) without handing the claim over: taken over from it.
    if ((await currentRefresh(after))?.status !== 'running' && (await takeOverLock(name, after, id, REFRESH_LEASE_MS))) return true;
    await sleep(QUEUED_POLL_MS);
  }
  return false;
}

/**
 * Lets go of the claim, if run `id` still holds it (the worker, when its run ends): to the run queued after it,
 * if one is (recorded and waiting, or about to be recorded), so no other request takes the claim in between.
 * The run is finished by then, so nothing is queued after it any more (queueRefreshAfter wants it running).
 */
export async function releaseRefresh(id: string, kinds: readonly SnapshotKind[]): Promise<void> {
  const name = refreshLockName(kinds);
  const next = (await getRefresh(id))?.next_refresh_id;
  if (next !== undefined) {
    const queued = await getRefresh(next);
    if ((queued === undefined || queued.status === 'running') && (await takeOverLock(name, id, next, REFRESH_LEASE_MS))) return;
  }
  await releaseLock(name, id);
}

/** Every set of kinds a claim may name (each route refreshes one of them): each non-empty subset of SNAPSHOT_KINDS. */
const KIND_SETS: SnapshotKind[][] = Array.from({ length: 2 ** SNAPSHOT_KINDS.length - 1 }, (_, n) => SNAPSHOT_KINDS.filter((_, i) => (n + 1) & (1 << i)));

/**
 * Ends the refresh runs a stopped process left behind, when no worker can be running them: the local runtime at its
 * start (its workers run in-process, and its tables are its own). Each held claim's run, and the run queued after it,
 * is recorded failed with `reason`, and the claim let go. Otherwise a request after the restart joined the dead run
 * and answered 202 `running` until the run's lease ended (5.5 minutes), and then 503. Answers the runs ended.
 */
export async function endRefreshesLeftBehind(reason: string): Promise<string[]> {
  const ended: string[] = [];
  for (const kinds of KIND_SETS) {
    const name = refreshLockName(kinds);
    const holder = await lockHolder(name);
    if (!holder) continue;
    const next = (await getRefresh(holder.owner))?.next_refresh_id;
    for (const id of [holder.owner, next]) {
      if (id !== undefined && (await finishRefresh(id, { status: 'failed', error: reason }))) ended.push(id);
    }
    await releaseLock(name, holder.owner);
  }
  return ended;
}

const EXPIRED = 'the refresh did not finish (see the recompute logs)';

/**
 * `run` as it stands. One still `running` past its lease (REFRESH_LEASE_MS; QUEUED_LEASE_MS for a queued run no
 * worker has taken up) is recorded failed first, and only then answered so: that answer is final, as a worker
 * whose event comes later no longer starts the run.
 */
export async function settleRefresh(run: RefreshRecord, now = Date.now()): Promise<RefreshRecord> {
  const leaseMs = leaseOf(run);
  if (run.status !== 'running' || now - Date.parse(run.worker_started_at ?? run.started_at) <= leaseMs) return run;
  await expireRefresh(run.refresh_id, EXPIRED, leaseMs, now);
  // Failed now, or taken up or finished by its worker just before: the record says which.
  return (await getRefresh(run.refresh_id)) ?? run;
}

/** Run `id` as it stands (`settleRefresh`); undefined when it is not recorded. */
export async function currentRefresh(id: string): Promise<RefreshRecord | undefined> {
  const run = await getRefresh(id);
  return run && settleRefresh(run);
}

/** What a worker did with its run: computes it now, leaves it (not its to run), or hands its wait on (still queued). */
export type TakeUp = 'started' | 'not-started' | 'waiting';

/**
 * The worker's start of run `id`: whether to compute it. Lambda may deliver its event twice, or late (it waits
 * in Lambda's queue), so only a run still `running`, taken up by no worker before and within its lease is
 * started (startRefreshRun), and only while the claim is still its own: once the lease ended, another run of
 * these kinds may hold it. The claim is then renewed for a lease from now, as the run's lease starts again;
 * a run started whose claim is another's is recorded failed, so two refreshes of the same kinds never run at once.
 * A run queued after another first waits for that one's end and its claim (awaitClaim), while its invocation has
 * more than RUN_TIME_KEPT_MS left (`remainingMs`: the invocation's time left, a whole one unless said): 'waiting'
 * when that ran out first, and the worker starts a new invocation to wait on (functions/recompute.ts).
 */
export async function takeUpRefresh(id: string, kinds: readonly SnapshotKind[], remainingMs = WORKERS.recompute.timeoutSeconds * 1000): Promise<TakeUp> {
  const run = await getRefresh(id);
  if (run?.after !== undefined && run.status === 'running' && run.worker_started_at === undefined) {
    const deadline = Date.parse(run.started_at) + QUEUED_LEASE_MS;
    // A read that failed while waiting (DynamoDB unreachable a moment) is one more hand-on, not the run's end.
    const claimed = await awaitClaim(id, kinds, run.after, Math.min(deadline, Date.now() + remainingMs - RUN_TIME_KEPT_MS)).catch((error: unknown) => {
      log().warn('waiting for the refresh run ahead failed; a new invocation waits on', { refresh_id: id, after: run.after, ...errorFields(error) });
      return false;
    });
    if (!claimed && Date.now() < deadline) return 'waiting';
  }
  if (!(await startRefreshRun(id, randomUUID(), run ? leaseOf(run) : REFRESH_LEASE_MS))) return 'not-started';
  try {
    await heartbeatLock(refreshLockName(kinds), id, REFRESH_LEASE_MS);
    return 'started';
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    await finishRefresh(id, { status: 'failed', error: 'another refresh of these kinds took its place (see the recompute logs)' });
    return 'not-started';
  }
}
