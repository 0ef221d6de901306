// A stored cluster of a test's own: a fresh id per call, so a test sees none of the other
// tests' alerts and issues in the shared tables. Its fields are the scoring fixtures'.
import { randomUUID } from 'node:crypto';
import type { AlertRecord } from '../../shared/db/alerts.js';
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

/**
 * A stored alert of the cluster as recordAlerts takes it (a warning named by its `alertname` label): started
 * `startedAgo` minutes before `now`, resolved `endedAgo` minutes before it, or firing.
 */
export function alertRecord(
  now: Date,
  clusterId: string,
  name: string,
  startedAgo: number,
  endedAgo: number | null,
  fingerprint: string,
): Omit<AlertRecord, 'received_at' | 'updated_at'> {
  const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();
  return {
    alert_id: fingerprint,
    cluster_id: clusterId,
    alert_name: name,
    severity: 'warning',
    status: endedAgo === null ? 'Firing' : 'Resolved',
    starts_at: ago(startedAgo),
    ends_at: endedAgo === null ? null : ago(endedAgo),
    fingerprint,
    labels: { alertname: name, cluster_id: clusterId },
    annotations: {},
    summary: name,
    detail: '',
    dashboard_url: '',
  };
}
