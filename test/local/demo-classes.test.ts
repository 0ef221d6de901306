// The demo fleet shows what it was made to show: each cluster's designed health is its class on
// the fleet view (tier-adjusted, alerts included) and on the health view (metrics alone), under the
// default rules. One bad metric per troubled cluster had left every "warning" cluster Healthy and
// most "critical" ones Warning: a demo with no warning tier and a health view of healthy clusters.
import { beforeAll, describe, expect, it } from 'vitest';
import { demoClusters, loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { computeFleetView } from '../../shared/scoring/fleet-view.js';
import { useTestTables } from '../support/dynamo.js';

const CLASS = { healthy: 'Healthy', warning: 'Warning', critical: 'Critical' } as const;

beforeAll(async () => {
  await useTestTables();
});

describe('the demo fleet', () => {
  it('scores each cluster as the class it was made to be, on the fleet view and the health view, for every tier', async () => {
    const now = new Date();
    await loadDemoFleet(60, { now });
    const view = await computeFleetView(now);
    const designed = demoClusters(60);
    // Every class and every tier among the troubled ones: the check covers S's ×1.5 as well as B's ×1.
    expect(new Set(designed.map((c) => c.health))).toEqual(new Set(['healthy', 'warning', 'critical']));
    expect(new Set(designed.filter((c) => c.health === 'warning').map((c) => c.inventory.customer_tier))).toEqual(new Set(['S', 'A', 'B']));
    for (const cluster of designed) {
      const id = cluster.inventory.cluster_id;
      const fleet = view.scores.find((s) => s.cluster_id === id)!;
      const health = view.healthScores.find((s) => s.cluster_id === id)!;
      const name = `${cluster.inventory.cluster_name} (${cluster.health}, ${cluster.trouble ?? 'no trouble'}, tier ${cluster.inventory.customer_tier})`;
      expect(fleet.classification, `${name} on the fleet view: ${fleet.tier_adjusted_score}`).toBe(CLASS[cluster.health]);
      expect(health.classification, `${name} on the health view: ${health.overall_score}`).toBe(CLASS[cluster.health]);
    }
    // Some healthy clusters are to watch: at risk by one metric (risk level Warning), their score still Healthy.
    const watched = designed.filter((c) => c.watch);
    expect(watched.length).toBeGreaterThan(2);
    for (const cluster of watched) {
      const snapshot = view.snapshots.find((s) => s.cluster_id === cluster.inventory.cluster_id)!;
      expect(snapshot.risk_level, cluster.inventory.cluster_name).toBe('Warning');
    }
  }, 180_000);
});
