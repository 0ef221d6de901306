// The patrol's lease lock (shared/db/locks.ts), owned by the report being
// produced: whoever finds the lease expired knows which report the crashed
// scan left running, and marks it failed. Shared by the trigger (API) and the worker.
import { ConditionFailed } from '../db/client.js';
import { acquireLock } from '../db/locks.js';
import { finishReport } from '../db/patrol.js';

export const PATROL_LOCK = 'patrol';

/** The lease a scan holds; heartbeats renew it every third of it. */
export const leaseMs = () => Number(process.env.PATROL_LEASE_SECONDS ?? 120) * 1000;

/** Takes the lock for a new report; when it replaces a crashed holder, that holder's report is marked failed. */
export async function takeLock(reportId: string): Promise<boolean> {
  const { acquired, replaced } = await acquireLock(PATROL_LOCK, reportId, leaseMs());
  if (replaced) {
    await finishReport(replaced.owner, { status: 'failed', error: 'the scan stopped without finishing (its worker did not renew the lock)' }).catch((error: unknown) => {
      if (!(error instanceof ConditionFailed)) throw error; // already finished, or no such report
    });
  }
  return acquired;
}
