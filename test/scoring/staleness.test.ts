// Staleness (issue 20 §4): a cluster whose metrics stopped arriving is flagged,
// not scored silently on old data. Its newest sample is the max `last_at` of the
// lookback's rollups; older than the health rules' stale_after_minutes (or none
// at all) → metrics_stale, and the reason comes first in risk_reasons and in the
// risk snapshot's signals. The score itself is computed as before.
import { describe, expect, it } from 'vitest';
import type { StoredRollup } from '../../shared/db/metrics.js';
import type { MetricKey } from '../../shared/fleet/records.js';
import { dayOf, mergeSample, type DayRollup } from '../../shared/fleet/rollup.js';
import { HealthRules } from '../../shared/rules/schemas.js';
import { scoreCluster, scoreFleet } from '../../shared/scoring/fleet-score.js';
import { healthScore } from '../../shared/scoring/health-score.js';
import { newestSampleAt, staleness, staleReason, type ClusterData } from '../../shared/scoring/inputs.js';
import { riskSnapshot } from '../../shared/scoring/risk.js';
import { clusterRecord, defaultHealthRules, dimension, hoursAgo, NOW, riskRule, riskRules, scoringRules } from './fixtures.js';

const DISK = dimension({ metric_key: 'disk_used_pct', display_name: 'Disk Usage', aggregation: 'last' });
const rulesWith = (staleAfterMinutes: number, lookback_days = 7) => scoringRules([DISK], { stale_after_minutes: staleAfterMinutes, lookback_days });
const RULES = rulesWith(180);

/** A cluster whose samples were taken at these times (ISO), rolled up per UTC day as ingest does. */
function sampledAt(name: string, samples: { at: string; value?: number; key?: MetricKey }[]): ClusterData {
  const cluster = clusterRecord(name);
  const days = new Map<string, DayRollup>();
  for (const { at, value = 85, key = 'disk_used_pct' } of samples) {
    const day = dayOf(at);
    if (!days.has(day)) days.set(day, {});
    mergeSample(days.get(day)!, { metric_key: key, value, at });
  }
  const rollups: StoredRollup[] = [...days].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, metrics]) => ({ cluster_id: cluster.cluster_id, day, metrics }));
  return { cluster, rollups, alerts: [] };
}

describe('the newest sample of a cluster', () => {
  it('is the max last_at over every metric of the newest day, in any rollup order', () => {
    const data = sampledAt('n', [
      { at: hoursAgo(50) },
      { at: hoursAgo(26), key: 'qps' },
      { at: '2026-11-20T03:15:00.000Z', key: 'qps' },
      { at: '2026-11-20T05:45:00.000Z', key: 'memory_pct' },
      { at: '2026-11-20T01:00:00.000Z' },
    ]);
    expect(newestSampleAt(data.rollups)).toBe('2026-11-20T05:45:00.000Z');
    expect(newestSampleAt([...data.rollups].reverse())).toBe('2026-11-20T05:45:00.000Z');
    expect(newestSampleAt([])).toBeNull();
    expect(newestSampleAt([{ cluster_id: data.cluster.cluster_id, day: '2026-11-20', metrics: {} }])).toBeNull();
  });

  it('"older than" is strict: exactly at the threshold is still fresh', () => {
    const window = sampledAt('edge', [{ at: hoursAgo(3) }]).rollups;
    expect(staleness(window, 180, 7, NOW)).toEqual({ last_metric_at: hoursAgo(3), metrics_stale: false, reason: undefined });
    expect(staleness(window, 179, 7, NOW)).toEqual({ last_metric_at: hoursAgo(3), metrics_stale: true, reason: 'no metrics since 2026-11-20 09:00 UTC' });
  });

  it('the reason names the minute in UTC, or the lookback when there is no sample', () => {
    expect(staleReason('2026-11-18T07:05:59.999Z', 7)).toBe('no metrics since 2026-11-18 07:05 UTC');
    expect(staleReason(null, 7)).toBe('no metrics in the last 7 UTC days');
    expect(staleReason(null, 1)).toBe('no metrics in the last 1 UTC day');
  });
});

