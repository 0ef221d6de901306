// Property tests (fast-check) of the whole engine over random valid rule sets
// and random fleets: scores stay within 0..100, a worse metric (or more alerts,
// or a bigger tier multiplier) never improves a score, counts add up, orders
// hold, and missing data never crashes anything.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { METRIC_KEYS, type MetricKey } from '../../shared/fleet/records.js';
import {
  HealthRules,
  RiskRules,
  type Aggregation,
  type DimensionRule,
  type RiskRule,
  type RiskRuleSet,
  type ScoringRules,
} from '../../shared/rules/schemas.js';
import { breakingPoints, upgrades, usage } from '../../shared/scoring/analysis.js';
import { criticalClusters } from '../../shared/scoring/critical.js';
import { classify, fleetKpis, scoreCluster, scoreFleet, type Classification } from '../../shared/scoring/fleet-score.js';
import { healthKpis, healthScore, healthScores } from '../../shared/scoring/health-score.js';
import type { ClusterData } from '../../shared/scoring/inputs.js';
import { riskSnapshot, riskSummary, sortSnapshots, type RiskLevel } from '../../shared/scoring/risk.js';
import { alert, clusterRecord, daysAgo, defaultHealthRules, defaultRiskRules, hoursAgo, NOW, rollup, type DaySamples } from './fixtures.js';

const RUNS = { numRuns: 200 };
const CLASS_RANK: Record<Classification, number> = { Healthy: 0, Warning: 1, Critical: 2 };
const LEVEL_RANK: Record<RiskLevel, number> = { Healthy: 0, Warning: 1, Critical: 2 };

// ---------- arbitraries ----------

const metricKey = fc.constantFrom(...METRIC_KEYS);
const aggregation = fc.constantFrom<Aggregation>('max', 'min', 'avg', 'last', 'sum');
/** Integer thresholds, ordered as the schema demands. */
const thresholds = fc
  .tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 500 }), fc.boolean())
  .map(([g, a, b, inverted]) => (inverted ? { green: g, yellow: g - a, red: g - a - b, inverted } : { green: g, yellow: g + a, red: g + a + b, inverted }));

const dimensionArb = fc.record({ metric_key: metricKey, t: thresholds, weight: fc.integer({ min: 1, max: 100 }), aggregation }).map(
  ({ metric_key, t, weight, aggregation: agg }): DimensionRule => ({
    metric_key,
    display_name: `Dim ${metric_key}`,
    category: 'c',
    weight,
    ...t,
    aggregation: agg,
    action: `Fix ${metric_key}.`,
  }),
);

/** Alert bands with increasing max_alerts and scores that never rise (the schema requires both). */
function bandsArb(_monotone: boolean) {
  return fc
    .tuple(fc.uniqueArray(fc.integer({ min: 0, max: 20 }), { maxLength: 4 }), fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 5, maxLength: 5 }))
    .map(([maxes, scores]) => {
      const sorted = [...maxes].sort((a, b) => a - b);
      const s = [...scores].sort((a, b) => b - a);
      return [...sorted.map((m, i) => ({ max_alerts: m as number | null, score: s[i]! })), { max_alerts: null, score: s[sorted.length]! }];
    });
}

function healthRulesArb(monotoneBands = true): fc.Arbitrary<ScoringRules> {
  return fc
    .record({
      lookback_days: fc.integer({ min: 1, max: 30 }),
      weights: fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 })).filter(([m, a]) => m + a > 0),
      tiers: fc.tuple(fc.double({ min: 0, max: 10, noNaN: true }), fc.double({ min: 0, max: 10, noNaN: true }), fc.double({ min: 0, max: 10, noNaN: true })),
      bands: bandsArb(monotoneBands),
      classification: fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 })).filter(([a, b]) => a !== b),
      dimensions: fc.uniqueArray(dimensionArb, { minLength: 1, maxLength: 8, selector: (d) => d.metric_key }),
    })
    .map(
      ({ lookback_days, weights: [m, a], tiers: [S, A, B], bands, classification: [x, y], dimensions }) =>
        HealthRules.parse({
          scoring: {
            lookback_days,
            weights: { metrics: m, alerts: a },
            tier_multipliers: { S, A, B },
            alert_bands: bands,
            classification: { healthy: Math.max(x, y), warning: Math.min(x, y) },
            ai_trigger: { tiers: ['S'], below_score: 60, cooldown_hours: 24 },
            dimensions,
          },
        }).scoring,
    );
}

