import * as z from '../zod.js';
import { ADMIN_UP } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';

// Envelopes only: each record is validated on its own so a batch stores the
// good records and names the bad ones (DESIGN §9).
/** Records one ingest request takes, by kind (`npm run ingest` splits a file by these). */
export const INGEST_MAX_RECORDS = { clusters: 1000, metrics: 5000, logs: 5000, alerts: 5000 } as const;
export const IngestClustersBody = z.lazy(() => z.object({ clusters: z.array(z.unknown()).check(z.minLength(1), z.maxLength(INGEST_MAX_RECORDS.clusters)) }));
export const IngestMetricsBody = z.lazy(() => z.object({ samples: z.array(z.unknown()).check(z.minLength(1), z.maxLength(INGEST_MAX_RECORDS.metrics)) }));
/**
 * The Alertmanager webhook envelope (version 4); its other fields (groupKey, receiver, …) are accepted and only
 * logged: receiver and groupKey name the notification in its warn lines, and truncatedAlerts (alerts Alertmanager
 * left out under its `max_alerts`) is logged.
 */
export const IngestAlertsBody = z.lazy(() =>
  z.looseObject({
    version: z.literal('4'),
    alerts: z.array(z.unknown()).check(z.maxLength(INGEST_MAX_RECORDS.alerts)),
    truncatedAlerts: z.optional(z.int().check(z.gte(0), z.lte(1e9))),
  }),
);
export const IngestLogsBody = z.lazy(() => z.object({ events: z.array(z.unknown()).check(z.minLength(1), z.maxLength(INGEST_MAX_RECORDS.logs)) }));

/** What an ingest answers: records stored, and each refused one with its index and reason (never all-or-nothing). */
export const IngestResponse = z.lazy(() =>
  z.object({
    accepted: z.int().check(z.gte(0)),
    rejected: z.array(z.object({ index: z.int().check(z.gte(0)), reason: z.string() })),
  }),
);
export type IngestResult = z.infer<typeof IngestResponse>;
export const AlertIngestResponse = z.lazy(() =>
  z.extend(z.unlazy(IngestResponse), {
    /** Redeliveries of notifications already recorded (Alertmanager resends every group_interval). */
    duplicates: z.int().check(z.gte(0)),
    /** Issues the changed alerts created or changed (rules/issue-rules.yaml). */
    issues: z.object({ created: z.int().check(z.gte(0)), updated: z.int().check(z.gte(0)) }),
  }),
);
export type AlertIngestResult = z.infer<typeof AlertIngestResponse>;

/** A direct Lambda invocation (AWS SDK / CLI): the same bodies, named by kind. */
export const IngestInvocation = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('clusters'), body: IngestClustersBody }),
    z.strictObject({ kind: z.literal('metrics'), body: IngestMetricsBody }),
    z.strictObject({ kind: z.literal('alerts'), body: IngestAlertsBody }),
    z.strictObject({ kind: z.literal('logs'), body: IngestLogsBody }),
  ]),
);
export type IngestInvocation = z.infer<typeof IngestInvocation>;

/**
 * Ingest bodies may be up to 6 MB: one Alertmanager notification carries a whole alert
 * group, and a 413 makes Alertmanager drop it (it does not retry 4xx). Other routes keep
 * 1 MB. What binds is Lambda's 6 MB for the whole event, the body escaped inside it
 * (shared/http/lambda-payload.ts): a body of 6 MB with many quotes is refused there too.
 */
export const INGEST_MAX_BODY_BYTES = 6 * 1000 * 1000;
const ingest = { auth: 'ingest', roles: ADMIN_UP, maxBodyBytes: INGEST_MAX_BODY_BYTES } as const;

export const ingestGroup = defineGroup({
  name: 'ingest',
  config: ['ingest'],
  tables: { users: 'read', clusters: 'readwrite', metrics: 'readwrite', alerts: 'readwrite', logs: 'readwrite', issues: 'readwrite', rules: 'read' },
  routes: {
    clusters: {
      method: 'POST',
      path: '/api/ingest/clusters',
      summary: 'Upsert cluster inventory',
      ...ingest,
      body: IngestClustersBody,
      response: IngestResponse,
    },
    metrics: {
      method: 'POST',
      path: '/api/ingest/metrics',
      summary: 'Metric samples (rolled up per day)',
      ...ingest,
      body: IngestMetricsBody,
      response: IngestResponse,
    },
    alerts: {
      method: 'POST',
      path: '/api/ingest/alerts',
      summary: 'Alertmanager webhook (version 4)',
      ...ingest,
      body: IngestAlertsBody,
      response: AlertIngestResponse,
    },
    logs: { method: 'POST', path: '/api/ingest/logs', summary: 'Cluster log events', ...ingest, body: IngestLogsBody, response: IngestResponse },
  },
});
