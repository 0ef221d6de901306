// Inventory from Prometheus (issue 20 §3, optional): an info-style series per
// cluster whose labels describe it. Its `cluster.label` holds the cluster id;
// the labels the rule set maps fill those fields; a new cluster takes the rule
// set's defaults for the rest, an existing one keeps its own. Records are
// checked with the schema POST /api/ingest/clusters checks them with, and only
// clusters whose fields change are written.
import { listClusters, upsertClusters, type ClusterRecord } from '../db/clusters.js';
import { getInventoryState, putInventoryState } from '../db/metric-pulls.js';
import { ClusterInput, clusterFields, reasonOf } from '../fleet/records.js';
import type { PrometheusClient } from '../prometheus/client.js';
import type { MetricSources } from '../rules/schemas.js';

export interface InventoryOutcome {
  upserted: number;
  refused: number;
  unchanged: number;
  error: string | null;
}

/** The inventory record a series describes: its labels over the stored cluster (or the defaults). */
function recordOf(labels: Record<string, string>, sources: MetricSources, existing: ClusterRecord | undefined): Record<string, unknown> {
  const { labels: mapped, defaults } = sources.inventory;
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

export async function pullInventory(client: PrometheusClient, sources: MetricSources, nowSeconds: number, now: Date): Promise<InventoryOutcome> {
  const at = now.toISOString();
  try {
    const evaluated = nowSeconds - sources.prometheus.settle_seconds;
    const samples = await client.query(sources.inventory.query, evaluated);
    const stored = new Map((await listClusters()).map((c) => [c.cluster_id, c]));
    const records = samples.map((s) => recordOf(s.labels, sources, stored.get(s.labels[sources.cluster.label] ?? '')));
    const changes = records.filter((r) => changed(r, stored.get(String(r.cluster_id))));
    const refusals: string[] = [];
    const writes: ClusterInput[] = [];
    const seen = new Set<string>();
    for (const record of changes) {
      const parsed = ClusterInput.safeParse(record);
      if (!parsed.success) refusals.push(reasonOf(parsed.error));
      else if (seen.has(parsed.data.cluster_id)) refusals.push(`cluster_id: ${parsed.data.cluster_id} appears in more than one series`);
      else {
        seen.add(parsed.data.cluster_id);
        writes.push(parsed.data);
      }
    }
    await upsertClusters(writes, now);
    const outcome = { upserted: writes.length, refused: refusals.length, unchanged: records.length - changes.length, error: null };
    await putInventoryState({
      last_success_at: at,
      upserted_last: outcome.upserted,
      refused_last: outcome.refused,
      last_error_at: null,
      last_error: refusals[0] ? `refused ${refusals.length}: ${refusals[0]}` : null,
    });
    return outcome;
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
    const previous = await getInventoryState();
    await putInventoryState({ last_success_at: previous?.last_success_at ?? null, upserted_last: 0, refused_last: 0, last_error_at: at, last_error: message });
    return { upserted: 0, refused: 0, unchanged: 0, error: message };
  }
}
