// A decommissioned cluster (resource_state TERMINATED, DELETED, …) stays in the inventory, which
// only grows; the fleet's views leave it out, through the route groups' handlers on DynamoDB Local:
// its last days' critical data put it in the scores, the KPIs and the critical clusters (and the
// investigator's queue), then it stayed there healthy and stale for good.
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as criticalClusters } from '../../functions/critical-clusters.js';
import { handler as fleet } from '../../functions/fleet.js';
import { addSamples } from '../../shared/db/metrics.js';
import { dropFleetViewCache } from '../../shared/scoring/fleet-view.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

const NOW = new Date();
let viewer: string;
let running: string;
let stopped: string;
let gone: string[];

/** A day of critical disk and compaction samples, the last a minute ago. */
const critical = (cluster_id: string) =>
  Array.from({ length: 24 }, (_, h) => new Date(NOW.getTime() - (h * 60 + 1) * 60_000).toISOString()).flatMap((at) => [
    { cluster_id, metric_key: 'disk_used_pct' as const, value: 97, at },
    { cluster_id, metric_key: 'compaction_score' as const, value: 2500, at },
  ]);

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  viewer = await userToken('viewer', 'gone-viewer');
  [running, stopped, ...gone] = await Promise.all([
    storedCluster({ resource_state: 'RUNNING' }),
    storedCluster({ resource_state: 'STOPPED' }),
    storedCluster({ resource_state: 'TERMINATED' }),
    storedCluster({ resource_state: 'deleted' }),
  ]);
  expect(await addSamples([running, stopped, ...gone].flatMap(critical))).toEqual([]);
  dropFleetViewCache();
});

const get = async (handler: unknown, path: string) => {
  const answer = await call(handler as Handler, { method: 'GET', path, routeKey: `GET ${path}`, headers: { authorization: `Bearer ${viewer}` } });
  expect(answer.statusCode).toBe(200);
  return answer.json!;
};

describe('clusters the inventory marks as gone', () => {
  it('are left out of the scores and KPIs; a stopped cluster is still scored', async () => {
    const scores = (await get(fleet, '/api/fleet/scores')).scores as { cluster_id: string; classification: string }[];
    expect(scores.map((s) => s.cluster_id).sort()).toEqual([running, stopped].sort());
    expect(new Set(scores.map((s) => s.classification))).toEqual(new Set(['Critical']));
    expect((await get(fleet, '/api/fleet/kpis')).kpis).toMatchObject({ total_clusters: 2, critical_count: 2 });
  });

  it('are not critical clusters', async () => {
    const answer = await get(criticalClusters, '/api/critical-clusters');
    const ids = (answer.clusters as { cluster_id: string }[]).map((c) => c.cluster_id);
    for (const id of gone) expect(ids).not.toContain(id);
    expect(ids).toContain(running);
  });
});
