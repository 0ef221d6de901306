// The columnar aggregates (issue 21 §1): one fold of a cluster's lookback answers
// every metric and aggregation exactly as aggregateWindow does over the rollups,
// whatever the days (missing, out of order, too old) and values (the whole finite
// double range, sums that overflow).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredRollup } from '../../shared/db/metrics.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { average, type DayRollup, mergeSample } from '../../shared/fleet/rollup.js';
import {
  aggregateCluster,
  aggregatedMetric,
  aggregateFleet,
  aggregateWindow,
  lookbackRollups,
  lookbackStart,
  newestSampleAt,
} from '../../shared/scoring/inputs.js';
import { daysAgo, NOW } from './fixtures.js';

const ID = '00000000-0000-4000-8000-00000000bbbb';
const AGGREGATIONS = ['max', 'min', 'avg', 'last', 'sum'] as const;

const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE),
);
const part = fc.record({ min: number, max: number, sum: number, count: fc.integer({ min: 1, max: 10_000 }), last: number, last_at: fc.constant('') });
const dayRollup = fc.dictionary(fc.constantFrom(...METRIC_KEYS), part, { maxKeys: METRIC_KEYS.length });
const rollups = fc
  .uniqueArray(fc.integer({ min: 0, max: 9 }), { maxLength: 10 })
  .chain((days) => fc.tuple(fc.constant(days), fc.array(dayRollup, { minLength: days.length, maxLength: days.length })))
  .map(([days, metrics]): StoredRollup[] =>
    days.map((n, i) => {
      const m = metrics[i]! as DayRollup;
      for (const key in m) m[key as keyof DayRollup]!.last_at = `${daysAgo(n)}T0${n % 10}:00:00Z`;
      return { cluster_id: ID, day: daysAgo(n), metrics: m };
    }),
  );

describe('columnar aggregates', () => {
  it('hold an average within its min and max when the sum is past 2^53 and rounded', () => {
    // 300 samples of 999,999,999,999,999 in a day: the sum rounds, and sum / count read 999999999999999.8.
    const day: DayRollup = {};
    for (let i = 0; i < 300; i++) mergeSample(day, { metric_key: 'max_latency_ms', value: 999_999_999_999_999, at: `${daysAgo(1)}T10:00:00Z` });
    const part = day.max_latency_ms!;
    expect(part.sum / part.count).toBeGreaterThan(part.max);
    expect(average(part)).toBe(999_999_999_999_999);
    const rs: StoredRollup[] = [1, 2].map((n) => ({ cluster_id: ID, day: daysAgo(n), metrics: structuredClone(day) }));
    const from = lookbackStart(7, NOW);
    expect(aggregateWindow(lookbackRollups(rs, from), 'max_latency_ms', 'avg')).toBe(999_999_999_999_999);
    expect(aggregatedMetric(aggregateCluster(rs, from), 'max_latency_ms', 'avg')).toBe(999_999_999_999_999);
  });

  it('answer every metric and aggregation exactly as aggregateWindow, and the same newest sample', () => {
    fc.assert(
      fc.property(rollups, fc.integer({ min: 1, max: 8 }), (rs, days) => {
        const from = lookbackStart(days, NOW);
        const agg = aggregateCluster(rs, from);
        const window = lookbackRollups(rs, from);
        for (const key of METRIC_KEYS)
          for (const how of AGGREGATIONS) expect(Object.is(aggregatedMetric(agg, key, how), aggregateWindow(window, key, how))).toBe(true);
        expect(agg.lastMetricAt).toBe(newestSampleAt(window));
      }),
      { numRuns: 300 },
    );
  });

  it('are the same folded for a fleet in one array as for each cluster alone', () => {
    fc.assert(
      fc.property(fc.array(rollups, { maxLength: 5 }), (fleet) => {
        const from = lookbackStart(7, NOW);
        const data = fleet.map((rs, i) => ({ cluster: { cluster_id: `${i}` } as never, rollups: rs, alerts: [] }));
        const all = aggregateFleet(data, from);
        fleet.forEach((rs, i) => {
          const alone = aggregateCluster(rs, from);
          for (const key of METRIC_KEYS)
            for (const how of AGGREGATIONS) expect(Object.is(aggregatedMetric(all[i]!, key, how), aggregatedMetric(alone, key, how))).toBe(true);
        });
      }),
      { numRuns: 100 },
    );
  });
});
