// Every number a valid rule set can hold is bounded, and the engine never
// emits NaN, ±Infinity or null where a number is expected (issue 15 point 4).
// Rule sets are generated across the schema's whole ranges (extremes included:
// weights of 100 or 0.001, thresholds ±1e15 or a hair apart, multipliers 0..10,
// a million alerts per band) and checked by the schema itself; fleets carry
// stored rollups anywhere in the finite double range.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { METRIC_KEYS, type MetricKey } from '../../shared/fleet/records.js';
import type { MetricRollup } from '../../shared/fleet/rollup.js';
import { HealthRules, LIMITS, RiskRules, type ScoringRules, type RiskRuleSet } from '../../shared/rules/schemas.js';
import { breakingPoints, usage } from '../../shared/scoring/analysis.js';
import { criticalClusters } from '../../shared/scoring/critical.js';
import { fleetKpis, mean, scoreFleet, unifiedScore } from '../../shared/scoring/fleet-score.js';
import { healthKpis, healthScores } from '../../shared/scoring/health-score.js';
import { healthImpact, riskImpact } from '../../shared/scoring/impact.js';
import type { ClusterData } from '../../shared/scoring/inputs.js';
import { riskSnapshot, riskSummary } from '../../shared/scoring/risk.js';
import { alert, clusterRecord, daysAgo, defaultHealthRules, defaultRiskRules, hoursAgo, NOW } from './fixtures.js';

const T = LIMITS.threshold;
const metricKey = fc.constantFrom(...METRIC_KEYS);
const aggregation = fc.constantFrom('max', 'min', 'avg', 'last', 'sum' as const);
/** Any number in a range, biased to its ends and to zero. */
const inRange = (min: number, max: number) =>
  fc.oneof(
    fc.constantFrom(min, max),
    fc.double({ min, max, noNaN: true }),
    fc.integer({ min: Math.ceil(Math.max(min, -1e6)), max: Math.floor(Math.min(max, 1e6)) }),
  );

/** Three ordered thresholds anywhere in ±1e15, sometimes a hair apart. */
const ordered3 = fc
  .tuple(inRange(-T, T), inRange(-T, T), inRange(-T, T), fc.boolean())
  .map(([a, b, c, inverted]) => {
    const [lo, mid, hi] = [a, b, c].sort((x, y) => x - y) as [number, number, number];
    const up = Math.max(lo, -T);
    const m = mid > up ? mid : up + Math.max(Math.abs(up) * 1e-15, 1e-9);
    const h = hi > m ? hi : m + Math.max(Math.abs(m) * 1e-15, 1e-9);
    return inverted ? { green: h, yellow: m, red: up, inverted } : { green: up, yellow: m, red: h, inverted };
  })
  .filter((t) => [t.green, t.yellow, t.red].every((v) => Math.abs(v) <= T));

const dimension = fc
  .record({ metric_key: metricKey, t: ordered3, weight: inRange(LIMITS.minDimensionWeight, LIMITS.weight), aggregation })
  .map(({ metric_key, t, weight, aggregation: agg }) => ({
    metric_key,
    display_name: `D ${metric_key}`,
    category: 'c',
    weight,
    ...t,
    aggregation: agg,
    action: `Fix ${metric_key}.`,
  }));

const bands = fc
  .tuple(
    fc.uniqueArray(fc.oneof(fc.constant(LIMITS.maxAlerts), fc.integer({ min: 0, max: LIMITS.maxAlerts }), fc.integer({ min: 0, max: 5 })), { maxLength: 6 }),
    fc.array(inRange(0, 100), { minLength: 7, maxLength: 7 }),
  )
  .map(([maxes, scores]) => {
    const m = [...maxes].sort((a, b) => a - b);
    const s = [...scores].sort((a, b) => b - a);
    return [...m.map((max_alerts, i) => ({ max_alerts: max_alerts as number | null, score: s[i]! })), { max_alerts: null, score: s[m.length]! }];
  });

