// The building blocks of the unified score, against the curve documented in
// rules/health-rules.yaml: one dimension's score and status, the alert bands
// and the classification thresholds. Every expectation is worked out by hand
// from the documented formula, never by calling the engine.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dimensionScore, dimensionStatus } from '../../shared/scoring/dimensions.js';
import { alertsScore, classify } from '../../shared/scoring/fleet-score.js';
import { DEFAULT_BANDS, defaultHealthRules } from './fixtures.js';

const disk = { green: 70, yellow: 80, red: 90, inverted: false };
/** Lower is worse: e.g. live nodes or free space. green > yellow > red. */
const freeSpace = { green: 50, yellow: 30, red: 20, inverted: true };
/** Uneven spans: green→yellow 400, yellow→red 500. */
const compaction = { green: 100, yellow: 500, red: 1000, inverted: false };

describe('dimensionScore: the documented curve', () => {
  it.each([
    [0, 100], // far on the good side
    [60, 100],
    [70, 100], // at green
    [75, 80], // 100 − 40 × (75 − 70) / (80 − 70)
    [78, 68], // 100 − 40 × 8 / 10
    [80, 60], // at yellow
    [84, 44], // 60 − 40 × (84 − 80) / (90 − 80)
    [87, 32], // 60 − 40 × 7 / 10
    [90, 20], // at red
    [95, 10], // 20 − 20 × (95 − 90) / (90 − 80)
    [100, 0], // red + (red − yellow): reaches 0
    [150, 0], // far beyond: clamped at 0, never negative
    [1e9, 0],
  ])('green 70 / yellow 80 / red 90: value %d scores %d', (value, expected) => {
    expect(dimensionScore(disk, value)).toBeCloseTo(expected, 10);
  });

  it.each([
    [100, 100],
    [50, 100], // at green
    [40, 80], // 100 − 40 × (50 − 40) / (50 − 30)
    [30, 60], // at yellow
    [25, 40], // 60 − 40 × (30 − 25) / (30 − 20)
    [20, 20], // at red
    [15, 10], // 20 − 20 × (20 − 15) / (30 − 20)
    [10, 0], // red − (yellow − red): reaches 0
    [-50, 0], // clamped
  ])('inverted green 50 / yellow 30 / red 20: value %d scores %d', (value, expected) => {
    expect(dimensionScore(freeSpace, value)).toBeCloseTo(expected, 10);
  });

  it.each([
    [100, 100],
    [300, 80], // 100 − 40 × 200 / 400
    [500, 60],
    [750, 40], // 60 − 40 × 250 / 500
    [1000, 20],
    [1250, 10], // 20 − 20 × 250 / 500
    [1500, 0],
    [1501, 0],
  ])('uneven spans (green 100 / yellow 500 / red 1000): value %d scores %d', (value, expected) => {
    expect(dimensionScore(compaction, value)).toBeCloseTo(expected, 10);
  });

  it('inversion mirrors the curve: an inverted rule scores v as the plain rule scores −v', () => {
    const plain = { green: -50, yellow: -30, red: -20, inverted: false };
    for (const v of [60, 50, 45, 30, 27.5, 20, 12, 10, 0]) expect(dimensionScore(freeSpace, v)).toBeCloseTo(dimensionScore(plain, -v), 10);
  });
});

describe('dimensionStatus', () => {
  it.each([
    [50, 'healthy'],
    [70, 'healthy'], // at green is still healthy
    [70.01, 'watch'],
    [79.99, 'watch'],
    [80, 'warning'], // at yellow
    [89.99, 'warning'],
    [90, 'critical'], // at red
    [1000, 'critical'],
  ])('green 70 / yellow 80 / red 90: value %d is %s', (value, status) => {
    expect(dimensionStatus(disk, value)).toBe(status);
  });

  it.each([
    [80, 'healthy'],
    [50, 'healthy'],
    [49.99, 'watch'],
    [30, 'warning'],
    [20.01, 'warning'],
    [20, 'critical'],
    [-5, 'critical'],
  ])('inverted green 50 / yellow 30 / red 20: value %d is %s', (value, status) => {
    expect(dimensionStatus(freeSpace, value)).toBe(status);
  });
});

