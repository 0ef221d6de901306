// metrics-puller: every 5 minutes (and on POST /api/metric-sources/pull), pulls
// the fleet's metrics from the Prometheus query API the metric-sources rule set
// names into the daily rollups (shared/metric-pull/). A run in which every part failed
// (the server down, a rotated credential) ends by throwing, so the worker's failure queue
// and Errors alarm see it; a stale-metrics series in the scrape was the only sign before.
import type { Context } from 'aws-lambda';
import { createLogger, workerHandler } from '../shared/log.js';
import { pullMetrics } from '../shared/metric-pull/pull.js';
import * as z from '../shared/zod.js';

const log = createLogger('metrics-puller');

/** The schedule sends none of it; Pull now sends the run it took the lock for (shared/metric-pull/status.ts). */
const PullEvent = z.looseObject({ run_id: z.optional(z.uuid()) });

/** Every metric (and the inventory) failed this run: the status and the log say why. */
export class MetricsPullFailed extends Error {
  override name = 'MetricsPullFailed';
}

export const handler = workerHandler('metrics-puller', async (event, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
  const parsed = PullEvent.safeParse(event ?? {});
  if (!parsed.success) {
    log.error('refused an invalid event', { issues: parsed.error.issues.slice(0, 3).map((i) => i.message) });
    return { status: 'refused', reason: parsed.error.issues[0]?.message ?? 'invalid event' };
  }
  const { outcome, accepted, refused, metrics, inventory } = await pullMetrics({
    // Within the Lambda's timeout: a long backfill stops between windows, and the next run goes on.
    remainingMs: context && (() => context.getRemainingTimeInMillis()),
    ...(parsed.data.run_id ? { runId: parsed.data.run_id } : {}),
  });
  const failed = metrics.filter((m) => m.error).map((m) => m.metric_key);
  if (outcome === 'failed')
    throw new MetricsPullFailed(`every part of the metric pull failed (${failed.join(', ') || 'inventory'}); GET /api/metric-sources/status says why`);
  return { outcome, accepted, refused, failed, inventory };
});