const riskRuleArb = fc
  .record({ metric_key: metricKey, w: fc.integer({ min: -1000, max: 1000 }), gap: fc.integer({ min: 1, max: 500 }), inverted: fc.boolean(), aggregation })
  .map(
    ({ metric_key, w, gap, inverted, aggregation: agg }): RiskRule => ({
      metric_key,
      category: 'c',
      warning: w,
      critical: inverted ? w - gap : w + gap,
      inverted,
      aggregation: agg,
      action: `Act on ${metric_key}.`,
    }),
  );

const riskRulesArb: fc.Arbitrary<RiskRuleSet> = fc
  .record({ lookback_days: fc.integer({ min: 1, max: 30 }), rules: fc.uniqueArray(riskRuleArb, { minLength: 1, maxLength: 8, selector: (r) => r.metric_key }) })
  .map((risk) => RiskRules.parse({ risk }).risk);

const value = fc.double({ min: -1e4, max: 1e4, noNaN: true });

interface ClusterSpec {
  name: string;
  tier: 'S' | 'A' | 'B';
  samples: { key: MetricKey; day: number; value: number }[];
  alerts: { hours: number; firing: boolean }[];
  version: string;
  state: string;
}

const clusterSpec: fc.Arbitrary<ClusterSpec> = fc.record({
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,7}$/),
  tier: fc.constantFrom('S', 'A', 'B'),
  samples: fc.array(fc.record({ key: metricKey, day: fc.integer({ min: 0, max: 35 }), value }), { maxLength: 30 }),
  alerts: fc.array(fc.record({ hours: fc.integer({ min: 0, max: 24 * 40 }), firing: fc.boolean() }), { maxLength: 15 }),
  version: fc.tuple(fc.nat(4), fc.nat(12), fc.nat(12)).map((v) => v.join('.')),
  state: fc.constantFrom('RUNNING', 'STOPPED', 'deleted', 'Suspended', 'running'),
});

function build(spec: ClusterSpec): ClusterData {
  const cluster = clusterRecord(spec.name, { customer_tier: spec.tier, engine_version: spec.version, resource_state: spec.state });
  const byDay = new Map<number, DaySamples>();
  for (const s of spec.samples) {
    const day = byDay.get(s.day) ?? {};
    const prev = day[s.key];
    day[s.key] = prev === undefined ? [s.value] : [...(Array.isArray(prev) ? prev : [prev]), s.value];
    byDay.set(s.day, day);
  }
  return {
    cluster,
    rollups: [...byDay].map(([offset, samples]) => rollup(cluster.cluster_id, daysAgo(offset), samples)),
    alerts: spec.alerts.map((a, i) => alert(cluster.cluster_id, `A${i % 3}`, hoursAgo(a.hours + i / 100), a.firing ? 'Firing' : 'Resolved')),
  };
}

const fleetArb = fc.uniqueArray(clusterSpec, { maxLength: 25, selector: (c) => c.name }).map((specs) => specs.map(build));

/** One sample today per metric, so every aggregation reads exactly that value. */
function withValues(values: Partial<Record<MetricKey, number>>, tier: 'S' | 'A' | 'B' = 'B', alertCount = 0, name = 'c'): ClusterData {
  const cluster = clusterRecord(name, { customer_tier: tier });
  return {
    cluster,
    rollups: [rollup(cluster.cluster_id, daysAgo(0), values)],
    alerts: Array.from({ length: alertCount }, (_, i) => alert(cluster.cluster_id, `A${i}`, hoursAgo(1 + i / 60))),
  };
}

const valuesArb = fc.record(Object.fromEntries(METRIC_KEYS.map((k) => [k, value])) as Record<MetricKey, fc.Arbitrary<number>>, { requiredKeys: [] });

const inRange = (n: number) => Number.isFinite(n) && n >= 0 && n <= 100;

// ---------- properties ----------

