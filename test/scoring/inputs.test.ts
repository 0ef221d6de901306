// What the engine reads: a metric aggregated over a lookback of UTC days from
// the daily rollups, and the alerts that fired during a lookback.
import { describe, expect, it } from 'vitest';
import { aggregate, alertsInLookback, clamp, lookbackStart, round1, round2 } from '../../shared/scoring/inputs.js';
import { alert, daysAgo, hoursAgo, NOW, rollup } from './fixtures.js';

const ID = '00000000-0000-4000-8000-00000000aaaa';

describe('lookbackStart: the first UTC day of a lookback ending today', () => {
  it.each([
    ['2026-11-20T12:00:00Z', 7, '2026-11-14'],
    ['2026-11-20T00:00:00Z', 7, '2026-11-14'],
    ['2026-11-20T23:59:59.999Z', 7, '2026-11-14'],
    ['2026-11-21T00:00:00Z', 7, '2026-11-15'],
    ['2026-11-20T12:00:00Z', 1, '2026-11-20'], // one day: today only
    ['2026-03-02T05:00:00Z', 3, '2026-02-28'], // across a month end
    ['2027-01-01T00:30:00Z', 2, '2026-12-31'], // across a year end
  ])('now %s, %d days → %s', (now, days, expected) => {
    expect(lookbackStart(days, new Date(now))).toBe(expected);
  });

  it('does not depend on the local time zone of the Date (UTC days)', () => {
    // Same instant written with an offset: still the UTC day.
    expect(lookbackStart(1, new Date('2026-11-20T23:30:00-05:00'))).toBe('2026-11-21');
  });
});

describe('aggregate over the lookback', () => {
  const from = lookbackStart(7, NOW); // 2026-11-14
  const rollups = [
    rollup(ID, daysAgo(0), { disk_used_pct: [10, 30] }), // today: 00:00 → 10, 01:00 → 30
    rollup(ID, daysAgo(1), { disk_used_pct: 20 }),
    rollup(ID, daysAgo(6), { disk_used_pct: [50, 5] }), // first day of the lookback: included
    rollup(ID, daysAgo(7), { disk_used_pct: [1000, -1000] }), // one day too old: excluded
  ];

  it.each([
    ['max', 50],
    ['min', 5],
    ['sum', 115], // 10 + 30 + 20 + 50 + 5
    ['avg', 23], // 115 / 5 samples
    ['last', 30], // the latest sample (today 01:00)
  ] as const)('%s → %d', (how, expected) => {
    expect(aggregate(rollups, 'disk_used_pct', how, from)).toBe(expected);
  });

  it('reads rollups in any order', () => {
    const shuffled = [rollups[2]!, rollups[0]!, rollups[3]!, rollups[1]!];
    expect(aggregate(shuffled, 'disk_used_pct', 'last', from)).toBe(30);
    expect(aggregate(shuffled, 'disk_used_pct', 'max', from)).toBe(50);
  });

  it('avg is the mean of all samples, not the mean of daily means', () => {
    const r = [rollup(ID, daysAgo(0), { qps: 10 }), rollup(ID, daysAgo(1), { qps: [40, 40, 40, 40] })];
    // (10 + 160) / 5 = 34 (the mean of daily means would be 25)
    expect(aggregate(r, 'qps', 'avg', from)).toBe(34);
  });

  it('last takes the latest sample even when an older day holds a larger value', () => {
    const r = [rollup(ID, daysAgo(3), { memory_pct: [99] }), rollup(ID, daysAgo(2), { memory_pct: [12, 7] })];
    expect(aggregate(r, 'memory_pct', 'last', from)).toBe(7);
  });

  it('is null, not 0, when the lookback holds no sample of that metric', () => {
    expect(aggregate([], 'disk_used_pct', 'max', from)).toBeNull();
    expect(aggregate(rollups, 'qps', 'avg', from)).toBeNull(); // other metrics only
    expect(aggregate([rollup(ID, daysAgo(7), { qps: 5 })], 'qps', 'last', from)).toBeNull(); // only too old
    expect(aggregate([rollup(ID, daysAgo(0), {})], 'qps', 'sum', from)).toBeNull(); // an empty day
  });

  it('a lookback of one day reads only today', () => {
    expect(aggregate(rollups, 'disk_used_pct', 'max', lookbackStart(1, NOW))).toBe(30);
  });

  it('negative values aggregate as they are', () => {
    const r = [rollup(ID, daysAgo(0), { qps: [-3, -1] })];
    expect(aggregate(r, 'qps', 'max', from)).toBe(-1);
    expect(aggregate(r, 'qps', 'min', from)).toBe(-3);
    expect(aggregate(r, 'qps', 'avg', from)).toBe(-2);
  });
});

describe('alertsInLookback: started within the lookback, or still firing', () => {
  const a = (name: string, hours: number, status: 'Firing' | 'Resolved') => alert(ID, name, hoursAgo(hours), status);
  const alerts = [
    a('recent-resolved', 1, 'Resolved'),
    a('edge-inside', 7 * 24 - 1, 'Resolved'),
    a('exactly-7-days', 7 * 24, 'Resolved'),
    a('just-outside', 7 * 24 + 1, 'Resolved'),
    a('old-resolved', 30 * 24, 'Resolved'),
    a('old-still-firing', 30 * 24, 'Firing'),
    a('recent-firing', 2, 'Firing'),
  ];

  it('keeps the alerts of the last 7 × 24 hours and every firing one', () => {
    expect(alertsInLookback(alerts, 7, NOW).map((x) => x.alert_name)).toEqual([
      'recent-resolved',
      'edge-inside',
      'exactly-7-days',
      'old-still-firing',
      'recent-firing',
    ]);
  });

  it('a longer lookback takes in older alerts', () => {
    expect(alertsInLookback(alerts, 31, NOW)).toHaveLength(alerts.length);
  });

  it('no alerts → none', () => {
    expect(alertsInLookback([], 7, NOW)).toEqual([]);
  });
});

describe('rounding helpers', () => {
  it('round1 / round2 / clamp', () => {
    expect(round1(44.04)).toBe(44);
    expect(round1(41.68)).toBe(41.7);
    expect(round2(1.005 + 1e-9)).toBe(1.01);
    expect(round2(84)).toBe(84);
    expect(clamp(-45.8)).toBe(0);
    expect(clamp(120)).toBe(100);
    expect(clamp(55.5)).toBe(55.5);
  });
});
