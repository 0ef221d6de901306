// Inventory from Prometheus (issue 20 §3, optional): an info-style series per
// cluster whose labels describe it. Its `cluster.label` holds the cluster id;
// the labels the rule set maps fill those fields; a new cluster takes the rule
// set's defaults for the rest, an existing one keeps its own. Records are
// checked with the schema POST /api/ingest/clusters checks them with, and only
// clusters whose fields change are written.
import { getClusters, listClusters, upsertClusters, type ClusterRecord } from '../db/clusters.js';
import { getInventoryState, putInventoryState } from '../db/metric-pulls.js';
import { ClusterInput, clusterFields, clusterIdOf, reasonOf } from '../fleet/records.js';
import type { PrometheusClient } from '../prometheus/client.js';
import type { MetricSources } from '../rules/schemas.js';
import { createLogger } from '../log.js';
import { renameIssuesOf } from '../issues/renames.js';

const log = createLogger('metrics-puller');

/** Rounds of writing a cluster that other writes keep changing before the puller leaves it to the next pull. */
const INVENTORY_WRITE_ROUNDS = 3;

export interface InventoryOutcome {
  upserted: number;
  refused: number;
  unchanged: number;
  error: string | null;
}

/** The inventory record a series describes: its labels over the stored cluster (or the defaults). */
function recordOf(labels: Record<string, string>, sources: MetricSources, inventory: Inventory, existing: ClusterRecord | undefined): Record<string, unknown> {
  const { labels: mapped, defaults } = inventory;
  const base: Record<string, unknown> = existing
    ? Object.fromEntries(clusterFields().map((f) => [f, existing[f]]))
    : { ...defaults, cluster_name: labels[sources.cluster.label], node_count: 0 };
  for (const [field, label] of Object.entries(mapped)) {
    const value = label ? labels[label] : undefined;
    if (value !== undefined && value !== '') base[field] = value;
  }
  base.cluster_id = labels[sources.cluster.label];
  return base;
}

const changed = (record: Record<string, unknown>, existing: ClusterRecord | undefined) => !existing || clusterFields().some((f) => record[f] !== existing[f]);

type Inventory = NonNullable<MetricSources['inventory']>;

/** Upserts the clusters `inventory` (the rule set's section, enabled) describes. */
export async function pullInventory(
  client: PrometheusClient,
  sources: MetricSources,
  inventory: Inventory,
  nowSeconds: number,
  now: Date,
): Promise<InventoryOutcome> {
  const at = now.toISOString();
  try {
    const evaluated = nowSeconds - sources.prometheus.settle_seconds;
    const samples = await client.query(inventory.query, evaluated);
    const stored = new Map((await listClusters()).map((c) => [c.cluster_id, c]));
    // A series' record: the stored cluster with the labels' fields over it.
    const recordFor = (labels: Record<string, string>) =>
      ClusterInput.safeParse(recordOf(labels, sources, inventory, stored.get(clusterIdOf(labels[sources.cluster.label] ?? ''))));
    const refusals: string[] = [];
    const labelsOf = new Map<string, Record<string, string>>();
    let writes: ClusterInput[] = [];
    for (const { labels } of samples) {
      const parsed = recordFor(labels);
      if (!parsed.success) refusals.push(reasonOf(parsed.error));
      else if (labelsOf.has(parsed.data.cluster_id)) refusals.push(`cluster_id: ${parsed.data.cluster_id} appears in more than one series`);
      else {
        labelsOf.set(parsed.data.cluster_id, labels);
        writes.push(parsed.data);
      }
    }
    // Written only over the cluster as read: a cluster another write changed meanwhile (an ingest of its
    // other fields) is read again and its labels applied over that, so the puller never puts back what it read.
    let upserted = 0;
    let unchanged = 0;
    const renamed: ClusterInput[] = [];
    for (let round = 1; ; round++) {
      const changes = writes.filter((w) => changed(w, stored.get(w.cluster_id)));
      unchanged += writes.length - changes.length;
      const readAt = new Map(changes.map((w) => [w.cluster_id, stored.get(w.cluster_id)?.updated_at ?? null]));
      const { changedMeanwhile: again, renamed: renamedNow } = await upsertClusters(changes, now, readAt);
      renamed.push(...renamedNow);
      upserted += changes.length - again.length;
      if (again.length === 0) break;
      if (round >= INVENTORY_WRITE_ROUNDS) {
        for (const id of again) refusals.push(`cluster_id: ${id} kept changing while it was written; the next pull applies its labels`);
        break;
      }
      for (const cluster of await getClusters(again, true)) stored.set(cluster.cluster_id, cluster);
      writes = [];
      for (const id of again) {
        const parsed = recordFor(labelsOf.get(id)!);
        if (parsed.success) writes.push(parsed.data);
        else refusals.push(reasonOf(parsed.error)); // what another write stored makes it invalid: no longer ours to fix
      }
    }
    await renameIssuesOf(renamed);
    const outcome = { upserted, refused: refusals.length, unchanged, error: null };
    const refused = refusals[0] ? `refused ${refusals.length}: ${refusals[0]}` : null;
    // Stamped, so the status shows it (a message without its time was never shown): "N refused" alone said nothing of why.
    if (refused) log.warn('inventory pull refused clusters', { refused: refusals.length, first: refusals[0] });
    await putInventoryState({
      last_success_at: at,
      upserted_last: outcome.upserted,
      refused_last: outcome.refused,
      last_error_at: refused ? at : null,
      last_error: refused,
    });
    return outcome;
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
    const previous = await getInventoryState();
    await putInventoryState({ last_success_at: previous?.last_success_at ?? null, upserted_last: 0, refused_last: 0, last_error_at: at, last_error: message });
    return { upserted: 0, refused: 0, unchanged: 0, error: message };
  }
}