const healthRules: fc.Arbitrary<ScoringRules> = fc
  .record({
    lookback_days: fc.integer({ min: 1, max: LIMITS.lookbackDays }),
    weights: fc.tuple(fc.oneof(fc.constant(0), inRange(0, LIMITS.weight)), inRange(0, LIMITS.weight)).filter(([m, a]) => m + a > 0),
    tiers: fc.tuple(inRange(0, LIMITS.tierMultiplier), inRange(0, LIMITS.tierMultiplier), inRange(0, LIMITS.tierMultiplier)),
    bands,
    classification: fc.tuple(inRange(0, 100), inRange(0, 100)).filter(([a, b]) => a !== b),
    dimensions: fc.uniqueArray(dimension, { minLength: 1, maxLength: METRIC_KEYS.length, selector: (d) => d.metric_key }),
  })
  .map(
    ({ lookback_days, weights: [metrics, alerts], tiers: [S, A, B], bands: alert_bands, classification: [x, y], dimensions }) =>
      // The schema decides: whatever it accepts must score.
      HealthRules.parse({
        scoring: {
          lookback_days,
          weights: { metrics, alerts },
          tier_multipliers: { S, A, B },
          alert_bands,
          classification: { healthy: Math.max(x, y), warning: Math.min(x, y) },
          ai_trigger: { tiers: ['S'], below_score: 60, cooldown_hours: LIMITS.cooldownHours },
          dimensions,
        },
      }).scoring,
  );

const riskRules: fc.Arbitrary<RiskRuleSet> = fc
  .record({
    lookback_days: fc.integer({ min: 1, max: LIMITS.lookbackDays }),
    rules: fc.uniqueArray(fc.record({ metric_key: metricKey, t: ordered3, aggregation }), {
      minLength: 1,
      maxLength: METRIC_KEYS.length,
      selector: (r) => r.metric_key,
    }),
  })
  .map(
    ({ lookback_days, rules }) =>
      RiskRules.parse({
        risk: {
          lookback_days,
          rules: rules.map(({ metric_key, t, aggregation: agg }) => ({
            metric_key,
            category: 'c',
            warning: t.yellow,
            critical: t.red,
            inverted: t.inverted,
            aggregation: agg,
            action: `Act on ${metric_key}.`,
          })),
        },
      }).risk,
  );

/** A stored day's figures: any finite doubles (huge, tiny, negative), as DynamoDB can hold them. */
const anyFinite = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE, 0, 1e15, -1e15),
  fc.integer({ min: -1000, max: 1000 }),
);
const part = fc
  .record({ min: anyFinite, max: anyFinite, sum: anyFinite, count: fc.integer({ min: 1, max: 100_000 }), last: anyFinite })
  .map((p): MetricRollup => ({ ...p, last_at: '2026-11-20T00:00:00.000Z' }));

const cluster = fc.record({
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,7}$/),
  tier: fc.constantFrom('S', 'A', 'B' as const),
  days: fc.array(fc.tuple(fc.integer({ min: 0, max: 35 }), fc.dictionary(metricKey, part, { maxKeys: 6 })), { maxLength: 8 }),
  alerts: fc.array(fc.record({ hours: fc.integer({ min: 0, max: 24 * 20 }), firing: fc.boolean() }), { maxLength: 30 }),
});

const fleet = fc.uniqueArray(cluster, { maxLength: 12, selector: (c) => c.name }).map((specs) =>
  specs.map(({ name, tier, days, alerts }): ClusterData => {
    const record = clusterRecord(name, { customer_tier: tier });
    const byDay = new Map(days.map(([d, metrics]) => [daysAgo(d), metrics as Partial<Record<MetricKey, MetricRollup>>]));
    return {
      cluster: record,
      rollups: [...byDay].map(([day, metrics]) => ({ cluster_id: record.cluster_id, day, metrics })),
      alerts: alerts.map((a, i) => alert(record.cluster_id, `A${i % 4}`, hoursAgo(a.hours + i / 100), a.firing ? 'Firing' : 'Resolved')),
    };
  }),
);

const score = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 100;
const LEVELS = ['Healthy', 'Warning', 'Critical'];

/** Every number anywhere in an answer is finite, so JSON keeps it a number (NaN and ±Infinity would become null). */
function expectAllFinite(value: unknown, path = 'answer'): void {
  if (typeof value === 'number') {
    expect(Number.isFinite(value), `${path} = ${value}`).toBe(true);
  } else if (Array.isArray(value)) for (const [i, v] of value.entries()) expectAllFinite(v, `${path}[${i}]`);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) expectAllFinite(v, `${path}.${k}`);
}

