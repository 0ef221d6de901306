// clusters route group (issue 18 §5): one cluster's inventory record and its daily
// metric rollups, for the console's cluster page. Beyond the contract, like the
// ingest routes that feed them.
import * as z from '../zod.js';
import { ANY_ROLE } from '../auth/roles.js';
import { clusterIdOf, METRIC_KEYS, Tier } from '../fleet/records.js';
import { defineGroup } from '../http/route.js';
import { DaysInRange } from './days.js';

/** Rollups are kept 90 days (METRICS_RETENTION_DAYS), so a longer window would only add empty days. */
export const CLUSTER_METRIC_DAYS_MAX = 90;

/** In any case: a cluster id is a UUID, stored in lower case (fleet/records.ts clusterIdOf). */
export const ClusterIdParams = z.object({ cluster_id: z.string().check(z.minLength(1), z.maxLength(128), z.overwrite(clusterIdOf)) });

export const ClusterMetricsQuery = z.lazy(() =>
  z.object({
    // An empty `?days=` takes the default instead of coercing to 0.
    days: DaysInRange(14, CLUSTER_METRIC_DAYS_MAX),
  }),
);

const Int = z.int();
const Count = z.count();

export const ClusterInventory = z.lazy(() =>
  z.object({
    cluster_id: z.string(),
    cluster_name: z.string(),
    customer_name: z.string(),
    account_id: z.string(),
    account_name: z.string(),
    email: z.string(),
    customer_tier: Tier,
    cluster_type: z.string(),
    region: z.string(),
    engine_version: z.string(),
    resource_state: z.string(),
    node_count: Count,
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

export const ClusterResponse = z.lazy(() => z.object({ cluster: ClusterInventory }));

/** One UTC day of one metric, as the rollup holds it (avg = sum / count). */
export const MetricDay = z.lazy(() =>
  z.object({
    day: z.iso.date(),
    avg: z.number(),
    min: z.number(),
    max: z.number(),
    /** The value of the day's latest sample, and when it was taken. */
    last: z.number(),
    last_at: z.string(),
    count: Int.check(z.gte(1)),
  }),
);

export const ClusterMetricsResponse = z.lazy(() =>
  z.object({
    cluster_id: z.string(),
    days: Int,
    /** The window's UTC days, oldest first, ending today. */
    dates: z.array(z.iso.date()),
    /** Each metric key with at least one sample in the window (in the rules' key order), its days oldest first; days without samples are absent. */
    metrics: z.array(z.object({ metric_key: z.enum(METRIC_KEYS), points: z.array(MetricDay) })),
  }),
);

export const clustersGroup = defineGroup({
  name: 'clusters',
  tables: { users: 'read', clusters: 'read', metrics: 'read' },
  routes: {
    get: {
      method: 'GET',
      path: '/api/clusters/{cluster_id}',
      summary: "One cluster's inventory record",
      auth: 'user',
      roles: ANY_ROLE,
      params: ClusterIdParams,
      response: ClusterResponse,
    },
    metrics: {
      method: 'GET',
      path: '/api/clusters/{cluster_id}/metrics',
      summary: "One cluster's daily metric rollups over the last N days (1..90, default 14)",
      auth: 'user',
      roles: ANY_ROLE,
      params: ClusterIdParams,
      query: ClusterMetricsQuery,
      response: ClusterMetricsResponse,
    },
  },
});
