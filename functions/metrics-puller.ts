// metrics-puller: every 5 minutes (and on POST /api/metric-sources/pull), pulls
// the fleet's metrics from the Prometheus query API the metric-sources rule set
// names into the daily rollups (shared/metric-pull/).
import type { Context } from 'aws-lambda';
import { workerHandler } from '../shared/log.js';
import { pullMetrics } from '../shared/metric-pull/pull.js';

export const handler = workerHandler('metrics-puller', async (_event, context?: Pick<Context, 'getRemainingTimeInMillis'>) => {
  // Within the Lambda's timeout: a long backfill stops between windows, and the next run goes on.
  const { outcome, accepted, refused, metrics, inventory } = await pullMetrics({ remainingMs: context && (() => context.getRemainingTimeInMillis()) });
  return { outcome, accepted, refused, failed: metrics.filter((m) => m.error).map((m) => m.metric_key), inventory };
});
