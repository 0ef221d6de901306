// The refresh claim (shared/scoring/refresh-claim.ts) on the lease lock: a request of the same
// kinds joins the running run, a claim whose run finished without releasing is taken over,
// the worker's release lets the next request start afresh, and other kinds claim their own;
// a run past its lease is recorded failed, never joined; a run that loaded older rules than a
// request's is not joined: that request's run is queued after it, and gets the claim from it;
// a queued run has the run ahead's lease to wait in, then its own, and its worker waits only
// while it keeps RUN_TIME_KEPT_MS of its invocation for the run.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { acquireLock, lockHolder } from '../../shared/db/locks.js';
import { createRefresh, finishRefresh, getRefresh, startRefreshRun } from '../../shared/db/scores.js';
import {
  claimRefresh,
  currentRefresh,
  QUEUED_LEASE_MS,
  REFRESH_LEASE_MS,
  refreshLockName,
  releaseRefresh,
  RUN_TIME_KEPT_MS,
  STARTING_MS,
  settleRefresh,
  takeUpRefresh,
  WAIT_INVOCATIONS,
} from '../../shared/scoring/refresh-claim.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

const FIGURES = { generated_at: '2026-11-25T00:00:00.000Z', total_clusters: 1, critical: 0, warning: 0, risk_total: 1, risk_critical: 0, risk_warning: 0 };