describe('alertsScore: the first band whose max_alerts covers the count', () => {
  it.each([
    [0, 100],
    [1, 80],
    [2, 80], // max_alerts is inclusive
    [3, 50],
    [5, 50],
    [6, 25],
    [10, 25],
    [11, 0], // null: any more
    [10_000, 0],
  ])('default bands: %d alerts score %d', (count, expected) => {
    expect(alertsScore(DEFAULT_BANDS, count)).toBe(expected);
  });

  it('the shipped default bands are the ones documented in the YAML', () => {
    expect(defaultHealthRules().alert_bands).toEqual(DEFAULT_BANDS);
  });

  it('custom bands: the null band takes everything past the last bounded band', () => {
    const bands = [
      { max_alerts: 0, score: 100 },
      { max_alerts: 3, score: 70 },
      { max_alerts: null, score: 10 },
    ];
    expect(alertsScore(bands, 0)).toBe(100);
    expect(alertsScore(bands, 3)).toBe(70);
    expect(alertsScore(bands, 4)).toBe(10);
    expect(alertsScore([{ max_alerts: null, score: 42 }], 0)).toBe(42);
  });
});

describe('classify: ≥ healthy → Healthy, ≥ warning → Warning, else Critical', () => {
  const thresholds = { healthy: 80, warning: 60 };
  it.each([
    [100, 'Healthy'],
    [80, 'Healthy'],
    [79.9, 'Warning'],
    [60, 'Warning'],
    [59.9, 'Critical'],
    [0, 'Critical'],
  ] as const)('%d is %s', (score, expected) => {
    expect(classify(score, thresholds)).toBe(expected);
  });
});

describe('dimension properties', () => {
  /** A valid rule: three increasing thresholds (decreasing when inverted). */
  const ruleArb = fc
    .tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 500 }), fc.boolean())
    .map(([g, a, b, inverted]) => (inverted ? { green: g, yellow: g - a, red: g - a - b, inverted } : { green: g, yellow: g + a, red: g + a + b, inverted }));
  const valueArb = fc.double({ min: -1e6, max: 1e6, noNaN: true });

  it('scores stay within 0..100 for any value', () => {
    fc.assert(
      fc.property(ruleArb, valueArb, (rule, v) => {
        const s = dimensionScore(rule, v);
        return Number.isFinite(s) && s >= 0 && s <= 100;
      }),
    );
  });

  it('a worse value never scores higher, and its status is never better', () => {
    const rank = { healthy: 0, watch: 1, warning: 2, critical: 3 };
    fc.assert(
      fc.property(ruleArb, valueArb, fc.double({ min: 0, max: 1e4, noNaN: true }), (rule, v, delta) => {
        const worse = rule.inverted ? v - delta : v + delta;
        expect(dimensionScore(rule, worse)).toBeLessThanOrEqual(dimensionScore(rule, v) + 1e-9);
        expect(rank[dimensionStatus(rule, worse)]).toBeGreaterThanOrEqual(rank[dimensionStatus(rule, v)]);
      }),
    );
  });

  it('status agrees with the score bands: healthy 100, watch 60..100, warning 20..60, critical 0..20', () => {
    const bands = { healthy: [100, 100], watch: [60, 100], warning: [20, 60], critical: [0, 20] } as const;
    fc.assert(
      fc.property(ruleArb, valueArb, (rule, v) => {
        const s = dimensionScore(rule, v);
        const [lo, hi] = bands[dimensionStatus(rule, v)];
        expect(s).toBeGreaterThanOrEqual(lo - 1e-9);
        expect(s).toBeLessThanOrEqual(hi + 1e-9);
      }),
    );
  });
});
