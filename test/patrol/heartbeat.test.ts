// A patrol scan's lease renewals (shared/patrol/run.ts) on DynamoDB Local, through the fault
// proxy: a renewal that fails for another reason than the lock being someone else's (after the
// client's retries) does not throw the scan away; a lock that is no longer ours does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetSettings } from '../../shared/config/env.js';
import { getReport } from '../../shared/db/patrol.js';
import { acquireLock, lockHolder } from '../../shared/db/locks.js';
import { PATROL_LOCK } from '../../shared/patrol/lock.js';
import { runPatrolScan } from '../../shared/patrol/run.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  // A 3 s lease: renewed every second, so a renewal comes while the scan is held below.
  process.env.PATROL_LEASE_SECONDS = '3';
  resetSettings();
});
afterAll(() => {
  delete process.env.PATROL_LEASE_SECONDS;
  resetSettings();
});

const failedRenewal = { type: 'InternalServerError', message: 'the renewal failed for another reason', status: 400 };

/**
 * While the scan's read of the open issues is held until `release`, answers each lease renewal
 * made on a beat (every lock update but the first: the scan's own check before it starts) with
 * `renewal`; `renewed` counts them.
 */
function watchScan(release: Promise<unknown>, renewal: () => typeof failedRenewal | undefined) {
  const seen = { renewals: 0 };
  let lockUpdates = 0;
  const stop = proxy.watch(({ operation, input }) => {
    const table = String(input.TableName);
    if (operation === 'UpdateItem' && table.endsWith('locks') && ++lockUpdates > 1) {
      seen.renewals++;
      return renewal();
    }
    if (operation === 'Query' && table.endsWith('issues')) return { hold: release };
    return undefined;
  });
  return { seen, stop };
}

const until = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('patrol lease renewals', () => {
  it('a renewal that fails for another reason is retried by the next beat: the scan completes', async () => {
    let release!: () => void;
    // The first renewal fails; the scan goes on once it has been answered, and the next ones succeed.
    const { seen, stop } = watchScan(new Promise<void>((resolve) => (release = resolve)), () => (seen.renewals === 1 ? failedRenewal : undefined));
    try {
      const result = runPatrolScan({ report_type: 'on_demand', triggered_by: 'tester' });
      await until(() => seen.renewals >= 1);
      await new Promise((resolve) => setTimeout(resolve, 50)); // the failure reaches the beat's handler
      release();
      const { status, report_id } = await result;
      expect(status).toBe('completed');
      expect((await getReport(report_id))?.status).toBe('completed');
    } finally {
      stop();
    }
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
  });

  it('a lock another runner took once the lease ran out fails the scan: it is not published', async () => {
    let release!: () => void;
    let failing = true;
    // Renewals fail while the scan is held, so the 3 s lease runs out and another runner takes the lock.
    const { stop } = watchScan(new Promise<void>((resolve) => (release = resolve)), () => (failing ? failedRenewal : undefined));
    try {
      const result = runPatrolScan({ report_type: 'on_demand', triggered_by: 'tester' });
      let taken = false;
      while (!taken) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        taken = (await acquireLock(PATROL_LOCK, 'other-runner', 60_000)).acquired;
      }
      failing = false;
      release();
      const { status, report_id } = await result;
      expect(status).toBe('failed');
      expect((await getReport(report_id))?.error).toMatch(/outlived its lock/);
      expect((await lockHolder(PATROL_LOCK))?.owner).toBe('other-runner');
    } finally {
      stop();
    }
  });
});
