// Cluster inventory repository. All clusters share one partition: the fleet
// is read whole by every computation (one paginated Query), and inventory
// changes rarely.
import { ClusterInput, Tier } from '../fleet/records.js';
import { batchGet, getItem, mapLimit, queryAll, setFields, updateItem } from './client.js';
import { itemReader, number, oneOf, string } from './items.js';

const FLEET_PK = 'CLUSTERS';
const clusterKey = (clusterId: string) => ({ pk: FLEET_PK, sk: `CLUSTER#${clusterId}` });

export interface ClusterRecord extends ClusterInput {
  created_at: string;
  updated_at: string;
}

const readCluster = itemReader<ClusterRecord>({
  cluster_id: string,
  cluster_name: string,
  customer_name: string,
  account_id: string,
  account_name: string,
  email: string,
  customer_tier: oneOf(Tier.options),
  cluster_type: string,
  region: string,
  engine_version: string,
  resource_state: string,
  node_count: number,
  created_at: string,
  updated_at: string,
});

/** Inserts or replaces each cluster's inventory, keeping when it was first seen. */
export async function upsertClusters(clusters: ClusterInput[], now = new Date()): Promise<void> {
  const at = now.toISOString();
  await mapLimit(clusters, 16, async (cluster) => {
    // Only inventory fields: a full record's timestamps are the repository's to set.
    const set = setFields(Object.fromEntries(ClusterInput.keyof().options.map((k) => [k, cluster[k]])));
    await updateItem('clusters', clusterKey(cluster.cluster_id), {
      UpdateExpression: `${set.set}, updated_at = :now, created_at = if_not_exists(created_at, :now)`,
      ExpressionAttributeNames: set.names,
      ExpressionAttributeValues: { ...set.values, ':now': at },
      ReturnValues: 'NONE',
    });
  });
}

export async function getCluster(clusterId: string): Promise<ClusterRecord | undefined> {
  const item = await getItem('clusters', clusterKey(clusterId));
  return item ? readCluster(item) : undefined;
}

export async function listClusters(): Promise<ClusterRecord[]> {
  const items = await queryAll('clusters', {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
    ExpressionAttributeValues: { ':pk': FLEET_PK, ':c': 'CLUSTER#' },
  });
  return items.map(readCluster);
}

/** Which of these cluster ids are known (for refusing data about unknown clusters). */
export async function knownClusterIds(clusterIds: Iterable<string>): Promise<Set<string>> {
  const unique = [...new Set(clusterIds)];
  const items = await batchGet('clusters', unique.map(clusterKey));
  return new Set(items.map((i) => String(i.cluster_id)));
}

/** The inventory of these clusters (those that exist). */
export async function getClusters(clusterIds: Iterable<string>): Promise<ClusterRecord[]> {
  return (await batchGet('clusters', [...new Set(clusterIds)].map(clusterKey))).map(readCluster);
}

/** True when no cluster is stored yet (the local runtime then loads the demo fleet). */
export async function fleetIsEmpty(): Promise<boolean> {
  return (await queryAll('clusters', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': FLEET_PK }, Limit: 1 }, 1)).length === 0;
}
