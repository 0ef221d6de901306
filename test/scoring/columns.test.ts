// The engine folding rollup columns (issue 21 §1): a fleet given as one columns
// object answers exactly what the same fleet given as rollup objects answers,
// aggregate by aggregate and view by view, whatever the days (missing, out of
// order, outside the lookback, before the columns' first day), the rows' order
// and the values (the whole finite double range, sums that overflow in the fold).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { windowDays } from '../../shared/db/days.js';
import type { StoredRollup } from '../../shared/db/metrics.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import {
  columnsFromRollups,
  emptyColumns,
  foldDays,
  METRICS,
  PRESENT,
  SLOTS,
  SUM,
  WindowedColumns,
  type RollupColumns,
} from '../../shared/fleet/rollup-columns.js';
import type { DayRollup } from '../../shared/fleet/rollup.js';
import { breakingPoints, upgrades, usage } from '../../shared/scoring/analysis.js';
import { criticalClusters } from '../../shared/scoring/critical.js';
import { fleetKpis, scoreFleet } from '../../shared/scoring/fleet-score.js';
import { enrichment, healthKpis, healthScores } from '../../shared/scoring/health-score.js';
import { healthImpact, riskImpact } from '../../shared/scoring/impact.js';
import {
  aggregate,
  aggregatedMetric,
  aggregateFleet,
  aggregateOf,
  columnarClusterData,
  lookbackStart,
  METRIC_INDEX,
  type ClusterData,
} from '../../shared/scoring/inputs.js';
import { riskSnapshot, riskSummary, sortSnapshots } from '../../shared/scoring/risk.js';
import { alert, clusterRecord, defaultHealthRules, defaultRiskRules, hoursAgo, NOW } from './fixtures.js';

const AGGREGATIONS = ['max', 'min', 'avg', 'last', 'sum'] as const;
const DAY_MS = 86_400_000;
/** The days the columns hold: today and the 9 before (what a 10-day read holds). */
const READ_DAYS = 10;
const COLUMN_DAYS = windowDays(READ_DAYS, NOW);

const number = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -1000, max: 1000 }),
  // Two of these in one window overflow the fold's sum to ±∞.
  fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE, 1e308),
);
const part = fc.record({
  min: number,
  max: number,
  sum: number,
  count: fc.integer({ min: 1, max: 10_000 }),
  last: number,
  at: fc.integer({ min: 0, max: DAY_MS - 1 }),
});
const dayParts = fc.dictionary(fc.constantFrom(...METRIC_KEYS), part, { maxKeys: METRIC_KEYS.length });
/** One cluster's rollups: some of the read days, in any order, any metrics (an empty day too); samples on their own day, as ingest stores them. */
const clusterRollups = fc
  .uniqueArray(fc.integer({ min: 0, max: READ_DAYS - 1 }), { maxLength: READ_DAYS })
  .chain((days) => fc.tuple(fc.constant(days), fc.array(dayParts, { minLength: days.length, maxLength: days.length })))
  .map(([days, parts]) =>
    days.map((ago, i) => {
      const day = COLUMN_DAYS[READ_DAYS - 1 - ago]!;
      const metrics: DayRollup = {};
      for (const [key, { at, ...p }] of Object.entries(parts[i]!))
        metrics[key as keyof DayRollup] = { ...p, last_at: new Date(Date.parse(`${day}T00:00:00Z`) + at).toISOString() };
      return { day, metrics };
    }),
  );

interface Fleets {
  objects: ClusterData[];
  columns: ClusterData[];
}

/**
 * The same fleet twice: with rollup objects, and as rows of one columns object (rows in
 * `order`'s order, not the fleet's; a cluster without rollups has no row unless `extra`).
 */
function fleets(rollups: { day: string; metrics: DayRollup }[][], order: number[], extra: boolean[], tiers: ('S' | 'A' | 'B')[] = []): Fleets {
  const clusters = rollups.map((_, i) => clusterRecord(`c-${i}`, { customer_tier: tiers[i] ?? 'B' }));
  const stored = rollups.map((rs, i): StoredRollup[] => rs.map((r) => ({ cluster_id: clusters[i]!.cluster_id, ...r })));
  const alerts = clusters.map((c, i) => Array.from({ length: i % 4 }, (_, n) => alert(c.cluster_id, `A${n}`, hoursAgo(1 + n * 40))));
  const rowIds = clusters
    .map((c, i) => ({ id: c.cluster_id, key: order[i] ?? i, row: stored[i]!.length > 0 || extra[i] === true }))
    .filter((r) => r.row)
    .sort((a, b) => a.key - b.key)
    .map((r) => r.id);
  const columns = columnsFromRollups(COLUMN_DAYS, rowIds, stored.flat());
  return {
    objects: clusters.map((cluster, i) => ({ cluster, rollups: stored[i]!, alerts: alerts[i]! })),
    columns: clusters.map((cluster, i) => columnarClusterData(cluster, columns, alerts[i]!)),
  };
}

