// A stored cluster of a test's own: a fresh id per call, so a test sees none of the other
// tests' alerts and issues in the shared tables. Its fields are the scoring fixtures'.
import { randomUUID } from 'node:crypto';
import { upsertClusters } from '../../shared/db/clusters.js';
import type { ClusterInput } from '../../shared/fleet/records.js';
import { clusterRecord } from '../scoring/fixtures.js';

/** Stores a new cluster (`over` replaces fixture fields) and answers its id. */
export async function storedCluster(over: Partial<ClusterInput> = {}): Promise<string> {
  const id = randomUUID();
  const { created_at: _created, updated_at: _updated, ...cluster } = clusterRecord(`c-${id.slice(0, 8)}`, { cluster_id: id, ...over });
  await upsertClusters([cluster]);
  return id;
}

/**
 * An Alertmanager alert of the cluster as a webhook carries it: firing since `startedAgo` minutes
 * before `now`, or resolved `endedAgo` minutes before it.
 */
export function alertNotice(now: Date, clusterId: string, alertname: string, fingerprint: string, startedAgo: number, endedAgo: number | null = null) {
  const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();
  return {
    status: endedAgo === null ? 'firing' : 'resolved',
    labels: { alertname, cluster_id: clusterId },
    startsAt: ago(startedAgo),
    ...(endedAgo === null ? {} : { endsAt: ago(endedAgo) }),
    fingerprint,
  };
}
