// One cluster's detail for the console's cluster page: its inventory record and
// its daily metric rollups over a window, read through the repositories.
import type * as z from '../zod.js';
import { type ClusterRecord, getCluster } from '../db/clusters.js';
import { windowDays } from '../db/days.js';
import { readClusterRollups } from '../db/metrics.js';
import { NotFound } from '../http/errors.js';
import type { ClusterMetricsResponse } from '../routes/clusters.js';
import { METRIC_KEYS } from './records.js';
import { average } from './rollup.js';

export type ClusterMetrics = z.output<typeof ClusterMetricsResponse>;

/** The cluster's inventory record; 404 when the inventory does not hold it. */
export async function clusterInventory(clusterId: string): Promise<ClusterRecord> {
  const cluster = await getCluster(clusterId);
  if (!cluster) throw new NotFound(`No cluster ${clusterId} in the inventory.`);
  return cluster;
}

/** Per metric key, each UTC day of the last `days` (today included) that has samples: avg/min/max/last/count. */
export async function clusterMetrics(clusterId: string, days: number, now = new Date()): Promise<ClusterMetrics> {
  const dates = windowDays(days, now);
  const [, rollups] = await Promise.all([clusterInventory(clusterId), readClusterRollups(clusterId, dates)]);
  const metrics: ClusterMetrics['metrics'] = [];
  for (const metric_key of METRIC_KEYS) {
    const points = rollups.flatMap(({ day, metrics: m }) => {
      const r = m[metric_key];
      return r ? [{ day, avg: average(r), min: r.min, max: r.max, last: r.last, last_at: r.last_at, count: r.count }] : [];
    });
    if (points.length) metrics.push({ metric_key, points });
  }
  return { cluster_id: clusterId, days, dates, metrics };
}
