// patrol-worker: one patrol scan under the patrol lock. Invoked asynchronously
// by the API trigger (with the report it holds the lock for), by the
// EventBridge schedule ({report_type: "scheduled"}) and by a CLI through the
// AWS SDK ({report_type: "on_demand", triggered_by}).
import * as z from '../shared/zod.js';
import { USERNAME_MAX } from '../shared/auth/username.js';
import { createLogger, workerHandler } from '../shared/log.js';
import { abandonUnclaimedReport, runPatrolScan } from '../shared/patrol/run.js';
import { SCHEDULE_TRIGGER } from '../shared/patrol/schedule.js';

const log = createLogger('patrol-worker');

const PatrolEvent = z.looseObject({
  report_type: z._default(z.enum(['scheduled', 'on_demand']), 'scheduled'),
  // The API trigger sends the caller's username (an invited user's is their email): any username is taken.
  triggered_by: z._default(z.string().check(z.trim(), z.minLength(1), z.maxLength(USERNAME_MAX)), SCHEDULE_TRIGGER),
  report_id: z.optional(z.uuid()),
});

/** A failed scan is recorded in its report, and then thrown: Lambda retries it once, then its queue and alarms have it. */
export class PatrolScanFailed extends Error {
  override name = 'PatrolScanFailed';
}

const scan = async (event: unknown) => {
  const parsed = PatrolEvent.safeParse(event ?? {});
  if (!parsed.success) {
    const reason = parsed.error.issues[0]?.message ?? 'invalid event';
    log.error('refused an invalid event', { issues: parsed.error.issues.slice(0, 3).map((i) => i.message) });
    // The trigger holds the lock for its report: fail that report and free the lock rather than leave both for a lease,
    // unless a worker has claimed it (a scan running for it, or finished).
    const reportId = z.uuid().safeParse((event as { report_id?: unknown } | null)?.report_id);
    if (reportId.success) await abandonUnclaimedReport(reportId.data, `the worker refused its event: ${reason}`);
    return { status: 'refused', reason };
  }
  const result = await runPatrolScan(parsed.data);
  log.info('patrol scan', result);
  if (result.status === 'failed') throw new PatrolScanFailed(`patrol scan ${result.report_id} failed (its report says why)`);
  return result;
};

// Its log lines carry the run's ids: the triggering request's correlation id, else the report id it scans for.
export const handler = workerHandler('patrol-worker', scan, (event) => event.report_id);
