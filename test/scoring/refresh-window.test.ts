// The refresh reads the lookback's settled days folded, one window pack per shard
// (shared/db/rollup-packs.ts, fleet-view.ts computeFleetView): its views must be the
// ones a day-by-day read computes, also where a sum leaves the double range (the one
// answer that needs each day: the refresh then reads day by day).
import { beforeAll, describe, expect, it } from 'vitest';
import { upsertClusters } from '../../shared/db/clusters.js';
import { windowDays } from '../../shared/db/days.js';
import { METRIC_SHARDS, putRollups, type StoredRollup } from '../../shared/db/metrics.js';
import { clearPackCache, PACK_BUILDER } from '../../shared/db/packing.js';
import { lastWindowReadStats } from '../../shared/db/rollup-packs.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import type { DayRollup } from '../../shared/fleet/rollup.js';
import { fleetKpis } from '../../shared/scoring/fleet-score.js';
import { computeFleetView, dropFleetViewCache, refreshFleetView, type FleetView } from '../../shared/scoring/fleet-view.js';
import { healthKpis } from '../../shared/scoring/health-score.js';
import { riskSummary } from '../../shared/scoring/risk.js';
import { useTestTables } from '../support/dynamo.js';
import { clusterRecord } from './fixtures.js';

beforeAll(async () => {
  await useTestTables();
});

const now = new Date();
const days = windowDays(7, now);
const clusters = Array.from({ length: 60 }, (_, i) => clusterRecord(`window-${i}`));

/** Some days and metrics of each cluster, values of every size. */
function rollups(): StoredRollup[] {
  return clusters.flatMap(({ cluster_id }) =>
    days.flatMap((day) => {
      if (Math.random() < 0.2) return [];
      const metrics: DayRollup = {};
      for (const key of METRIC_KEYS) {
        if (Math.random() < 0.2) continue;
        const [a, b] = [Math.random() * 100, Math.random() < 0.1 ? Math.random() * 1e12 : Math.random() * 100];
        const at = `${day}T${String(Math.floor(Math.random() * 24)).padStart(2, '0')}:30:00.000Z`;
        metrics[key] = { min: Math.min(a, b), max: Math.max(a, b), sum: a + b, count: 2, last: b, last_at: at };
      }
      return [{ cluster_id, day, metrics }];
    }),
  );
}

/** Everything a refresh persists or answers, as text. */
const answers = (view: FleetView) =>
  JSON.stringify({
    scores: view.scores,
    health: view.healthScores,
    risk: view.snapshots,
    kpis: [fleetKpis(view.scores), healthKpis(view.healthScores, view.fleet, view.health.rules, view.now, view.aggregates), riskSummary(view.snapshots)],
  });

describe('the refresh through window packs', () => {
  it('answers what a day-by-day read computes: built, then from the packs in a new container', async () => {
    await upsertClusters(clusters);
    await putRollups(rollups());
    const built = await refreshFleetView(['fleet', 'health', 'risk']);
    expect(built.windowed).toBe(true);
    expect(lastWindowReadStats()).toMatchObject({ folded: METRIC_SHARDS, built: METRIC_SHARDS });
    clearPackCache();
    dropFleetViewCache();
    const cold = await refreshFleetView(['fleet', 'health', 'risk']);
    expect(lastWindowReadStats()).toMatchObject({ packs: METRIC_SHARDS, folded: 0 });
    const perDay = await computeFleetView(cold.now);
    expect(perDay.windowed).toBe(false);
    expect(answers(cold)).toBe(answers(perDay));
    expect(answers(cold).length).toBeGreaterThan(10_000);
  });

  it('reads day by day where a sum leaves the double range, and answers what that read computes', async () => {
    const huge = (day: string) => ({
      cluster_id: clusters[0]!.cluster_id,
      day,
      metrics: { p99_latency_ms: { min: 1, max: 2, sum: Number.MAX_VALUE, count: 2, last: 1, last_at: `${day}T06:00:00.000Z` } },
    });
    // Stored directly: ingest and pulls bound every value to ±1e15 (records.ts), so no sum of theirs gets there.
    await putRollups([huge(days[0]!), huge(days[1]!)]);
    const view = await computeFleetView(new Date(), PACK_BUILDER); // as the refresh computes, before it persists
    expect(view.windowed).toBe(false);
    expect(lastWindowReadStats()).toMatchObject({ folded: 0, packs: 0, cached: 0 }); // the second read, day by day
    const perDay = await computeFleetView(view.now);
    expect(answers(view)).toBe(answers(perDay));
  });
});
