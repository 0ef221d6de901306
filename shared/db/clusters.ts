// Cluster inventory repository. All clusters share one partition: the fleet
// is read whole by every computation, and inventory changes rarely.
//   pk = CLUSTERS,       sk = CLUSTER#<cluster_id>  → one cluster's inventory (the truth)
//   pk = CLUSTERS-PACK,  sk = COUNTER | HEAD | PART#… → the inventory pack (packing.ts)
// The whole inventory is also kept as one pack: every record as JSON, brotli 1,
// a few hundred KB for 10,000 clusters instead of 10,000 items to page through
// (≈ 0.4 s of a refresh through DynamoDB Local). It is trusted exactly like the
// rollup packs (README "Packed rollups"): upsertClusters bumps the counter before
// its first write and after its last; a pack records the even value read before
// the items it was built from, and is used only while the counter still holds it.
// Only the refresh builds it; every reader uses it, and a container keeps the
// decoded inventory while the counter stands still.
import { type ClusterInput, clusterFields, Tier } from '../fleet/records.js';
import { batchGet, ConditionFailed, getItem, mapLimit, queryAll, setFields, updateItem } from './client.js';
import { itemReader, number, oneOf, string } from './items.js';
import { bumpWriteCounter, PACK_COUNTER_SK, PACK_HEAD_SK, readThroughPack, type PackBuilder, type PackRead, type PackSource } from './packing.js';

const FLEET_PK = 'CLUSTERS';
const PACK_PK = 'CLUSTERS-PACK';
/** The records, as a JSON array, brotli quality 1. */
const PACK_ENCODING = 'records-json+br1';
/**
 * The inventory's brotli window (log2 bytes): 256 KB instead of brotli's 4 MB. Records repeat
 * each other only in field names and id prefixes, so 10,000 clusters (4.6 MB of JSON) pack
 * within 0.3% of the default, and a reader's decoder fills a 256 KB ring, not 4 MB: the
 * refresh's pack reads in a fresh process touched 7,100-7,200 pages before, 5,160-5,280 after.
 */
export const INVENTORY_WINDOW_BITS = 18;
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

/** What upsertClusters did besides writing: the clusters it did not write, and those whose names it changed. */
export interface UpsertedClusters {
  /** With `readAt`: the ids written meanwhile by someone else, not written. */
  changedMeanwhile: string[];
  /** Clusters stored before whose cluster_name or customer_name this write changed (their issues carry the names). */
  renamed: ClusterInput[];
}

/**
 * Inserts or replaces each cluster's inventory, keeping when it was first seen. With `readAt`
 * (cluster id → the updated_at read, null for a cluster not stored), a cluster is written only
 * if it is still as read: the ids of those written meanwhile by someone else are answered, not
 * written (the metrics puller reads them again rather than put back what another write changed).
 */
export async function upsertClusters(clusters: ClusterInput[], now = new Date(), readAt?: ReadonlyMap<string, string | null>): Promise<UpsertedClusters> {
  if (clusters.length === 0) return { changedMeanwhile: [], renamed: [] };
  const at = now.toISOString();
  const bump = () => bumpWriteCounter('clusters', { pk: PACK_PK, sk: PACK_COUNTER_SK });
  // The seqlock of the inventory pack: odd while these writes are in flight, even again after (done or failed).
  await bump();
  try {
    return await writeClusters(clusters, at, readAt);
  } finally {
    await bump();
  }
}

async function writeClusters(clusters: ClusterInput[], at: string, readAt?: ReadonlyMap<string, string | null>): Promise<UpsertedClusters> {
  const changedMeanwhile: string[] = [];
  const renamed: ClusterInput[] = [];
  await mapLimit(clusters, 16, async (cluster) => {
    // Only inventory fields: a full record's timestamps are the repository's to set.
    const set = setFields(Object.fromEntries(clusterFields().map((k) => [k, cluster[k]])));
    const seen = readAt?.get(cluster.cluster_id);
    try {
      // The values this write replaced (none for a new cluster): a rename shows in them.
      const old = await updateItem('clusters', clusterKey(cluster.cluster_id), {
        UpdateExpression: `${set.set}, updated_at = :now, created_at = if_not_exists(created_at, :now)`,
        ExpressionAttributeNames: set.names,
        ExpressionAttributeValues: { ...set.values, ':now': at, ...(seen ? { ':seen': seen } : {}) },
        ...(readAt ? { ConditionExpression: seen ? 'updated_at = :seen' : 'attribute_not_exists(pk)' } : {}),
        ReturnValues: 'UPDATED_OLD',
      });
      if (old?.created_at !== undefined && (old.cluster_name !== cluster.cluster_name || old.customer_name !== cluster.customer_name)) renamed.push(cluster);
    } catch (error) {
      if (!(readAt && error instanceof ConditionFailed)) throw error;
      changedMeanwhile.push(cluster.cluster_id);
    }
  });
  return { changedMeanwhile, renamed };
}

