// The patrol's lease lock (shared/db/locks.ts), owned by the report being
// produced: whoever finds the lease expired knows which report the crashed
// scan left running, and marks it failed. Shared by the trigger (API) and the worker.
import { patrolSettings } from '../config/patrol.js';
import { ConditionFailed } from '../db/client.js';
import { acquireLock, endLapsedLease, lockHolder, takeOverLock } from '../db/locks.js';
import { runSpend } from '../db/llm-usage.js';
import { finishReport, getReport } from '../db/patrol.js';
import type { PatrolReportSummary } from './schemas.js';

export const PATROL_LOCK = 'patrol';

/** The lease a scan holds; heartbeats renew it every third of it. */
export const leaseMs = () => patrolSettings().leaseMs;

const STOPPED = 'the scan stopped without finishing (its worker did not renew the lock)';
/** A new report's worker may take this long to start before its report counts as stopped. */
const START_GRACE_MS = 30_000;

/**
 * A `running` report whose scan no longer holds the lock (and had time to
 * start) stopped without finishing: it is marked failed as soon as anyone
 * reads it, rather than when the next scan happens to take the lock.
 */
export async function settled<R extends PatrolReportSummary>(report: R, now = Date.now()): Promise<R> {
  if (report.status !== 'running' || now - Date.parse(report.created_at) < START_GRACE_MS) return report;
  if ((await lockHolder(PATROL_LOCK, now))?.owner === report.report_id) return report;
  // Its lease lapsed: ended first, so a scan that was only slow to renew (throttled, say) is refused at its next
  // heartbeat and stops before its next model call, instead of spending on a report that can no longer be published.
  // Renewed meanwhile: it runs on.
  if (!(await endLapsedLease(PATROL_LOCK, report.report_id, now))) return report;
  const spend = await stoppedSpend(report.report_id, report.created_at);
  try {
    await finishReport(report.report_id, { status: 'failed', error: STOPPED, ...spend });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    // Finished meanwhile (the worker completed it and released the lock after our read): that is the answer.
    const fresh = await getReport(report.report_id);
    return fresh ? (Object.fromEntries(Object.keys(report).map((k) => [k, fresh[k as keyof PatrolReportSummary]])) as R) : report;
  }
  return { ...report, status: 'failed', error: STOPPED, ...spend };
}

/**
 * What a scan that stopped without finishing (its worker killed, timed out, or out of memory) spent: its model calls
 * as the ledger recorded them (each carries the report's id as its run), so its failed report shows the tokens and
 * cost charged, where it showed none. Nothing when the ledger holds no call of it (the rules scan, or none made).
 */
async function stoppedSpend(reportId: string, createdAt: string) {
  return (await runSpend(reportId, createdAt)) ?? {};
}

/**
 * Marks a report whose scan stopped without finishing failed with `reason` (and `also`), with what the ledger charged
 * for it while it ran; ConditionFailed when it is finished already, or no such report.
 */
export async function failStoppedReport(reportId: string, reason: string, also: { duration_seconds?: number } = {}): Promise<void> {
  const report = await getReport(reportId);
  const spend = report?.status === 'running' ? await stoppedSpend(reportId, report.created_at) : {};
  await finishReport(reportId, { status: 'failed', error: reason, ...also, ...spend });
}

/**
 * Takes the lock for a new report; when it replaces a crashed holder, that holder's report is marked failed. A holder
 * whose report is finished already, or never recorded, is no scan any more (its worker died between finishing the report and letting go,
 * or the release failed): its lock is taken over at once, where the trigger answered `already_running` naming that
 * finished report, and the schedule skipped its scan, until the lease ended.
 */
export async function takeLock(reportId: string): Promise<boolean> {
  const { acquired, replaced } = await acquireLock(PATROL_LOCK, reportId, leaseMs());
  if (replaced) {
    await failStoppedReport(replaced.owner, STOPPED).catch((error: unknown) => {
      if (!(error instanceof ConditionFailed)) throw error; // already finished, or no such report
    });
  }
  if (acquired) return true;
  const now = Date.now();
  const holder = await lockHolder(PATROL_LOCK, now);
  if (!holder) return false;
  const report = await getReport(holder.owner);
  // Running: a scan. No report yet: a trigger between taking the lock and recording its report, which it does at
  // once; still none a START_GRACE_MS after the lease began (no scan renews a lease without a report), the trigger
  // died between the two writes, and its lock would have answered `already_running` with a report that is a 404.
  if (report?.status === 'running') return false;
  if (!report && holder.expires_at - now > leaseMs() - START_GRACE_MS) return false;
  return takeOverLock(PATROL_LOCK, holder.owner, reportId, leaseMs());
}
