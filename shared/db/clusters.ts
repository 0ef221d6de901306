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
import { ClusterInput, Tier } from '../fleet/records.js';
import { createLogger, errorFields, type Logger } from '../log.js';
import { batchGet, getItem, mapLimit, queryAll, setFields, tableName, updateItem } from './client.js';
import { itemReader, number, oneOf, string } from './items.js';
import {
  bumpWriteCounter,
  CorruptPack,
  healWriteCounter,
  PACK_COUNTER_SK,
  PACK_HEAD_SK,
  packHeadOf,
  readPackBytes,
  switchPackHead,
  writePack,
  writesOf,
} from './packing.js';

const FLEET_PK = 'CLUSTERS';
const PACK_PK = 'CLUSTERS-PACK';
/** The records, as a JSON array, brotli quality 1. */
const PACK_ENCODING = 'records-json+br1';
const clusterKey = (clusterId: string) => ({ pk: FLEET_PK, sk: `CLUSTER#${clusterId}` });

let logger: Logger | undefined;
const log = () => (logger ??= createLogger('clusters'));

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
  if (clusters.length === 0) return;
  const at = now.toISOString();
  const bump = () => bumpWriteCounter('clusters', { pk: PACK_PK, sk: PACK_COUNTER_SK });
  // The seqlock of the inventory pack: odd while these writes are in flight, even again after (done or failed).
  await bump();
  try {
    await writeClusters(clusters, at);
  } finally {
    await bump();
  }
}

async function writeClusters(clusters: ClusterInput[], at: string): Promise<void> {
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

/** The decoded inventory of this container while its table's counter holds `writes`; `packed`: a sound pack of it is stored. */
let cached: { table: string; writes: number; clusters: readonly ClusterRecord[]; packed: boolean } | undefined;
let lastRead: InventoryRead = { from: 'items', built: false };
/** Where a listClusters got the inventory, and whether it wrote the pack. */
export interface InventoryRead {
  from: 'cached' | 'pack' | 'items';
  built: boolean;
}
/** How the last listClusters read (tests, benchmarks). */
export const lastInventoryRead = (): InventoryRead => ({ ...lastRead });
/** Forgets this container's decoded inventory (tests, benchmarks). */
export function dropInventoryCache(): void {
  cached = undefined;
}

/**
 * Every cluster's inventory, by cluster id. From the pack when it is current,
 * else from the items; then, with `build` (the refresh, whose worker may write
 * the table), a pack is written for the next read if none is current (a
 * failure is logged), after evening a counter a dead writer left odd.
 */
export async function listClusters({ build = false } = {}): Promise<ClusterRecord[]> {
  const counterKey = { pk: PACK_PK, sk: PACK_COUNTER_SK };
  const found = await batchGet('clusters', [counterKey, { pk: PACK_PK, sk: PACK_HEAD_SK }], true);
  const counter = found.find((i) => i.sk === PACK_COUNTER_SK);
  const headItem = found.find((i) => i.sk === PACK_HEAD_SK);
  const writes = (build ? await healWriteCounter('clusters', counterKey, counter) : undefined) ?? writesOf(counter);
  const packable = writes % 2 === 0;
  const table = tableName('clusters');
  const read: InventoryRead = { from: 'items', built: false };
  let clusters: readonly ClusterRecord[] | undefined;
  let packed = false;
  if (packable && cached?.table === table && cached.writes === writes) {
    ({ clusters, packed } = cached);
    read.from = 'cached';
  } else if (packable && headItem) {
    try {
      clusters = await readInventoryPack(headItem, writes);
      packed = clusters !== undefined;
      read.from = 'pack';
    } catch (error) {
      // Never data: the items are read instead, and the pack built from them replaces it.
      if (!(error instanceof CorruptPack)) throw error;
      log().error('corrupt inventory pack: read from items, rebuilt', errorFields(error));
    }
  }
  if (!clusters) {
    const items = await queryAll('clusters', {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
      ExpressionAttributeValues: { ':pk': FLEET_PK, ':c': 'CLUSTER#' },
      ConsistentRead: packable, // read after the counter, as the seqlock needs
    });
    clusters = items.map(readCluster);
    read.from = 'items';
  }
  if (packable && build && !packed) {
    try {
      const raw = Buffer.from(JSON.stringify(clusters));
      const head = await writePack('clusters', PACK_PK, { builtFrom: writes, clusters: clusters.length, encoding: PACK_ENCODING, raw });
      packed = read.built = await switchPackHead('clusters', PACK_PK, head);
    } catch (error) {
      log().warn('inventory pack not written (read from items until it is)', errorFields(error));
    }
  }
  if (packable) cached = { table, writes, clusters, packed };
  lastRead = read;
  return [...clusters];
}

/** The pack's records when its head was built from `writes`; each checked as an item would be. */
async function readInventoryPack(headItem: Record<string, unknown>, writes: number): Promise<ClusterRecord[] | undefined> {
  const head = packHeadOf(PACK_PK, headItem, PACK_ENCODING);
  if (head.built_from !== writes) return undefined;
  const raw = await readPackBytes('clusters', PACK_PK, head);
  if (!raw) return undefined;
  const corrupt = (reason: string) => new CorruptPack(PACK_PK, head.pack_id, reason);
  let records: unknown;
  try {
    records = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw corrupt(`not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(records) || records.length !== head.clusters) throw corrupt(`not ${head.clusters} records`);
  try {
    return records.map((record) => readCluster(record as Record<string, unknown>));
  } catch (error) {
    throw corrupt((error as Error).message);
  }
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
