// Reading a running report whose scan holds no lock (shared/patrol/lock.ts settled) on DynamoDB
// Local: marked failed when it stopped, but answered as stored when it finished after the read.
import { beforeAll, describe, expect, it } from 'vitest';
import { createReport, finishReport, getReport } from '../../shared/db/patrol.js';
import { ConditionFailed } from '../../shared/db/client.js';
import { acquireLock, endLapsedLease, heartbeatLock, lockHolder, releaseLock } from '../../shared/db/locks.js';
import { PATROL_LOCK, settled } from '../../shared/patrol/lock.js';
import { useTestTables } from '../support/dynamo.js';
import { SCHEDULE_TRIGGER } from '../../shared/patrol/schedule.js';

beforeAll(async () => {
  await useTestTables();
});

const aMinuteAgo = () => new Date(Date.now() - 60_000);

describe('settled', () => {
  it('marks a report whose worker stopped as failed', async () => {
    const read = await createReport({ report_id: 'stopped-scan', report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER }, aMinuteAgo());
    expect(await settled(read)).toMatchObject({ status: 'failed', error: expect.stringMatching(/stopped without finishing/) });
    expect((await getReport('stopped-scan'))!.status).toBe('failed');
  });

  it('ends the lapsed lease of the report it fails, so a scan only slow to renew is refused at its next heartbeat; a live lease is left', async () => {
    const leaseMs = 120_000;
    const taken = Date.now() - leaseMs - 1_000; // its heartbeats failed for longer than a lease
    const read = await createReport({ report_id: 'slow-scan', report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER }, new Date(taken - 60_000));
    expect((await acquireLock(PATROL_LOCK, 'slow-scan', leaseMs, taken)).acquired).toBe(true);
    // As read before the lease lapsed: nothing to do.
    expect(await settled(read, taken + 60_000)).toEqual(read);
    expect(await settled(read)).toMatchObject({ status: 'failed' });
    await expect(heartbeatLock(PATROL_LOCK, 'slow-scan', leaseMs)).rejects.toBeInstanceOf(ConditionFailed);
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
    // A lapsed lease renewed before it was ended: the lock stays its holder's.
    expect((await acquireLock(PATROL_LOCK, 'renewed-scan', leaseMs, taken)).acquired).toBe(true);
    await heartbeatLock(PATROL_LOCK, 'renewed-scan', leaseMs);
    expect(await endLapsedLease(PATROL_LOCK, 'renewed-scan', Date.now())).toBe(false);
    expect((await lockHolder(PATROL_LOCK))?.owner).toBe('renewed-scan');
    expect(await endLapsedLease(PATROL_LOCK, 'another-scan', Date.now())).toBe(true);
    await releaseLock(PATROL_LOCK, 'renewed-scan');
  });

  it('answers a report completed after it was read (the worker finished and let go of the lock) as completed', async () => {
    const read = await createReport({ report_id: 'late-finish', report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER }, aMinuteAgo());
    await finishReport('late-finish', { status: 'completed', flagged_count: 3, fleet_narrative: 'done' });
    expect(await settled(read)).toMatchObject({ status: 'completed', flagged_count: 3, fleet_narrative: 'done' });
    expect((await getReport('late-finish'))!.status).toBe('completed');
  });
});