describe('refresh claim', () => {
  it('is one lease lock per kinds set, whatever their order', () => {
    expect(refreshLockName(['risk', 'fleet', 'health'])).toBe('refresh:fleet,health,risk');
    expect(refreshLockName(['health', 'fleet'])).toBe(refreshLockName(['fleet', 'health']));
  });

  it('joins the running run, takes over a finished one, and starts afresh once released', async () => {
    const kinds = ['fleet', 'health'] as const;
    expect(await claimRefresh('run-a', kinds)).toBeUndefined();
    await createRefresh('run-a', kinds);
    const holder = await lockHolder(refreshLockName(kinds));
    expect(holder?.owner).toBe('run-a');
    expect(holder!.expires_at - Date.now()).toBeGreaterThan(REFRESH_LEASE_MS - 10_000);

    // Same kinds while it runs: joined; other kinds: a claim of their own.
    expect(await claimRefresh('run-b', ['health', 'fleet'])).toBe('run-a');
    expect(await claimRefresh('run-risk', ['risk'])).toBeUndefined();

    // Finished but not released: the next request takes the claim over.
    await finishRefresh('run-a', { status: 'done', figures: FIGURES });
    expect(await claimRefresh('run-c', kinds)).toBeUndefined();
    expect((await lockHolder(refreshLockName(kinds)))?.owner).toBe('run-c');

    // A late release by the old run does not let go of the new claim; the holder's own does.
    await releaseRefresh('run-a', kinds);
    expect((await lockHolder(refreshLockName(kinds)))?.owner).toBe('run-c');
    await releaseRefresh('run-c', kinds);
    expect(await lockHolder(refreshLockName(kinds))).toBeUndefined();
    expect(await claimRefresh('run-d', kinds)).toBeUndefined();
    await releaseRefresh('run-d', kinds);
    await releaseRefresh('run-risk', ['risk']);
  });

  it('joins a claim made moments ago whose run is not recorded yet, and takes over one left unrecorded', async () => {
    const kinds = ['fleet', 'risk'] as const;
    expect(await claimRefresh('run-new', kinds)).toBeUndefined();
    // Another request before run-new is recorded: it joins run-new rather than start a second run.
    expect(await claimRefresh('run-twin', kinds)).toBe('run-new');
    await releaseRefresh('run-new', kinds);
    // A claim older than STARTING_MS whose run was never recorded (its request died): taken over.
    await acquireLock(refreshLockName(kinds), 'run-died', REFRESH_LEASE_MS, Date.now() - STARTING_MS - 1_000);
    expect(await claimRefresh('run-next', kinds)).toBeUndefined();
    expect((await lockHolder(refreshLockName(kinds)))?.owner).toBe('run-next');
    await releaseRefresh('run-next', kinds);
  });

  it('takes over, never joins, a claim whose run is past its lease, recording that run failed', async () => {
    const kinds = ['health', 'risk'] as const;
    // Recorded a lease ago (Date only moved back) and never taken up by a worker, while its claim still stands.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - REFRESH_LEASE_MS - 1_000 });
    try {
      await createRefresh('run-stale', kinds);
    } finally {
      vi.useRealTimers();
    }
    await acquireLock(refreshLockName(kinds), 'run-stale', REFRESH_LEASE_MS);
    expect(await claimRefresh('run-fresh', kinds)).toBeUndefined();
    expect((await lockHolder(refreshLockName(kinds)))?.owner).toBe('run-fresh');
    expect((await getRefresh('run-stale'))?.status).toBe('failed');
    await releaseRefresh('run-fresh', kinds);
  });

  it('joins a run taken up only while it computes with the current rules; else one run is queued after it and handed the claim', async () => {
    const kinds = ['health'] as const;
    const read = { health: 3, risk: 1 };
    expect(await claimRefresh('run-old', kinds, read)).toBeUndefined();
    await createRefresh('run-old', kinds, { rules: read });
    // Taken up: its worker loads these versions (or newer) now.
    expect(await startRefreshRun('run-old', 'token-old', REFRESH_LEASE_MS)).toBe(true);
    expect(await claimRefresh('run-same', kinds, read)).toBe('run-old');
    // Newer health rules: queued after it; the next request with them joins the queued run, recorded or not yet.
    const newer = { health: 4, risk: 1 };
    expect(await claimRefresh('run-new', kinds, newer)).toEqual({ after: 'run-old' });
    expect(await claimRefresh('run-twin', kinds, newer)).toBe('run-new');
    await createRefresh('run-new', kinds, { rules: newer, after: 'run-old' });
    expect(await claimRefresh('run-twin', kinds, newer)).toBe('run-new');
    expect(await getRefresh('run-old')).toMatchObject({ next_refresh_id: 'run-new' });
    // The claim stays the running run's; when it ends, its release hands the claim to the queued run.
    expect((await lockHolder(refreshLockName(kinds)))?.owner).toBe('run-old');
    await finishRefresh('run-old', { status: 'done', figures: FIGURES });
    await releaseRefresh('run-old', kinds);
    expect((await lockHolder(refreshLockName(kinds)))?.owner).toBe('run-new');
    await releaseRefresh('run-new', kinds);
    expect(await lockHolder(refreshLockName(kinds))).toBeUndefined();
  });

  it("gives a queued run the run ahead's lease to wait in, and its worker waits only while it keeps time for the run", async () => {
    const kinds = ['fleet'] as const;
    const recordedAgo = async (id: string, ms: number, options: Parameters<typeof createRefresh>[2]) => {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - ms });
      try {
        await createRefresh(id, kinds, options);
      } finally {
        vi.useRealTimers();
      }
    };
    // The run ahead holds the claim and runs; the queued run was recorded more than a lease ago (still within two).
    expect(await claimRefresh('run-ahead', kinds, { health: 1, risk: 1 })).toBeUndefined();
    await createRefresh('run-ahead', kinds, { rules: { health: 1, risk: 1 } });
    expect(await startRefreshRun('run-ahead', 'token-ahead', REFRESH_LEASE_MS)).toBe(true);
    await recordedAgo('run-queued', REFRESH_LEASE_MS + 1_000, { rules: { health: 2, risk: 1 }, after: 'run-ahead' });
    expect((await currentRefresh('run-queued'))?.status).toBe('running');

    // Its worker, with a second more than it keeps for the run: waits that second, then hands the wait on, the run untouched.
    expect(await takeUpRefresh('run-queued', kinds, RUN_TIME_KEPT_MS + 1_000)).toBe('waiting');
    expect(await getRefresh('run-queued')).toMatchObject({ status: 'running' });
    expect((await getRefresh('run-queued'))?.worker_started_at).toBeUndefined();
    expect((await lockHolder(refreshLockName(kinds)))?.owner).toBe('run-ahead');

    // The run ahead ends and hands the claim over: the next invocation takes the queued run up at once.
    await finishRefresh('run-ahead', { status: 'done', figures: FIGURES });
    await releaseRefresh('run-ahead', kinds);
    expect(await takeUpRefresh('run-queued', kinds)).toBe('started');
    // Taken up, it has one lease from then, like any run: past it, it has failed.
    const taken = (await getRefresh('run-queued'))!;
    expect(taken.worker_started_at).toBeDefined();
    expect((await settleRefresh(taken)).status).toBe('running');
    expect((await settleRefresh(taken, Date.parse(taken.worker_started_at!) + REFRESH_LEASE_MS + 1_000)).status).toBe('failed');
    await releaseRefresh('run-queued', kinds);

    // Two leases after its recording, a queued run no worker took up has failed for good.
    await recordedAgo('run-forgotten', QUEUED_LEASE_MS + 1_000, { after: 'run-queued' });
    expect((await currentRefresh('run-forgotten'))?.status).toBe('failed');
    expect(await takeUpRefresh('run-forgotten', kinds)).toBe('not-started');
    // A wait's invocations stay under the 16 after which Lambda ends a chain passing one event on.
    expect(WAIT_INVOCATIONS).toBeLessThan(16);
  });
});
