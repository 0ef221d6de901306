// A fleet shaped like what the repositories return: `total` demo clusters with
// 7 days (or `days`) of rollups each, every rollup its own parsed JSON (as read from DynamoDB),
// and the same fleet as the refresh reads it: rows of one RollupColumns, grouped by
// shard as readFleetRollupColumns gives them (not in the fleet's order).
import { demoClusters, demoSamples } from '../../infra/local/demo-fleet.js';
import { byNameThenId } from '../../shared/db/clusters.js';
import { windowDays } from '../../shared/db/days.js';
import { shardOf, type StoredRollup } from '../../shared/db/metrics.js';
import { columnsFromRollups } from '../../shared/fleet/rollup-columns.js';
import { mergeSample, type DayRollup } from '../../shared/fleet/rollup.js';
import { columnarClusterData, type ClusterData } from '../../shared/scoring/inputs.js';

export function syntheticFleet(total: number, now: Date, dayCount = 7): { data: ClusterData[]; rollups: StoredRollup[]; columnar: ClusterData[] } {
  const days = windowDays(dayCount, now);
  const clusters = demoClusters(total, 5);
  // Real demo series for 50 clusters, reused round-robin: the engine's arithmetic does not depend on
  // the values, but its worst-first orders do: they leave 39 distinct scores, ~250 clusters each, as
  // a fleet with many clusters at 100.0 ties (the ties come in name order, see listClusters).
  const templates = clusters.slice(0, 50).map((c) => {
    const perDay = new Map<string, string>();
    const merged = new Map<string, DayRollup>();
    for (const s of demoSamples(c, dayCount, now, 5)) {
      const day = s.at.slice(0, 10);
      merged.set(day, mergeSample(merged.get(day) ?? {}, s));
    }
    for (const [day, m] of merged) perDay.set(day, JSON.stringify(m));
    return perDay;
  });
  // The inventory records first, together and in name order, as listClusters returns them (so they
  // lie together in memory, as in a refresh), then each cluster's rollups.
  const inventory = clusters
    .map((c) => c.inventory)
    .sort(byNameThenId)
    .map((record) => ({ ...record, created_at: now.toISOString(), updated_at: now.toISOString() }));
  const rollups: StoredRollup[] = [];
  const data = inventory.map((cluster, i) => {
    const template = templates[i % templates.length]!;
    const mine = days
      .filter((d) => template.has(d))
      .map((day) => ({ cluster_id: cluster.cluster_id, day, metrics: JSON.parse(template.get(day)!) as DayRollup }));
    rollups.push(...mine);
    return { cluster, rollups: mine, alerts: [] };
  });
  const rows = data.map((d) => d.cluster.cluster_id).sort((a, b) => shardOf(a) - shardOf(b) || (a < b ? -1 : 1));
  const columns = columnsFromRollups(days, rows, rollups);
  return { data, rollups, columnar: data.map((d) => columnarClusterData(d.cluster, columns, d.alerts)) };
}