describe('scores stay within 0..100 and nothing crashes on missing data', () => {
  it('unified score, for any valid rules and any data (sparse, stale, negative, huge)', () => {
    fc.assert(
      fc.property(healthRulesArb(false), clusterSpec, (rules, spec) => {
        const data = build(spec);
        const s = scoreCluster(data, rules, NOW);
        for (const n of [s.overall_score, s.metrics_score, s.alerts_score, s.tier_adjusted_score]) expect(inRange(n)).toBe(true);
        for (const d of s.dimension_scores) expect(inRange(d.score)).toBe(true);
        expect(s.classification).toBe(classify(s.tier_adjusted_score, rules.classification));
        // Scored on the dimensions with data, the others named in risk_reasons; nothing invented.
        const from = daysAgo(rules.lookback_days - 1);
        const hasData = (k: MetricKey) => spec.samples.some((x) => x.key === k && daysAgo(x.day) >= from);
        const present = rules.dimensions.filter((r) => hasData(r.metric_key));
        expect(s.dimension_scores.map((d) => d.metric_key)).toEqual(present.map((r) => r.metric_key));
        for (const r of rules.dimensions.filter((r) => !hasData(r.metric_key))) {
          expect(s.risk_reasons).toContain(`No ${r.display_name} data in the last ${rules.lookback_days} days`);
        }
        if (s.dimension_scores.length) expect(s.top_risk).toMatch(/^.+ \(\d{1,3}\)$/);
        else expect(s.top_risk).toBe('None');
      }),
      RUNS,
    );
  });

  it('health score, risk snapshot, breaking points, usage and upgrades on random fleets', () => {
    fc.assert(
      fc.property(healthRulesArb(false), riskRulesArb, fleetArb, (health, risk, fleet) => {
        const hs = healthScores(fleet, health, NOW);
        for (const h of hs) {
          expect(inRange(h.overall_score)).toBe(true);
          for (const d of h.dimension_scores) expect(inRange(d.score)).toBe(true);
          for (const v of Object.values(h.risk_metrics)) expect(v === null || Number.isFinite(v)).toBe(true);
        }
        const scores = scoreFleet(fleet, health, NOW);
        const snaps = fleet.map((d) => riskSnapshot(d, risk, scores.find((s) => s.cluster_id === d.cluster.cluster_id)!.overall_score, NOW));
        const bp = breakingPoints(snaps, risk);
        expect(bp.thresholds).toHaveLength(risk.rules.length);
        for (const t of bp.thresholds) expect(t.count).toBe(t.clusters.length);
        expect(bp.details).toHaveLength(bp.thresholds.reduce((n, t) => n + t.count, 0));
        const u = usage(fleet, scores, health, risk, NOW);
        expect(u.compaction_bars.length).toBeLessThanOrEqual(20);
        expect(u.qps_bars.length).toBeLessThanOrEqual(20);
        expect(u.latency_trend.length).toBeLessThanOrEqual(20);
        const up = upgrades(fleet);
        expect(up.clusters.every((c) => c.resource_state.toUpperCase() === 'RUNNING')).toBe(true);
        expect(new Set(up.available_versions).size).toBe(up.available_versions.length);
      }),
      { numRuns: 100 },
    );
  });
});

