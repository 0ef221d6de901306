// The demo fleet shows what it was made to show: each cluster's designed health is its class on
// the fleet view (tier-adjusted, alerts included) and on the health view (metrics alone), under the
// default rules. One bad metric per troubled cluster had left every "warning" cluster Healthy and
// most "critical" ones Warning: a demo with no warning tier and a health view of healthy clusters.
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDemoFeed } from '../../infra/local/demo-feed.js';
import { demoClusters, loadDemoFleet, type DemoCluster } from '../../infra/local/demo-fleet.js';
import { computeFleetView } from '../../shared/scoring/fleet-view.js';
import { useTestTables } from '../support/dynamo.js';

const CLASS = { healthy: 'Healthy', warning: 'Warning', critical: 'Critical' } as const;

beforeAll(async () => {
  await useTestTables();
});

/** Each cluster's class on the fleet view and the health view, where it is not the one it was made to be. */
async function misclassed(designed: DemoCluster[], now: Date): Promise<string[]> {
  const view = await computeFleetView(now);
  return designed.flatMap((cluster) => {
    const id = cluster.inventory.cluster_id;
    const fleet = view.scores.find((s) => s.cluster_id === id)!;
    const health = view.healthScores.find((s) => s.cluster_id === id)!;
    const name = `${cluster.inventory.cluster_name} (${cluster.health}, ${cluster.trouble ?? 'no trouble'}, tier ${cluster.inventory.customer_tier})`;
    return [
      ...(fleet.classification === CLASS[cluster.health] ? [] : [`${name} on the fleet view: ${fleet.classification} ${fleet.tier_adjusted_score}`]),
      ...(health.classification === CLASS[cluster.health] ? [] : [`${name} on the health view: ${health.classification} ${health.overall_score}`]),
    ];
  });
}

describe('the demo fleet', () => {
  it('scores each cluster as the class it was made to be, on the fleet view and the health view, for every tier', async () => {
    const now = new Date();
    await loadDemoFleet(60, { now });
    const designed = demoClusters(60);
    // Every class and every tier among the troubled ones: the check covers S's ×1.5 as well as B's ×1.
    expect(new Set(designed.map((c) => c.health))).toEqual(new Set(['healthy', 'warning', 'critical']));
    expect(new Set(designed.filter((c) => c.health === 'warning').map((c) => c.inventory.customer_tier))).toEqual(new Set(['S', 'A', 'B']));
    expect(await misclassed(designed, now)).toEqual([]);
    // Some healthy clusters are to watch: at risk by one metric (risk level Warning), their score still Healthy.
    const view = await computeFleetView(now);
    const watched = designed.filter((c) => c.watch);
    expect(watched.length).toBeGreaterThan(2);
    for (const cluster of watched) {
      const snapshot = view.snapshots.find((s) => s.cluster_id === cluster.inventory.cluster_id)!;
      expect(snapshot.risk_level, cluster.inventory.cluster_name).toBe('Warning');
    }
  }, 180_000);

  it('keeps its classes while the feed runs on: loaded 16 days ago and fed since, each troubled cluster is still its class', async () => {
    // Tables of their own: the fleet above is not this one's.
    await useTestTables();
    const now = new Date();
    const loaded = new Date(now.getTime() - 16 * 86_400_000);
    await loadDemoFleet(20, { now: loaded });
    const dataDir = await mkdtemp(join(tmpdir(), 'demo-feed-'));
    await createDemoFeed({ dataDir, clusters: 20, now: () => loaded }).tick();
    expect((await createDemoFeed({ dataDir, clusters: 20, now: () => now }).tick()).hoursFed).toBeGreaterThan(14 * 24 - 2);
    // The troubled ones only: a healthy cluster may read Warning for a week after one of the feed's incidents.
    expect(
      await misclassed(
        demoClusters(20).filter((c) => c.health !== 'healthy'),
        now,
      ),
    ).toEqual([]);
  }, 300_000);
});
