// ingest route group: fleet data in (DESIGN §9). Reached through API Gateway,
// or invoked directly with the AWS SDK: { kind: 'clusters' | 'metrics' |
// 'alerts' | 'logs', body: <the same body as the HTTP route> }.
import type { Context } from 'aws-lambda';
import { ingestAlerts, ingestClusters, ingestLogs, ingestMetrics } from '../shared/fleet/ingest.js';
import type { IngestResult } from '../shared/fleet/records.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import type { Event } from '../shared/http/middleware.js';
import { IngestInvocation, ingestGroup } from '../shared/routes/ingest.js';

const http = createGroupHandler(ingestGroup, {
  clusters: async (req) => ingestClusters(req.body.clusters),
  metrics: async (req) => ingestMetrics(req.body.samples),
  alerts: async (req) => ingestAlerts(req.body.alerts),
  logs: async (req) => ingestLogs(req.body.events),
});

export async function ingestDirect(invocation: IngestInvocation): Promise<IngestResult> {
  switch (invocation.kind) {
    case 'clusters':
      return ingestClusters(invocation.body.clusters);
    case 'metrics':
      return ingestMetrics(invocation.body.samples);
    case 'alerts':
      return ingestAlerts(invocation.body.alerts);
    case 'logs':
      return ingestLogs(invocation.body.events);
  }
}

export const handler = async (event: unknown, context: Context) => {
  if (event && typeof event === 'object' && 'requestContext' in event) return http(event as Event, context);
  const parsed = IngestInvocation.safeParse(event);
  // A direct caller gets the reason as the invocation's error.
  if (!parsed.success) throw new Error(`invalid ingest invocation: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return ingestDirect(parsed.data);
};
