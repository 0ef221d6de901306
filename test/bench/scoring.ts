// Scoring: the pure engine, a full refresh through DynamoDB Local, and the
// cached GET /api/fleet/scores through the local server.
import autocannon from 'autocannon';
import { startBenchService } from './service.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { putRollups } from '../../shared/db/metrics.js';
import { dropFleetViewCache, refreshFleetView } from '../../shared/scoring/fleet-view.js';
import { syntheticFleet } from './synthetic-fleet.js';
import type { BenchContext } from './run.js';

export const title = 'Scoring (DESIGN §8): refresh and cached reads';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const now = new Date();

  // Full refresh through DynamoDB Local: read rollups and alerts, compute all views, persist 3 snapshots.
  for (const total of [1_000, 10_000]) {
    await freshTables();
    const fleet = syntheticFleet(total, now);
    await upsertClusters(fleet.data.map((d) => d.cluster));
    await putRollups(fleet.rollups);
    dropFleetViewCache();
    const start = process.hrtime.bigint();
    const view = await refreshFleetView(['fleet', 'health', 'risk']);
    report(
      'refresh',
      `full refresh of ${total.toLocaleString('en-US')} clusters (read 7 days, compute, persist 3 snapshots)`,
      `${(ms(start) / 1000).toFixed(2)} s (${view.scores.length} scored)`,
    );
  }

  // GET /api/fleet/scores, 1,000 clusters, cached, through the local server.
  await freshTables();
  const fleet = syntheticFleet(1_000, now);
  await upsertClusters(fleet.data.map((d) => d.cluster));
  await putRollups(fleet.rollups);
  const { service, token } = await startBenchService();
  try {
    for (const encoding of ['gzip', 'identity']) {
      const headers = { Authorization: `Bearer ${token}`, 'Accept-Encoding': encoding };
      const warm = await fetch(`${service.url}/api/fleet/scores`, { headers: { Authorization: headers.Authorization } });
      const size = (await warm.arrayBuffer()).byteLength;
      const result = await autocannon({ url: `${service.url}/api/fleet/scores`, headers, connections: 4, duration: 8 });
      const wire = result.throughput.average / Math.max(1, result.requests.average);
      report(
        'GET /api/fleet/scores',
        `1,000 clusters, cached, Accept-Encoding ${encoding} (${(size / 1024).toFixed(0)} KB JSON, ${(wire / 1024).toFixed(0)} KB on the wire), 4 connections, 8 s`,
        `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${Math.round(result.requests.average)} req/s, ${result.non2xx} non-2xx (target p99 < 50 ms)`,
      );
    }
  } finally {
    await service.stop();
  }
}
