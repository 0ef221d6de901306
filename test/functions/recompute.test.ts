// The scheduled recompute Lambda: refreshes every view, persists the three
// snapshots and moves the cache generation.
import { beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/recompute.js';
import { loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { getCluster, upsertClusters } from '../../shared/db/clusters.js';
import { METRIC_SHARDS } from '../../shared/db/metrics.js';
import { currentGeneration, listSnapshots, readSnapshot } from '../../shared/db/scores.js';
import type { FleetClusterScore } from '../../shared/scoring/fleet-score.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
  await loadDemoFleet(12);
});

describe('recompute worker', () => {
  it('refreshes scores and risk, keeps snapshot history and invalidates caches', async () => {
    const generation = await currentGeneration();
    const first = await handler();
    expect(first.clusters).toBe(12);
    expect(first.critical + first.warning).toBeLessThanOrEqual(12);
    expect(await currentGeneration()).toBe(generation + 1);
    const second = await handler();
    for (const kind of ['fleet', 'health', 'risk'] as const) {
      const headers = await listSnapshots(kind);
      expect(headers.map((h) => h.generated_at)).toEqual([second.generated_at, first.generated_at]);
      expect(headers[0]!.count).toBe(12);
    }
    // The chat's 14 days: the first run packed the settled shards the refresh's lookback left (fewer than all 13
    // settled days': the refresh packed its own); the second had none left.
    expect(first.rollup_shards_packed).toBeGreaterThan(0);
    expect(first.rollup_shards_packed).toBeLessThan(13 * METRIC_SHARDS);
    expect(second.rollup_shards_packed).toBe(0);
    const fleet = await readSnapshot<FleetClusterScore>('fleet', second.generated_at);
    expect(fleet).toHaveLength(12);
    expect(fleet[0]).toMatchObject({ cluster_id: expect.any(String), classification: expect.stringMatching(/^(Healthy|Warning|Critical)$/) });
  });
});

describe('cluster repository', () => {
  it('upserts a full record (with timestamps) by its inventory fields only', async () => {
    const [record] = await import('../../shared/db/clusters.js').then((m) => m.listClusters());
    await upsertClusters([{ ...record!, node_count: 42 }]);
    const after = await getCluster(record!.cluster_id);
    expect(after).toMatchObject({ node_count: 42, created_at: record!.created_at });
  });
});

describe('recompute and the AI side', () => {
  it('creates agent tasks for the clusters ai_trigger selects, once per cooldown', async () => {
    const first = await handler();
    expect(first.agent_tasks).not.toBeNull();
    const second = await handler();
    expect(second.agent_tasks!.created).toBe(0); // pending or in cooldown: no duplicates
    expect(second.agent_tasks!.created + second.agent_tasks!.skipped).toBeGreaterThanOrEqual(first.agent_tasks!.created);
  });
});
