import * as z from '../zod.js';
import { ADMIN_UP } from '../auth/roles.js';
import { defineGroup } from '../http/route.js';

// The metrics puller seen from the console (issue 20 §5): where it reads, how far
// each metric has come, and what went wrong lately. Admins only: the answer names
// the query endpoint and the errors it returned.

const Iso = z.iso.datetime();

export const PullError = z.lazy(() =>
  z.object({
    at: Iso,
    /** The metric whose pull failed; null for the inventory or the run as a whole. */
    metric_key: z.nullable(z.string()),
    message: z.string(),
  }),
);

export const MetricPullStatus = z.lazy(() =>
  z.object({
    metric_key: z.string(),
    query: z.string(),
    /** The last step stored: every step up to it has been pulled. Null until the first successful pull. */
    watermark: z.nullable(Iso),
    /** When a pull of this metric last succeeded. */
    last_success_at: z.nullable(Iso),
    /** Seconds from the watermark to now: how far behind this metric is. Null before its first pull. */
    lag_seconds: z.nullable(z.int()),
    /** Points of the last run that ingest stored, and that it refused (unknown cluster, not finite, …). */
    accepted_last: z.count(),
    refused_last: z.count(),
    /** The most frequent reason of those refusals (e.g. an unknown cluster), null when none. */
    refusal_last: z.nullable(z.string()),
    /** The first warning or info Prometheus answered the last run's queries with (e.g. "PromQL info: metric might not be a counter"), null when none. */
    warning_last: z.nullable(z.string()),
    /** The last failure, kept until a later pull succeeds. */
    last_error: z.nullable(PullError),
  }),
);

export const PullRun = z.lazy(() =>
  z.object({
    started_at: Iso,
    finished_at: Iso,
    /** ok: every metric pulled up to now; partial: some failed, or the run's time ran out before its last window (the next run goes on); failed: none pulled; disabled: the source is switched off. */
    outcome: z.enum(['ok', 'partial', 'failed', 'disabled']),
    accepted: z.count(),
    refused: z.count(),
    duration_ms: z.int(),
  }),
);

export const MetricSourcesStatus = z.lazy(() =>
  z.object({
    enabled: z.boolean(),
    /** The metric-sources version in force (0: the shipped default). */
    rules_version: z.int(),
    source: z.object({
      url: z.string(),
      auth: z.enum(['none', 'bearer', 'basic', 'sigv4']),
      step_seconds: z.int(),
      settle_seconds: z.int(),
      backfill_days: z.int(),
      cluster_label: z.string(),
      cluster_match: z.enum(['id', 'name']),
      /** Minutes between scheduled pulls. */
      every_minutes: z.int(),
    }),
    last_run: z.nullable(PullRun),
    /** The end of the last run in which every metric was pulled. */
    last_success_at: z.nullable(Iso),
    metrics: z.array(MetricPullStatus),
    inventory: z.object({
      enabled: z.boolean(),
      last_success_at: z.nullable(Iso),
      upserted_last: z.count(),
      refused_last: z.count(),
      last_error: z.nullable(PullError),
    }),
    /** The latest errors, newest first (at most 20). */
    errors: z.array(PullError),
  }),
);
export type MetricSourcesStatus = z.infer<typeof MetricSourcesStatus>;

/**
 * `requested_at`: the service's time when the pull was asked for; the run it starts has a `started_at` at or after it.
 * 202 `started`, or 200 `already_running`: a run held the puller's lock, so none was started (it would have found the
 * lock held and recorded nothing). One schema for both, as the patrol trigger's, so a client's type has both.
 */
export const PullAnswer = z.lazy(() =>
  z.discriminatedUnion('status', [
    z.object({ status: z.literal('started'), message: z.string(), requested_at: z.iso.datetime() }),
    z.object({ status: z.literal('already_running'), message: z.string(), requested_at: z.iso.datetime() }),
  ]),
);
export type PullAnswer = z.infer<typeof PullAnswer>;

export const metricSourcesGroup = defineGroup({
  name: 'metric-sources',
  tables: { users: 'read', 'metric-pulls': 'read', rules: 'read', locks: 'readwrite' },
  leases: ['metrics-puller'],
  grants: ['invoke:metrics-puller'],
  routes: {
    status: {
      method: 'GET',
      path: '/api/metric-sources/status',
      summary: 'The metrics puller: its source, last pull, lag per metric and last errors',
      auth: 'user',
      roles: ADMIN_UP,
      response: MetricSourcesStatus,
    },
    pull: {
      method: 'POST',
      path: '/api/metric-sources/pull',
      summary: 'Start a pull now (it runs in the background; follow it on the status route)',
      auth: 'user',
      roles: ADMIN_UP,
      response: PullAnswer,
      accepted: PullAnswer,
    },
  },
});
