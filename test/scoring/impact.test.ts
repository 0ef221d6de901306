// Impact preview of a rule change, by hand: which clusters move, which way,
// and in what order (worse first, then by name).
import { describe, expect, it } from 'vitest';
import { healthImpact, riskImpact } from '../../shared/scoring/impact.js';
import { NOW, clusterData, dimension, riskRule, riskRules, scoringRules } from './fixtures.js';

const disk = (green: number, yellow: number, red: number) => scoringRules([dimension({ metric_key: 'disk_used_pct', green, yellow, red })]);
const fleet = [
  // live (70/80/90): 75 → dimension 80, overall (80×7 + 100×3)/10 = 86 Healthy; tight (50/60/70): 10 → 37 Critical
  clusterData('alpha', { cluster: { customer_tier: 'B' }, today: { disk_used_pct: 75 } }),
  // live: 58 is green → 100 Healthy; tight: 100 − 40×8/10 = 68 → 77.6 Warning
  clusterData('bravo', { cluster: { customer_tier: 'B' }, today: { disk_used_pct: 58 } }),
  // live: 85 → 40 → 58 Critical; tight: past red, clamped to 0 → 30 Critical (no change)
  clusterData('charlie', { cluster: { customer_tier: 'B' }, today: { disk_used_pct: 85 } }),
  // green under both: no change
  clusterData('delta', { cluster: { customer_tier: 'B' }, today: { disk_used_pct: 40 } }),
];

describe('health rules impact', () => {
  it('lists the clusters whose classification changes, worse first, with the counts before and after', () => {
    const impact = healthImpact(fleet, disk(70, 80, 90), disk(50, 60, 70), NOW);
    expect(impact).toMatchObject({
      measure: 'classification',
      clusters_total: 4,
      changed_count: 2,
      before: { Healthy: 3, Warning: 0, Critical: 1 },
      after: { Healthy: 1, Warning: 1, Critical: 2 },
    });
    expect(impact.changes).toEqual([
      {
        cluster_id: fleet[0]!.cluster.cluster_id,
        cluster_name: 'alpha',
        customer_name: fleet[0]!.cluster.customer_name,
        from: 'Healthy',
        to: 'Critical',
        direction: 'worse',
        detail: 'tier-adjusted score 86 → 37',
      },
      {
        cluster_id: fleet[1]!.cluster.cluster_id,
        cluster_name: 'bravo',
        customer_name: fleet[1]!.cluster.customer_name,
        from: 'Healthy',
        to: 'Warning',
        direction: 'worse',
        detail: 'tier-adjusted score 100 → 77.6',
      },
    ]);
  });

  it('puts worse before better, and an unchanged rule set moves nothing', () => {
    // loose (80/86/99): alpha 75 is green, Healthy as before; charlie 85 → 100 − 40×5/6 = 66.7 → 76.7 Warning (was Critical: better)
    const loose = healthImpact(fleet, disk(70, 80, 90), disk(80, 86, 99), NOW);
    expect(loose.changes.map((c) => [c.cluster_name, c.from, c.to, c.direction])).toEqual([['charlie', 'Critical', 'Warning', 'better']]);
    const mixed = healthImpact(fleet, disk(60, 70, 80), disk(80, 86, 99), NOW);
    // live 60/70/80: alpha 75 → 40 → 58 Critical → loose Healthy (better); bravo 58 green both; charlie 85 → past red 5/10: 10 → 37 Critical → Warning (better)
    expect(mixed.changes.map((c) => c.cluster_name)).toEqual(['alpha', 'charlie']);
    const tight = healthImpact(fleet, disk(80, 86, 99), disk(60, 70, 80), NOW);
    expect(tight.changes.every((c) => c.direction === 'worse')).toBe(true);
    // Both ways in one preview: bravo (58, green under 60) gets worse and comes first, though alpha is first by name.
    const both = healthImpact(fleet, disk(60, 70, 80), disk(50, 60, 99), NOW);
    expect(both.changes.map((c) => [c.cluster_name, c.direction])).toEqual([
      ['bravo', 'worse'],
      ['alpha', 'better'],
    ]);
    expect(healthImpact(fleet, disk(70, 80, 90), disk(70, 80, 90), NOW)).toMatchObject({ changed_count: 0, changes: [] });
  });
  it('says which threshold moved a cluster whose score stays: a change of the classification alone', () => {
    // live: alpha 86 Healthy, bravo 100 Healthy, charlie 58 Critical, delta 100 Healthy
    const rules = disk(70, 80, 90);
    const strict = { ...rules, classification: { healthy: 90, warning: 60 } };
    const impact = healthImpact(fleet, rules, strict, NOW);
    // "tier-adjusted score 86 → 86" beside Healthy → Warning gave no reason: the threshold is the reason.
    expect(impact.changes).toEqual([
      expect.objectContaining({
        cluster_name: 'alpha',
        from: 'Healthy',
        to: 'Warning',
        detail: 'tier-adjusted score 86, unchanged; the Healthy threshold 80 → 90',
      }),
    ]);
    // Both bounds crossed (Critical → Healthy), each one that moved named; a bound not crossed is not.
    const lenient = healthImpact(fleet, rules, { ...rules, classification: { healthy: 55, warning: 50 } }, NOW);
    expect(lenient.changes.map((c) => [c.cluster_name, c.from, c.to, c.detail])).toEqual([
      ['charlie', 'Critical', 'Healthy', 'tier-adjusted score 58, unchanged; the Healthy threshold 80 → 55; the Warning threshold 60 → 50'],
    ]);
    const onlyWarning = healthImpact(fleet, rules, { ...rules, classification: { healthy: 80, warning: 55 } }, NOW);
    expect(onlyWarning.changes.map((c) => c.detail)).toEqual(['tier-adjusted score 58, unchanged; the Warning threshold 60 → 55']);
    // A score that moves under a threshold that did not keeps the score's words alone.
    const both = healthImpact(fleet, rules, { ...disk(50, 60, 70), classification: { healthy: 80, warning: 30 } }, NOW);
    expect(both.changes.find((c) => c.cluster_name === 'alpha')?.detail).toBe('tier-adjusted score 86 → 37');
  });
});

describe('risk rules impact', () => {
  it('lists the clusters whose risk level changes, with the new worst signal', () => {
    const live = riskRules([riskRule({ metric_key: 'disk_used_pct', warning: 80, critical: 90 })]);
    const tight = riskRules([riskRule({ metric_key: 'disk_used_pct', warning: 60, critical: 74 })]);
    const impact = riskImpact(fleet, live, tight, NOW);
    // alpha 75: Healthy → Critical; charlie 85: Warning → Critical; bravo 58, delta 40 stay Healthy
    expect(impact).toMatchObject({
      measure: 'risk_level',
      changed_count: 2,
      before: { Healthy: 3, Warning: 1, Critical: 0 },
      after: { Healthy: 2, Warning: 0, Critical: 2 },
    });
    expect(impact.changes.map((c) => [c.cluster_name, c.from, c.to])).toEqual([
      ['alpha', 'Healthy', 'Critical'],
      ['charlie', 'Warning', 'Critical'],
    ]);
    expect(impact.changes[0]!.detail).toMatch(/disk_used_pct|Disk/i);
  });
});
