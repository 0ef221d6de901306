// What the chat's SQL snapshot reads of the rollups, seen on the wire through the proxy: 14 days
// of a fleet are 14 × clusters rollup items (140,000 at 10,000 clusters, minutes through
// DynamoDB), which the packed rollups the refresh writes hold as a few items per day and shard.
// The snapshot reads the packs for the days they cover, and its metric_daily table holds what
// the items hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropFleetDatabase, fleetDatabase } from '../../shared/chat/tools.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { windowDays } from '../../shared/db/days.js';
import { putRollups, readFleetRollups, rollupPartition, type StoredRollup } from '../../shared/db/metrics.js';
import { clearPackCache, PACK_BUILDER } from '../../shared/db/packing.js';
import { isPackableDay, readFleetRollupColumns } from '../../shared/db/rollup-packs.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { useTestTables } from '../support/dynamo.js';
import { requestsOf, tableOf, type DynamoProxy } from '../support/dynamo-proxy.js';
import { clusterRecord } from '../scoring/fixtures.js';

const NOW = new Date();
const DAYS = windowDays(14, NOW);
const clusters = Array.from({ length: 30 }, (_, i) => clusterRecord(`snapshot-${i}`));
let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  await upsertClusters(clusters);
  // Every cluster-day but some, every metric but some, at distinct values.
  const rollups: StoredRollup[] = clusters.flatMap(({ cluster_id }, c) =>
    DAYS.flatMap((day, d) => {
      if ((c + d) % 7 === 3) return [];
      const metrics = Object.fromEntries(
        METRIC_KEYS.filter((_, m) => (c + d + m) % 5 !== 0).map((key, m) => {
          const v = c * 100 + d + m / 10;
          return [key, { min: v, max: v + 5, sum: 3 * v + 5, count: 3, last: v + 1, last_at: `${day}T12:00:00.000Z` }];
        }),
      );
      return [{ cluster_id, day, metrics }];
    }),
  );
  await putRollups(rollups);
  // The refresh builds each settled day's packs as the day enters its lookback, so after two weeks of
  // running every day of the snapshot has them; built here at once, as the refresh does (the chat reads
  // packs, never writes them).
  await readFleetRollupColumns(DAYS, NOW, { build: PACK_BUILDER });
  clearPackCache();
});
afterAll(async () => {
  await dropFleetDatabase();
  await proxy.close();
});

describe("the chat's SQL snapshot", () => {
  it('reads the packed days as packs, not as rollup items, and holds every rollup the items hold', async () => {
    const { result: db, requests } = await requestsOf(
      proxy,
      () => fleetDatabase(NOW),
      (r) => r.operation === 'Query' && tableOf(r).endsWith('metrics'),
    );
    const partitions = new Set(requests.map((r) => String(r.input.ExpressionAttributeValues?.[':pk']?.S)));
    const packed = DAYS.filter((day) => isPackableDay(day, NOW));
    expect(packed.length).toBeGreaterThan(10);
    for (const day of packed) expect(partitions.has(rollupPartition(day, 0)), day).toBe(false);

    const items = [...(await readFleetRollups(DAYS)).values()].flat();
    const parts = items.flatMap((r) => Object.values(r.metrics));
    const [rows, count, sum, lastAt] = (await db.query('SELECT count(*), sum(count), sum(sum), max(last_at) FROM metric_daily')).rows[0]!;
    expect(rows).toBe(parts.length);
    expect(count).toBe(parts.reduce((n, p) => n + p!.count, 0));
    expect(sum).toBeCloseTo(
      parts.reduce((n, p) => n + p!.sum, 0),
      6,
    );
    expect(lastAt).toBe(
      parts
        .map((p) => p!.last_at)
        .sort()
        .at(-1),
    );
    const one = items.find((r) => r.cluster_id === clusters[4]!.cluster_id && r.day === DAYS[2])!;
    const shown = await db.query(
      `SELECT metric_key, min, max, sum, count, last, last_at FROM metric_daily WHERE cluster_id = '${one.cluster_id}' AND day = '${one.day}' ORDER BY metric_key`,
    );
    expect(shown.rows).toEqual(
      Object.entries(one.metrics)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, p]) => [key, p!.min, p!.max, p!.sum, p!.count, p!.last, p!.last_at]),
    );
  });
});