describe('a worse metric never improves a score', () => {
  it('unified and health scores, classification (random rules, inverted or not)', () => {
    fc.assert(
      fc.property(
        healthRulesArb(),
        valuesArb,
        fc.nat(),
        fc.double({ min: 0, max: 5000, noNaN: true }),
        fc.constantFrom('S', 'A', 'B'),
        fc.nat(12),
        (rules, values, pick, delta, tier, alertCount) => {
          const rule = rules.dimensions[pick % rules.dimensions.length]!;
          const base = values[rule.metric_key] ?? 0;
          const worseValues = { ...values, [rule.metric_key]: rule.inverted ? base - delta : base + delta };
          const before = scoreCluster(withValues({ ...values, [rule.metric_key]: base }, tier, alertCount), rules, NOW);
          const after = scoreCluster(withValues(worseValues, tier, alertCount), rules, NOW);
          expect(after.metrics_score).toBeLessThanOrEqual(before.metrics_score);
          expect(after.overall_score).toBeLessThanOrEqual(before.overall_score);
          expect(after.tier_adjusted_score).toBeLessThanOrEqual(before.tier_adjusted_score);
          expect(CLASS_RANK[after.classification]).toBeGreaterThanOrEqual(CLASS_RANK[before.classification]);
          const hBefore = healthScore(withValues({ ...values, [rule.metric_key]: base }), rules, NOW);
          const hAfter = healthScore(withValues(worseValues), rules, NOW);
          expect(hAfter.overall_score).toBeLessThanOrEqual(hBefore.overall_score);
          expect(CLASS_RANK[hAfter.classification]).toBeGreaterThanOrEqual(CLASS_RANK[hBefore.classification]);
        },
      ),
      RUNS,
    );
  });

  it('with the shipped default rules: raising any dimension metric never raises the score', () => {
    const rules = defaultHealthRules();
    const scaled = fc.record(
      Object.fromEntries(
        rules.dimensions.map((d) => [d.metric_key, fc.integer({ min: 0, max: Math.ceil((2 * d.red - d.yellow) * 12) }).map((n) => n / 10)]),
      ) as Record<MetricKey, fc.Arbitrary<number>>,
    );
    fc.assert(
      fc.property(scaled, fc.nat(rules.dimensions.length - 1), fc.integer({ min: 0, max: 5000 }), fc.constantFrom('S', 'A', 'B'), (values, k, delta, tier) => {
        const key = rules.dimensions[k]!.metric_key;
        const before = scoreCluster(withValues(values, tier), rules, NOW);
        const after = scoreCluster(withValues({ ...values, [key]: values[key]! + delta / 10 }, tier), rules, NOW);
        expect(after.tier_adjusted_score).toBeLessThanOrEqual(before.tier_adjusted_score);
        expect(CLASS_RANK[after.classification]).toBeGreaterThanOrEqual(CLASS_RANK[before.classification]);
      }),
      RUNS,
    );
  });

  it('risk snapshot: level never better, signals never fewer (random rules, inverted or not)', () => {
    fc.assert(
      fc.property(riskRulesArb, valuesArb, fc.nat(), fc.double({ min: 0, max: 5000, noNaN: true }), (rules, values, pick, delta) => {
        const rule = rules.rules[pick % rules.rules.length]!;
        const base = values[rule.metric_key] ?? 0;
        const before = riskSnapshot(withValues({ ...values, [rule.metric_key]: base }), rules, 50, NOW);
        const after = riskSnapshot(withValues({ ...values, [rule.metric_key]: rule.inverted ? base - delta : base + delta }), rules, 50, NOW);
        expect(LEVEL_RANK[after.risk_level]).toBeGreaterThanOrEqual(LEVEL_RANK[before.risk_level]);
        expect(after.risk_signals.length).toBeGreaterThanOrEqual(before.risk_signals.length);
      }),
      RUNS,
    );
  });

  it('more alerts never improve the score (bands whose scores do not rise)', () => {
    fc.assert(
      fc.property(healthRulesArb(true), valuesArb, fc.nat(20), fc.nat(20), (rules, values, n, more) => {
        const before = scoreCluster(withValues(values, 'S', n), rules, NOW);
        const after = scoreCluster(withValues(values, 'S', n + more), rules, NOW);
        expect(after.alerts_score).toBeLessThanOrEqual(before.alerts_score);
        expect(after.tier_adjusted_score).toBeLessThanOrEqual(before.tier_adjusted_score);
      }),
      RUNS,
    );
  });

  it('a bigger tier multiplier never improves tier_adjusted_score', () => {
    fc.assert(
      fc.property(
        healthRulesArb(),
        valuesArb,
        fc.double({ min: 0, max: 10, noNaN: true }),
        fc.double({ min: 0, max: 10, noNaN: true }),
        (rules, values, x, y) => {
          const [lo, hi] = x <= y ? [x, y] : [y, x];
          const at = (m: number) => scoreCluster(withValues(values, 'S'), { ...rules, tier_multipliers: { ...rules.tier_multipliers, S: m } }, NOW);
          expect(at(hi).tier_adjusted_score).toBeLessThanOrEqual(at(lo).tier_adjusted_score);
        },
      ),
      RUNS,
    );
  });
});