export async function getCluster(clusterId: string, consistent = false): Promise<ClusterRecord | undefined> {
  const item = await getItem('clusters', clusterKey(clusterId), consistent);
  return item ? readCluster(item) : undefined;
}

let lastRead: Omit<PackRead<unknown>, 'value'> = { from: 'items', built: false };
/** How the last listClusters got the inventory, and whether it wrote the pack (tests, benchmarks). */
export const lastInventoryRead = () => ({ ...lastRead });

/**
 * The order listClusters answers in: by name (code points), twins by id. The scoring's
 * worst-first orders then find every tie already in name order and sort none
 * (fleet-score.ts worstFirstOrder): about 3.5 ms each, three per refresh, on 10,000 clusters.
 */
type Named = Pick<ClusterRecord, 'cluster_name' | 'cluster_id'>;
export const byNameThenId = (a: Named, b: Named): number =>
  a.cluster_name < b.cluster_name ? -1 : a.cluster_name > b.cluster_name ? 1 : a.cluster_id < b.cluster_id ? -1 : a.cluster_id > b.cluster_id ? 1 : 0;

/** The inventory as packing.ts reads and packs it: every record, as a JSON array, in name order. */
const inventorySource: PackSource<ClusterRecord[]> = {
  table: 'clusters',
  pk: PACK_PK,
  encoding: PACK_ENCODING,
  fromItems: async (consistent) =>
    (
      await queryAll('clusters', {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
        ExpressionAttributeValues: { ':pk': FLEET_PK, ':c': 'CLUSTER#' },
        ConsistentRead: consistent,
      })
    )
      .map(readCluster)
      .sort(byNameThenId),
  encode: (clusters) => Buffer.from(JSON.stringify(clusters)),
  windowBits: INVENTORY_WINDOW_BITS,
  // Each record checked by the reader its item would have gone through.
  decode: (raw) => {
    const records: unknown = JSON.parse(raw.toString('utf8'));
    if (!Array.isArray(records)) throw new Error('not a list of records');
    return records.map((record) => readCluster(record as Record<string, unknown>));
  },
  count: (clusters) => clusters.length,
  bytes: (clusters) => clusters.length * 1024,
};

/**
 * Every cluster's inventory, in name order (twins by id): from the pack when it is current,
 * else from the items; with `build` (the refresh, whose worker may write the
 * table) the pack is then written for the next read (packing.ts readThroughPack).
 */
export async function listClusters({ build }: { build?: PackBuilder } = {}): Promise<ClusterRecord[]> {
  const found = await batchGet(
    'clusters',
    [PACK_COUNTER_SK, PACK_HEAD_SK].map((sk) => ({ pk: PACK_PK, sk })),
    true,
  );
  const { value, ...read } = await readThroughPack(inventorySource, {
    counter: found.find((i) => i.sk === PACK_COUNTER_SK),
    head: found.find((i) => i.sk === PACK_HEAD_SK),
    build,
  });
  lastRead = read;
  // A copy: the cached list is this container's, shared by every read while the counter stands still.
  // Sorted, though a pack written since packs were in name order already is (one compare per
  // cluster then): one written before was in id order.
  return [...value].sort(byNameThenId);
}

/**
 * Ids that can name a stored cluster: those whose key DynamoDB takes (a sort key is at most
 * 1,024 bytes; inventory ids are UUIDs). Any other, e.g. an alert's cluster label of 1,024
 * characters, is unknown without a read: it would fail the whole BatchGet, and with it every
 * alert of the notification, on every redelivery.
 */
const storable = (ids: Iterable<string>) => [...new Set(ids)].filter((id) => Buffer.byteLength(clusterKey(id).sk) <= 1024);

/**
 * Which of these cluster ids are known (for refusing data about unknown clusters). Read consistently: a sender
 * registers a cluster and sends its data right after (`npm run ingest`, an alert on a new cluster), and an
 * eventually consistent read could refuse that data as about an unknown cluster.
 */
export async function knownClusterIds(clusterIds: Iterable<string>): Promise<Set<string>> {
  const items = await batchGet('clusters', storable(clusterIds).map(clusterKey), true);
  return new Set(items.map((i) => String(i.cluster_id)));
}

/** The inventory of these clusters (those that exist); `consistent` for a writer reading again what another write just changed. */
export async function getClusters(clusterIds: Iterable<string>, consistent = false): Promise<ClusterRecord[]> {
  return (await batchGet('clusters', storable(clusterIds).map(clusterKey), consistent)).map(readCluster);
}

/** True when no cluster is stored yet (the local runtime then loads the demo fleet). */
export async function fleetIsEmpty(): Promise<boolean> {
  return (await queryAll('clusters', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': FLEET_PK }, Limit: 1 }, 1)).length === 0;
}
