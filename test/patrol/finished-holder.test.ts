// A patrol worker that died after completing its report but before letting go of the lock (killed between the
// two writes, or a release that failed, which run.ts leaves to the lease) leaves the lock held by a finished
// report. No scan runs under it, so the next scan, triggered or scheduled, takes it over at once instead of
// answering `already_running` with a report that is not running until the lease ends.
import { beforeAll, describe, expect, it } from 'vitest';
import { claimReport, createReport, finishReport, getReport } from '../../shared/db/patrol.js';
import { acquireLock, lockHolder, releaseLock } from '../../shared/db/locks.js';
import { leaseMs, PATROL_LOCK, takeLock } from '../../shared/patrol/lock.js';
import { runPatrolScan } from '../../shared/patrol/run.js';
import { useTestTables } from '../support/dynamo.js';
import { SCHEDULE_TRIGGER } from '../../shared/patrol/schedule.js';

beforeAll(async () => {
  await useTestTables();
});

/** The worker's writes up to its death: the lock, the report, its claim, the report finished; no release. */
async function scanDiedBeforeRelease(reportId: string, status: 'completed' | 'failed'): Promise<void> {
  expect(await takeLock(reportId)).toBe(true);
  await createReport({ report_id: reportId, report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER });
  await claimReport(reportId, `worker-of-${reportId}`);
  await finishReport(reportId, status === 'completed' ? { status, flagged_count: 0, fleet_narrative: 'done' } : { status, error: 'the language model failed' });
  expect((await lockHolder(PATROL_LOCK))?.owner).toBe(reportId);
}

describe('the patrol lock held by a finished report', () => {
  it('is taken over by the next scan, which runs', async () => {
    await scanDiedBeforeRelease('finished-unreleased', 'completed');
    const next = await runPatrolScan({ report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER });
    expect(next.status).toBe('completed');
    expect(next.report_id).not.toBe('finished-unreleased');
    expect((await getReport('finished-unreleased'))?.status).toBe('completed');
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
  });

  it('is taken over from a failed report too, by a trigger taking the lock', async () => {
    await scanDiedBeforeRelease('failed-unreleased', 'failed');
    expect(await takeLock('triggered-next')).toBe(true);
    expect((await lockHolder(PATROL_LOCK))?.owner).toBe('triggered-next');
    await releaseLock(PATROL_LOCK, 'triggered-next');
  });

  it('is not taken from a running scan, nor from a lock whose report is not recorded yet', async () => {
    expect(await takeLock('still-running')).toBe(true);
    await createReport({ report_id: 'still-running', report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER });
    expect(await takeLock('too-early')).toBe(false);
    await releaseLock(PATROL_LOCK, 'still-running');
    expect(await takeLock('being-recorded')).toBe(true);
    expect(await takeLock('too-early')).toBe(false);
    expect((await lockHolder(PATROL_LOCK))?.owner).toBe('being-recorded');
    await releaseLock(PATROL_LOCK, 'being-recorded');
  });

  it('is taken over from a trigger that died before recording its report, once the lease is 30 s old', async () => {
    // Its lease began 31 s ago, and no report was ever written (a trigger killed between the two writes).
    expect((await acquireLock(PATROL_LOCK, 'never-recorded', leaseMs(), Date.now() - 31_000)).acquired).toBe(true);
    const next = await runPatrolScan({ report_type: 'on_demand', triggered_by: 'patrol-admin' });
    expect(next.status).toBe('completed');
    expect(await getReport('never-recorded')).toBeUndefined();
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
  });
});