const fleet = fc.record({
  rollups: fc.array(clusterRollups, { maxLength: 8 }),
  order: fc.array(fc.integer(), { minLength: 8, maxLength: 8 }),
  extra: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  tiers: fc.array(fc.constantFrom('S', 'A', 'B' as const), { minLength: 8, maxLength: 8 }),
});

describe('the columnar fold', () => {
  it('answers every metric and aggregation, and the newest sample, exactly as the object fold, for two lookbacks', () => {
    fc.assert(
      fc.property(fleet, fc.integer({ min: 1, max: READ_DAYS + 2 }), ({ rollups, order, extra }, lookback) => {
        const { objects, columns } = fleets(rollups, order, extra);
        for (const days of [lookback, 7]) {
          const from = lookbackStart(days, NOW);
          const byObjects = aggregateFleet(objects, from);
          const byColumns = aggregateFleet(columns, from);
          // A cluster listed twice gets the same aggregates at both places.
          const twice = aggregateFleet([...columns, ...columns], from);
          objects.forEach((d, i) => {
            const alone = aggregateFleet([columns[i]!], from)[0]!; // a cluster alone: its own array, its row of the shared columns
            for (const key of METRIC_KEYS)
              for (const how of AGGREGATIONS) {
                const expected = aggregate(d.rollups, key, how, from);
                expect(Object.is(aggregatedMetric(byObjects[i]!, key, how), expected)).toBe(true);
                expect(Object.is(aggregatedMetric(byColumns[i]!, key, how), expected)).toBe(true);
                expect(Object.is(aggregatedMetric(alone, key, how), expected)).toBe(true);
                expect(Object.is(aggregateOf(columns[i]!, key, how, from), expected)).toBe(true);
              }
            expect(byColumns[i]!.lastMetricAt).toBe(byObjects[i]!.lastMetricAt);
            for (const agg of [twice[i]!, twice[columns.length + i]!]) {
              for (const key of METRIC_KEYS)
                for (const how of AGGREGATIONS) expect(Object.is(aggregatedMetric(agg, key, how), aggregatedMetric(byObjects[i]!, key, how))).toBe(true);
              expect(agg.lastMetricAt).toBe(byObjects[i]!.lastMetricAt);
            }
            expect(alone.lastMetricAt).toBe(byObjects[i]!.lastMetricAt);
          });
        }
      }),
      { numRuns: 300 },
    );
  });

  it('answers an overflowed sum from the columns as the object fold does (Σ day sum ÷ samples)', () => {
    const day = (ago: number, sum: number) => ({
      day: COLUMN_DAYS[READ_DAYS - 1 - ago]!,
      metrics: { qps: { min: 1, max: 2, sum, count: 2, last: 1, last_at: `${COLUMN_DAYS[READ_DAYS - 1 - ago]}T01:00:00.000Z` } },
    });
    const { objects, columns } = fleets([[day(0, Number.MAX_VALUE), day(1, Number.MAX_VALUE), day(2, -1e308)]], [0], [false]);
    const from = lookbackStart(7, NOW);
    const folded = aggregateFleet(columns, from)[0]!;
    // The fold's sum overflowed: the answer comes from the fallback, here read from the columns.
    expect(folded.values[folded.base + METRIC_INDEX.qps * SLOTS + SUM]).toBe(Number.POSITIVE_INFINITY);
    for (const how of ['avg', 'sum'] as const) {
      const value = aggregatedMetric(folded, 'qps', how);
      expect(Number.isFinite(value)).toBe(true);
      expect(value).toBe(aggregate(objects[0]!.rollups, 'qps', how, from));
    }
  });

  it('builds a cluster’s rollup objects from the columns only when read, the days with a metric oldest first', () => {
    fc.assert(
      fc.property(fleet, ({ rollups, order, extra }) => {
        const { objects, columns } = fleets(rollups, order, extra);
        objects.forEach((d, i) => {
          const expected = d.rollups.filter((r) => Object.keys(r.metrics).length > 0).sort((a, b) => (a.day < b.day ? -1 : 1));
          expect(columns[i]!.rollups).toEqual(expected);
          expect(columns[i]!.row! >= 0).toBe(d.rollups.length > 0 || extra[i] === true);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('shares one `rollups` getter among the clusters (a prototype’s), not an accessor and closure per cluster', () => {
    const { columns } = fleets([[], []], [0, 1], [true, false]);
    for (const d of columns) expect(Object.getOwnPropertyDescriptor(d, 'rollups')).toBeUndefined();
    expect(Object.getPrototypeOf(columns[0])).toBe(Object.getPrototypeOf(columns[1]));
    expect(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(columns[0]), 'rollups')?.get).toBeTypeOf('function');
  });
});

/**
 * The columns as the refresh reads them with a window (shared/db/rollup-packs.ts): the
 * lookback's days before today folded into one cell (foldDays), then today's cells.
 */
function windowed(columns: RollupColumns, lookback: number): RollupColumns {
  const first = COLUMN_DAYS.indexOf(lookbackStart(lookback, NOW));
  const window = COLUMN_DAYS.slice(first, READ_DAYS - 1);
  const dayCells = (day: number) => {
    const n = columns.clusterIds.length;
    return {
      clusterIds: columns.clusterIds,
      values: columns.values.subarray(day * n * METRICS * SLOTS, (day + 1) * n * METRICS * SLOTS),
      lastAt: columns.lastAt.subarray(day * n * METRICS, (day + 1) * n * METRICS),
    };
  };
  const folded = foldDays(window.map((_, i) => dayCells(first + i)));
  const out = emptyColumns([window[0]!, COLUMN_DAYS[READ_DAYS - 1]!], columns.clusterIds);
  for (const [day, cells] of [
    [0, folded],
    [1, dayCells(READ_DAYS - 1)],
  ] as const)
    cells.clusterIds.forEach((id, i) => {
      const cell = day * out.clusterIds.length + out.rowOf.get(id)!;
      out.values.set(cells.values.subarray(i * METRICS * SLOTS, (i + 1) * METRICS * SLOTS), cell * METRICS * SLOTS);
      out.lastAt.set(cells.lastAt.subarray(i * METRICS, (i + 1) * METRICS), cell * METRICS);
    });
  return { ...out, window };
}

/** Whether a fold of these aggregates holds a sum beyond the double range (whose exact answer needs each day). */
const overflowed = (fleet: ClusterData[], from: string) =>
  aggregateFleet(fleet, from).some((agg) =>
    METRIC_KEYS.some((_, m) => agg.values[agg.base + m * SLOTS + PRESENT] === 1 && !Number.isFinite(agg.values[agg.base + m * SLOTS + SUM]!)),
  );

describe('a window of days folded into one cell (the refresh)', () => {
  it('answers every aggregate, the newest sample and every refresh view as the days do, or refuses where a sum overflowed', () => {
    const health = defaultHealthRules();
    const risk = defaultRiskRules();
    let refused = 0;
    fc.assert(
      fc.property(fleet, fc.integer({ min: 2, max: READ_DAYS }), ({ rollups, order, extra, tiers }, lookback) => {
        const { columns } = fleets(rollups, order, extra, tiers);
        if (columns.length === 0) return;
        const byWindow = columns.map((d) => columnarClusterData(d.cluster, windowed(d.columns!, lookback), d.alerts));
        const from = lookbackStart(lookback, NOW);
        const days = aggregateFleet(columns, from);
        const window = aggregateFleet(byWindow, from);
        for (let i = 0; i < columns.length; i++) {
          expect(window[i]!.lastMetricAt).toBe(days[i]!.lastMetricAt);
          for (const key of METRIC_KEYS)
            for (const how of AGGREGATIONS) {
              const sum = days[i]!.values[days[i]!.base + METRIC_INDEX[key] * SLOTS + SUM]!;
              if (how !== 'last' && how !== 'max' && how !== 'min' && !Number.isFinite(sum)) {
                expect(() => aggregatedMetric(window[i]!, key, how)).toThrow(WindowedColumns);
                continue;
              }
              expect(Object.is(aggregatedMetric(window[i]!, key, how), aggregatedMetric(days[i]!, key, how))).toBe(true);
            }
        }
        const rules = { health: { ...health, lookback_days: lookback }, risk: { ...risk, lookback_days: lookback } };
        const views = (fleet: ClusterData[]) => {
          const aggregates = aggregateFleet(fleet, from);
          const scores = scoreFleet(fleet, rules.health, NOW, aggregates);
          const health = healthScores(fleet, rules.health, NOW, undefined, aggregates);
          const risk = sortSnapshots(fleet.map((d, i) => riskSnapshot(d, rules.risk, scores[i]?.overall_score ?? 0, NOW, undefined, aggregates[i])));
          return {
            scores,
            health,
            kpis: healthKpis(health, fleet, rules.health, NOW, aggregates),
            risk,
            critical: criticalClusters(fleet, risk, scores, rules.health, NOW),
          };
        };
        if (overflowed(columns, from)) {
          refused++;
          try {
            views(byWindow);
          } catch (error) {
            expect(error).toBeInstanceOf(WindowedColumns);
          }
          return;
        }
        expect(JSON.stringify(views(byWindow))).toBe(JSON.stringify(views(columns)));
        // Nothing per day: rollup objects, another lookback.
        const withRow = byWindow.find((d) => d.row! >= 0);
        if (withRow) expect(() => withRow.rollups).toThrow(WindowedColumns);
        if (lookback > 2) expect(() => aggregateFleet(byWindow, lookbackStart(lookback - 1, NOW))).toThrow(WindowedColumns);
      }),
      { numRuns: 200 },
    );
    expect(refused).toBeGreaterThan(0); // the generator reaches overflowing sums
  });
});

describe('the views, from columns or from objects', () => {
  it('score, health, risk, kpis, usage and impact are deep-equal', () => {
    const health = defaultHealthRules();
    const risk = defaultRiskRules();
    fc.assert(
      fc.property(fleet, fc.integer({ min: 1, max: READ_DAYS }), ({ rollups, order, extra, tiers }, riskDays) => {
        const { objects, columns } = fleets(rollups, order, extra, tiers);
        const riskRules = { ...risk, lookback_days: riskDays };
        const views = (fleet: ClusterData[]) => {
          const scores = scoreFleet(fleet, health, NOW);
          const riskAggs = aggregateFleet(fleet, lookbackStart(riskDays, NOW));
          return {
            scores,
            health: healthScores(fleet, health, NOW),
            kpis: healthKpis(healthScores(fleet, health, NOW), fleet, health, NOW),
            risk: fleet.map((d, i) => riskSnapshot(d, riskRules, 50, NOW, undefined, riskAggs[i])),
            riskUnfolded: fleet.map((d) => riskSnapshot(d, riskRules, 50, NOW)),
            usage: usage(fleet, scores, health, riskRules, NOW),
            impact: [healthImpact(fleet, health, { ...health, lookback_days: 3 }, NOW), riskImpact(fleet, risk, riskRules, NOW)],
          };
        };
        const byObjects = views(objects);
        const byColumns = views(columns);
        expect(byColumns).toStrictEqual(byObjects);
        expect(JSON.stringify(byColumns)).toBe(JSON.stringify(byObjects));
      }),
      { numRuns: 150 },
    );
  });
});

describe('the refresh, from columns', () => {
  it('builds no rollup object: every view and persisted figure computeFleetView makes reads the columns', () => {
    const health = defaultHealthRules();
    const risk = { ...defaultRiskRules(), lookback_days: 3 };
    fc.assert(
      fc.property(fleet, ({ rollups, order, extra, tiers }) => {
        const { columns } = fleets(rollups, order, extra, tiers);
        for (const d of columns)
          Object.defineProperty(d, 'rollups', {
            get() {
              throw new Error('rollup objects built');
            },
          });
        if (columns.length > 0) expect(() => columns[0]!.rollups).toThrow('rollup objects built');
        // As computeFleetView and refreshFleetView do (fleet-view.ts), then the analysis answers.
        const aggregates = aggregateFleet(columns, lookbackStart(health.lookback_days, NOW));
        const riskAggregates = aggregateFleet(columns, lookbackStart(risk.lookback_days, NOW));
        const scores = scoreFleet(columns, health, NOW, aggregates);
        const snapshots = sortSnapshots(columns.map((d, i) => riskSnapshot(d, risk, scores[i]?.overall_score ?? 0, NOW, undefined, riskAggregates[i])));
        const healthView = healthScores(columns, health, NOW, undefined, aggregates);
        fleetKpis(scores);
        healthKpis(healthView, columns, health, NOW);
        riskSummary(snapshots);
        enrichment(columns);
        breakingPoints(snapshots, risk);
        usage(columns, scores, health, risk, NOW);
        upgrades(columns);
        criticalClusters(columns, snapshots, scores, health, NOW);
      }),
      { numRuns: 50 },
    );
  });
});