describe('valid rule sets can never make the engine emit NaN, Infinity or null', () => {
  it('every score in 0..100, every level valid, every number finite: fleet, health, risk, critical, analysis, impact', () => {
    fc.assert(
      fc.property(healthRules, riskRules, fleet, (health, risk, data) => {
        const scores = scoreFleet(data, health, NOW);
        for (const s of scores) {
          for (const n of [s.overall_score, s.metrics_score, s.alerts_score, s.tier_adjusted_score]) expect(score(n), `${s.cluster_name}: ${n}`).toBe(true);
          for (const d of s.dimension_scores) expect(score(d.score)).toBe(true);
          expect(LEVELS).toContain(s.classification);
        }
        const metricsOnly = healthScores(data, health, NOW);
        for (const h of metricsOnly) {
          expect(score(h.overall_score)).toBe(true);
          expect(LEVELS).toContain(h.classification);
        }
        const overall = new Map(scores.map((s) => [s.cluster_id, s.overall_score]));
        const snapshots = data.map((d) => riskSnapshot(d, risk, overall.get(d.cluster.cluster_id)!, NOW));
        for (const r of snapshots) {
          expect(LEVELS).toContain(r.risk_level);
          expect(score(r.overall_score)).toBe(true);
        }
        const answers = {
          scores,
          kpis: fleetKpis(scores),
          metricsOnly,
          healthKpis: healthKpis(metricsOnly, data, health, NOW),
          snapshots,
          summary: riskSummary(snapshots),
          critical: criticalClusters(data, snapshots, scores, health, NOW),
          breaking: breakingPoints(snapshots, risk),
          usage: usage(data, scores, health, risk, NOW),
          healthImpact: healthImpact(data, defaultHealthRules(), health, NOW),
          riskImpact: riskImpact(data, defaultRiskRules(), risk, NOW),
        };
        for (const n of [answers.kpis.avg_score, answers.kpis.avg_metrics_score, answers.kpis.avg_alerts_score, answers.healthKpis.avg_score])
          expect(score(n)).toBe(true);
        expectAllFinite(answers);
      }),
      { numRuns: 300 },
    );
  });

  it('the weights that broke refresh (1e308 each) are refused; the largest valid ones score like equal weights', () => {
    const rules = defaultHealthRules();
    const refused = HealthRules.safeParse({ scoring: { ...rules, weights: { metrics: 1.0e308, alerts: 1.0e308 } } });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual(['scoring', 'weights', 'metrics']);
    // The engine itself is safe whatever it is handed: weights are divided by the larger one first.
    expect(unifiedScore(80, 20, { metrics: 1.0e308, alerts: 1.0e308 })).toBe(50);
    expect(unifiedScore(80, 20, { metrics: Number.MAX_VALUE, alerts: 1 })).toBe(80);
    expect(unifiedScore(80, 20, { metrics: 5e-324, alerts: 0 })).toBe(80);
    expect(unifiedScore(Number.NaN, 20, { metrics: 1, alerts: 1 })).toBe(0);
  });

  it('every number in the three schemas has a bound: out-of-range values are refused with their path', () => {
    const health = { scoring: defaultHealthRules() };
    const risk = { risk: defaultRiskRules() };
    const tooBig: [typeof HealthRules | typeof RiskRules, unknown, (string | number)[]][] = [
      [HealthRules, { scoring: { ...health.scoring, weights: { metrics: 101, alerts: 1 } } }, ['scoring', 'weights', 'metrics']],
      [HealthRules, { scoring: { ...health.scoring, tier_multipliers: { S: 11, A: 1, B: 1 } } }, ['scoring', 'tier_multipliers', 'S']],
      [
        HealthRules,
        {
          scoring: {
            ...health.scoring,
            alert_bands: [
              { max_alerts: 1_000_001, score: 50 },
              { max_alerts: null, score: 0 },
            ],
          },
        },
        ['scoring', 'alert_bands', 0, 'max_alerts'],
      ],
      [HealthRules, { scoring: { ...health.scoring, dimensions: [{ ...health.scoring.dimensions[0]!, red: 1e16 }] } }, ['scoring', 'dimensions', 0, 'red']],
      [
        HealthRules,
        { scoring: { ...health.scoring, dimensions: [{ ...health.scoring.dimensions[0]!, weight: 1e-9 }] } },
        ['scoring', 'dimensions', 0, 'weight'],
      ],
      [RiskRules, { risk: { ...risk.risk, rules: [{ ...risk.risk.rules[0]!, critical: -1e300, inverted: true }] } }, ['risk', 'rules', 0, 'critical']],
    ];
    for (const [schema, value, path] of tooBig) {
      const parsed = schema.safeParse(value);
      expect(parsed.success, JSON.stringify(path)).toBe(false);
      expect(parsed.error?.issues[0]?.path).toEqual(path);
    }
  });

  it('no alert bands at all is refused with its one issue: the refinements after the length check do not throw on it', () => {
    const parsed = HealthRules.safeParse({ scoring: { ...defaultHealthRules(), alert_bands: [] } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path, i.message])).toEqual([[['scoring', 'alert_bands'], 'Too small: expected array to have >=1 items']]);
  });

  it('a mean of values near the double range does not overflow', () => {
    expect(mean([Number.MAX_VALUE, Number.MAX_VALUE])).toBe(Number.MAX_VALUE);
    expect(mean([1, 2])).toBe(1.5);
  });
});
