// ingest route group: fleet data in (DESIGN §9). Reached through API Gateway,
// or invoked directly with the AWS SDK: { kind: 'clusters' | 'metrics' |
// 'alerts' | 'logs', body: <the same body as the HTTP route> }.
import type { Context } from 'aws-lambda';
import { ingestClusters, ingestLogs, ingestMetrics, ingestNotification } from '../shared/fleet/ingest.js';
import { reasonOf, type IngestResult } from '../shared/fleet/records.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import type { Event } from '../shared/http/middleware.js';
import { createLogger, withInvocation } from '../shared/log.js';
import { IngestInvocation, ingestGroup } from '../shared/routes/ingest.js';
import { wellFormed } from '../shared/text.js';

const http = createGroupHandler(ingestGroup, {
  clusters: async (req) => ingestClusters(req.body.clusters),
  metrics: async (req) => ingestMetrics(req.body.samples),
  alerts: async (req) => ingestNotification(req.body),
  logs: async (req) => ingestLogs(req.body.events),
});

export async function ingestDirect(invocation: IngestInvocation): Promise<IngestResult> {
  switch (invocation.kind) {
    case 'clusters':
      return ingestClusters(invocation.body.clusters);
    case 'metrics':
      return ingestMetrics(invocation.body.samples);
    case 'alerts':
      return ingestNotification(invocation.body);
    case 'logs':
      return ingestLogs(invocation.body.events);
  }
}

export const handler = async (event: unknown, context: Context) => {
  if (event && typeof event === 'object' && 'requestContext' in event) return http(event as Event, context);
  // The runtime parsed the payload: its text is Unicode as an HTTP body's is (shared/http/middleware.ts jsonBody).
  const parsed = IngestInvocation.safeParse(wellFormed(event));
  // A direct caller gets the reason as the answer, not as the function's error: a refused input changes nothing, and
  // one client's typo must not fire the ingest-errors alarm (as the HTTP routes' 422 does not).
  if (!parsed.success) {
    const detail = reasonOf(parsed.error);
    // Logged too, since an asynchronous invocation's answer is read by nobody.
    createLogger('ingest').warn('invalid ingest invocation refused', { detail });
    return { error: 'invalid ingest invocation', detail };
  }
  // A direct invocation is one run of the ingest function: its lines carry the run's ids.
  return withInvocation({ service: 'ingest', context }, () => ingestDirect(parsed.data));
};