describe('counts add up and orders hold on random fleets', () => {
  it('fleet KPIs, health KPIs and the risk summary add up to total_clusters', () => {
    fc.assert(
      fc.property(healthRulesArb(false), riskRulesArb, fleetArb, (health, risk, fleet) => {
        const scores = scoreFleet(fleet, health, NOW);
        const k = fleetKpis(scores);
        expect(k.total_clusters).toBe(fleet.length);
        expect(k.healthy_count + k.warning_count + k.critical_count).toBe(k.total_clusters);
        expect(k.tier_s_at_risk).toBeLessThanOrEqual(fleet.filter((d) => d.cluster.customer_tier === 'S').length);
        expect(k.tier_s_at_risk).toBeLessThanOrEqual(k.warning_count + k.critical_count);
        for (const n of [k.avg_score, k.avg_metrics_score, k.avg_alerts_score]) expect(inRange(n)).toBe(true);

        const hs = healthScores(fleet, health, NOW);
        const hk = healthKpis(hs, fleet, health, NOW);
        expect(hk.healthy_count + hk.warning_count + hk.critical_count).toBe(hk.total_clusters);
        expect(hk.total_clusters).toBe(fleet.length);

        const snaps = fleet.map((d) => riskSnapshot(d, risk, scores.find((s) => s.cluster_id === d.cluster.cluster_id)!.overall_score, NOW));
        const rs = riskSummary(snaps);
        expect(rs.critical + rs.warning + rs.healthy).toBe(rs.total);
        expect(rs.total).toBe(fleet.length);

        const cc = criticalClusters(fleet, snaps, scores, health, NOW);
        expect(cc.total_critical).toBe(rs.critical);
        expect(cc.total_warning).toBe(rs.warning);
        expect(cc.clusters.length).toBe(Math.min(15, rs.critical + rs.warning));
      }),
      { numRuns: 100 },
    );
  });

  it('worst first: ascending score, ties by cluster name (fleet, health, snapshots, critical)', () => {
    const byName = (a: string, b: string) => a.localeCompare(b);
    fc.assert(
      fc.property(healthRulesArb(false), riskRulesArb, fleetArb, (health, risk, fleet) => {
        const scores = scoreFleet(fleet, health, NOW);
        for (let i = 1; i < scores.length; i++) {
          const [a, b] = [scores[i - 1]!, scores[i]!];
          expect(
            a.tier_adjusted_score < b.tier_adjusted_score || (a.tier_adjusted_score === b.tier_adjusted_score && byName(a.cluster_name, b.cluster_name) < 0),
          ).toBe(true);
        }
        const hs = healthScores(fleet, health, NOW);
        for (let i = 1; i < hs.length; i++) {
          const [a, b] = [hs[i - 1]!, hs[i]!];
          expect(a.overall_score < b.overall_score || (a.overall_score === b.overall_score && byName(a.cluster_name, b.cluster_name) < 0)).toBe(true);
        }
        const snaps = sortSnapshots(fleet.map((d) => riskSnapshot(d, risk, scores.find((s) => s.cluster_id === d.cluster.cluster_id)!.overall_score, NOW)));
        for (let i = 1; i < snaps.length; i++) {
          const [a, b] = [snaps[i - 1]!, snaps[i]!];
          const key = (s: typeof a) => [LEVEL_RANK[s.risk_level] * -1, s.overall_score] as const;
          const [ka, kb] = [key(a), key(b)];
          expect(ka[0] < kb[0] || (ka[0] === kb[0] && (ka[1] < kb[1] || (ka[1] === kb[1] && byName(a.cluster_name, b.cluster_name) < 0)))).toBe(true);
        }
        const cc = criticalClusters(fleet, snaps, scores, health, NOW);
        for (let i = 1; i < cc.clusters.length; i++) {
          const [a, b] = [cc.clusters[i - 1]!, cc.clusters[i]!];
          expect(a.severity_score > b.severity_score || (a.severity_score === b.severity_score && byName(a.cluster_name, b.cluster_name) < 0)).toBe(true);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('critical severity_score = signals × 10 + alert_total + max(0, healthy − overall), alert groups sum to alert_total', () => {
    fc.assert(
      fc.property(healthRulesArb(false), riskRulesArb, fleetArb, (health, risk, fleet) => {
        const scores = scoreFleet(fleet, health, NOW);
        const snaps = fleet.map((d) => riskSnapshot(d, risk, scores.find((s) => s.cluster_id === d.cluster.cluster_id)!.overall_score, NOW));
        for (const c of criticalClusters(fleet, snaps, scores, health, NOW).clusters) {
          const penalty = Math.max(0, health.classification.healthy - c.health.overall_score);
          expect(c.severity_score).toBeCloseTo(c.risk_reasons.length * 10 + c.alert_total + penalty, 1);
          expect(c.alerts.reduce((n, a) => n + a.count, 0)).toBe(c.alert_total);
          for (const a of c.alerts) expect(a.first <= a.last).toBe(true);
          expect(c.risk_level === 'Critical' || c.risk_level === 'Warning').toBe(true);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('the shipped default rule sets also satisfy the count invariants', () => {
    const health = defaultHealthRules();
    const risk = defaultRiskRules();
    fc.assert(
      fc.property(fleetArb, (fleet) => {
        const k = fleetKpis(scoreFleet(fleet, health, NOW));
        expect(k.healthy_count + k.warning_count + k.critical_count).toBe(fleet.length);
        const rs = riskSummary(fleet.map((d) => riskSnapshot(d, risk, 50, NOW)));
        expect(rs.critical + rs.warning + rs.healthy).toBe(fleet.length);
      }),
      { numRuns: 100 },
    );
  });
});
