// Scoring: the pure engine, a full refresh through DynamoDB Local, and the
// cached GET /api/fleet/scores through the local server.
import autocannon from 'autocannon';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoClusters, demoSamples } from '../../infra/local/demo-fleet.js';
import { startLocalService } from '../../infra/local/service.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { putRollups, windowDays, type StoredRollup } from '../../shared/db/metrics.js';
import { mergeSample, type DayRollup } from '../../shared/fleet/rollup.js';
import { loadHealthRules } from '../../shared/rules/load.js';
import { scoreFleet } from '../../shared/scoring/fleet-score.js';
import { dropFleetViewCache, refreshFleetView } from '../../shared/scoring/fleet-view.js';
import type { ClusterData } from '../../shared/scoring/inputs.js';
import type { BenchContext } from './run.js';

export const title = 'Scoring (DESIGN §8): engine, refresh, cached reads';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** `total` demo clusters with 7 days of rollups each (real demo series, one day per rollup). */
function syntheticFleet(total: number, now: Date): { data: ClusterData[]; rollups: StoredRollup[] } {
  const days = windowDays(7, now);
  const clusters = demoClusters(total, 5);
  // Real series for a sample of the fleet, reused round-robin: the engine's cost does not depend on the values.
  const templates = clusters.slice(0, 50).map((c) => {
    const perDay = new Map<string, DayRollup>();
    for (const s of demoSamples(c, 7, now, 5)) {
      const day = s.at.slice(0, 10);
      perDay.set(day, mergeSample(perDay.get(day) ?? {}, s));
    }
    return perDay;
  });
  const rollups: StoredRollup[] = [];
  const data = clusters.map((c, i) => {
    const template = templates[i % templates.length]!;
    const mine = days.filter((d) => template.has(d)).map((day) => ({ cluster_id: c.inventory.cluster_id, day, metrics: template.get(day)! }));
    rollups.push(...mine);
    return { cluster: { ...c.inventory, created_at: now.toISOString(), updated_at: now.toISOString() }, rollups: mine, alerts: [] };
  });
  return { data, rollups };
}

export async function run({ report, freshTables }: BenchContext): Promise<void> {
  const now = new Date();
  const { rules } = await loadHealthRules();

  // Pure engine: 10,000 clusters, one core.
  const big = syntheticFleet(10_000, now);
  scoreFleet(big.data.slice(0, 500), rules, now); // warm the JIT
  const timings: number[] = [];
  for (let i = 0; i < 5; i++) {
    // fresh rollup arrays: nothing summarised by an earlier run (a refresh starts cold too)
    const cold = big.data.map((d) => ({ ...d, rollups: [...d.rollups] }));
    const start = process.hrtime.bigint();
    scoreFleet(cold, rules, now);
    timings.push(ms(start));
  }
  report('engine', 'pure scoring of 10,000 clusters (unified scores, sorted), best of 5', `${Math.min(...timings).toFixed(1)} ms (target < 100 ms)`);

  // Full refresh through DynamoDB Local: read rollups and alerts, compute all views, persist 3 snapshots.
  for (const total of [1_000, 10_000]) {
    await freshTables();
    const fleet = syntheticFleet(total, now);
    await upsertClusters(fleet.data.map((d) => d.cluster));
    await putRollups(fleet.rollups);
    dropFleetViewCache();
    const start = process.hrtime.bigint();
    const view = await refreshFleetView(['fleet', 'health', 'risk']);
    report('refresh', `full refresh of ${total.toLocaleString('en-US')} clusters (read 7 days, compute, persist 3 snapshots)`, `${(ms(start) / 1000).toFixed(2)} s (${view.scores.length} scored)`);
  }

  // GET /api/fleet/scores, 1,000 clusters, cached, through the local server.
  await freshTables();
  const fleet = syntheticFleet(1_000, now);
  await upsertClusters(fleet.data.map((d) => d.cluster));
  await putRollups(fleet.rollups);
  const service = await startLocalService({
    port: 0,
    dataDir: await mkdtemp(join(tmpdir(), 'fleet-bench-')),
    dynamoEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB!,
    tablePrefix: process.env.TABLE_PREFIX!,
    adminPassword: 'bench-admin-password',
  });
  try {
    const login = await fetch(`${service.url}/api/auth/login`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'bench-admin-password' }),
    });
    const token = ((await login.json()) as { access_token: string }).access_token;
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
