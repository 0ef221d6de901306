// patrol-worker: one patrol scan under the patrol lock. Invoked asynchronously
// by the API trigger (with the report it holds the lock for), by the
// EventBridge schedule ({report_type: "scheduled"}) and by a CLI through the
// AWS SDK ({report_type: "on_demand", triggered_by}).
import * as z from '../shared/zod.js';
import { createLogger, workerHandler } from '../shared/log.js';
import { runPatrolScan } from '../shared/patrol/run.js';

const log = createLogger('patrol-worker');

const PatrolEvent = z.looseObject({
  report_type: z._default(z.enum(['scheduled', 'on_demand']), 'scheduled'),
  triggered_by: z._default(z.string().check(z.trim(), z.minLength(1), z.maxLength(128)), 'schedule'),
  report_id: z.optional(z.uuid()),
});

const scan = async (event: unknown) => {
  const parsed = PatrolEvent.safeParse(event ?? {});
  if (!parsed.success) {
    log.error('refused an invalid event', { issues: parsed.error.issues.slice(0, 3).map((i) => i.message) });
    return { status: 'refused', reason: parsed.error.issues[0]?.message };
  }
  const result = await runPatrolScan(parsed.data);
  log.info('patrol scan', result);
  return result;
};

// Its log lines carry the run's ids: the triggering request's correlation id, else the report id it scans for.
export const handler = workerHandler('patrol-worker', scan, (event) => event.report_id);