describe('a stale cluster is flagged; its score stands on the data there is', () => {
  it('last sample older than the threshold: flagged, the reason first, the score unchanged', () => {
    const data = sampledAt('silent', [
      { at: hoursAgo(30), value: 84 },
      { at: hoursAgo(5), value: 85 },
    ]);
    const s = scoreCluster(data, RULES, NOW);
    expect(s.last_metric_at).toBe('2026-11-20T07:00:00.000Z');
    expect(s.metrics_stale).toBe(true);
    expect(s.risk_reasons).toEqual(['no metrics since 2026-11-20 07:00 UTC', 'Disk Usage at 85 (yellow >= 80)']);
    // The same cluster under a lenient threshold: every figure but the flag and its reason is the same.
    const lenient = scoreCluster(data, rulesWith(6 * 60), NOW);
    expect(lenient.metrics_stale).toBe(false);
    expect(lenient.risk_reasons).toEqual(['Disk Usage at 85 (yellow >= 80)']);
    const { risk_reasons: _a, metrics_stale: _b, ...figures } = s;
    const { risk_reasons: _c, metrics_stale: _d, ...lenientFigures } = lenient;
    expect(figures).toEqual(lenientFigures);
    expect(s.overall_score).toBe(58); // disk last 85 → 60 − 40 × 5/10 = 40; (40×7 + 100×3)/10
  });

  it('a fresh sample is not flagged and adds no reason', () => {
    const data = sampledAt('live', [{ at: hoursAgo(50) }, { at: hoursAgo(0.5), value: 50 }]);
    const s = scoreCluster(data, RULES, NOW);
    expect(s).toMatchObject({ last_metric_at: hoursAgo(0.5), metrics_stale: false, risk_reasons: [] });
    const h = healthScore(data, RULES, NOW);
    expect(h).toMatchObject({ last_metric_at: hoursAgo(0.5), metrics_stale: false, risk_reasons: [] });
  });

  it('no rollups at all: "no metrics in the last N UTC days", with N the lookback', () => {
    const data = sampledAt('never', []);
    for (const days of [7, 14]) {
      const s = scoreCluster(data, rulesWith(180, days), NOW);
      expect(s).toMatchObject({ last_metric_at: null, metrics_stale: true });
      expect(s.risk_reasons[0]).toBe(`no metrics in the last ${days} UTC days`);
      expect(s.metrics_score).toBe(100); // scored as before: nothing measured, nothing held against it
    }
  });

  it('samples only before the lookback count as none', () => {
    const s = scoreCluster(sampledAt('old', [{ at: hoursAgo(24 * 9) }]), RULES, NOW);
    expect(s).toMatchObject({ last_metric_at: null, metrics_stale: true });
    expect(s.risk_reasons[0]).toBe('no metrics in the last 7 UTC days');
  });

  it('the health score carries the same flag, time and first reason', () => {
    const data = sampledAt('silent', [{ at: hoursAgo(5) }]);
    const s = scoreCluster(data, RULES, NOW);
    const h = healthScore(data, RULES, NOW);
    expect(h.last_metric_at).toBe(s.last_metric_at);
    expect(h.metrics_stale).toBe(true);
    expect(h.risk_reasons[0]).toBe(s.risk_reasons[0]);
    expect(h.risk_reasons[0]).toBe('no metrics since 2026-11-20 07:00 UTC');
  });

  it("the risk snapshot takes the unified score's reason as its first signal", () => {
    const data = sampledAt('silent', [{ at: hoursAgo(5), value: 95 }]);
    const risk = riskRules([riskRule({ metric_key: 'disk_used_pct', warning: 80, critical: 90 })]);
    const s = scoreCluster(data, RULES, NOW);
    const stale = riskSnapshot(data, risk, s.overall_score, NOW, staleReason(s.last_metric_at, RULES.lookback_days));
    expect(stale.metrics_stale).toBe(true);
    expect(stale.risk_signals).toEqual(['no metrics since 2026-11-20 07:00 UTC', 'disk_used_pct last 95 >= critical 90']);
    expect(stale.risk_level).toBe('Critical'); // levels come from the metrics, as before
    const fresh = riskSnapshot(data, risk, s.overall_score, NOW);
    expect(fresh.metrics_stale).toBe(false);
    expect(fresh.risk_signals).toEqual(['disk_used_pct last 95 >= critical 90']);
  });
});

describe('the threshold comes from the health rules', () => {
  it('shipped: 180 minutes; a rule set stored before the field existed loads with the same default', () => {
    const shipped = defaultHealthRules();
    expect(shipped.stale_after_minutes).toBe(180);
    const { stale_after_minutes: _, ...older } = shipped;
    expect(HealthRules.parse({ scoring: older }).scoring.stale_after_minutes).toBe(180);
  });

  it('editing it moves the line: the same cluster is stale under 60 minutes and fresh under 240', () => {
    const data = sampledAt('two-hours', [{ at: hoursAgo(2) }]);
    const shipped = defaultHealthRules();
    expect(scoreCluster(data, shipped, NOW).metrics_stale).toBe(false);
    expect(scoreCluster(data, { ...shipped, stale_after_minutes: 60 }, NOW).metrics_stale).toBe(true);
    expect(scoreCluster(data, HealthRules.parse({ scoring: { ...shipped, stale_after_minutes: 240 } }).scoring, NOW).metrics_stale).toBe(false);
    expect(healthScore(data, { ...shipped, stale_after_minutes: 60 }, NOW).metrics_stale).toBe(true);
  });

  it('is refused outside 5..43200 whole minutes', () => {
    const shipped = defaultHealthRules();
    for (const bad of [4, 43_201, 90.5]) expect(HealthRules.safeParse({ scoring: { ...shipped, stale_after_minutes: bad } }).success).toBe(false);
    for (const ok of [5, 43_200]) expect(HealthRules.safeParse({ scoring: { ...shipped, stale_after_minutes: ok } }).success).toBe(true);
  });

  it('a fleet: only the silent clusters are flagged, the others untouched', () => {
    const fleet = [sampledAt('a-live', [{ at: hoursAgo(1) }]), sampledAt('b-silent', [{ at: hoursAgo(4) }]), sampledAt('c-never', [])];
    const flagged = scoreFleet(fleet, RULES, NOW)
      .filter((s) => s.metrics_stale)
      .map((s) => s.cluster_name)
      .sort();
    expect(flagged).toEqual(['b-silent', 'c-never']);
  });
});
