// The puller's plan (planWindows): from each metric's watermark, or the backfill, up to the
// settled end, the last whole step at least settle_seconds old (points Prometheus may still
// be receiving are left for the next run), split at UTC midnights. Pure: no servers.
import { describe, expect, it } from 'vitest';
import { planWindows } from '../../shared/metric-pull/pull.js';
import { emptyPullState, type MetricPullState } from '../../shared/db/metric-pulls.js';
import { shippedValue } from '../../shared/rules/defaults.js';
import type { MetricSources } from '../../shared/rules/schemas.js';

const shipped = (await shippedValue('metric-sources')) as MetricSources;
const sources = (settle: number, step = 60, backfill = 1): MetricSources => ({
  ...shipped,
  prometheus: { ...shipped.prometheus, settle_seconds: settle, step_seconds: step, backfill_days: backfill },
  metrics: shipped.metrics.slice(0, 2),
});
const NOW = Date.parse('2026-11-20T10:17:42Z') / 1000;
const state = (metric_key: string, watermark: number): MetricPullState => ({ ...emptyPullState(metric_key), watermark });
const lastTo = (windows: { to: number }[]) => Math.max(...windows.map((w) => w.to));

describe('planning the windows of a pull', () => {
  it('ends at the last whole step settle_seconds before now, not at now', () => {
    expect(shipped.prometheus.settle_seconds).toBe(60); // the shipped default this guards
    for (const [settle, step] of [
      [0, 60],
      [60, 60],
      [120, 60],
      [600, 300],
    ] as const) {
      const windows = planWindows(sources(settle, step), new Map(), NOW);
      expect(lastTo(windows), `settle ${settle}, step ${step}`).toBe(Math.floor((NOW - settle) / step) * step);
    }
    expect(lastTo(planWindows(sources(120), new Map(), NOW))).toBe(Date.parse('2026-11-20T10:15:00Z') / 1000);
  });

  it('from a watermark, starts a step after it; one at the settled end plans nothing', () => {
    const end = Math.floor((NOW - 120) / 60) * 60;
    const [first, second] = shipped.metrics.map((m) => m.metric_key);
    const states = new Map([[first!, state(first!, end - 600)]]);
    const windows = planWindows(sources(120), states, NOW);
    const ofFirst = windows.filter((w) => w.metrics.some((m) => m.metric_key === first));
    expect(ofFirst).toEqual([{ from: end - 540, to: end, metrics: [expect.objectContaining({ metric_key: first })] }]);
    // The other metric, never pulled, backfills the day: split at midnight, on the step grid.
    const ofSecond = windows.filter((w) => w.metrics.some((m) => m.metric_key === second));
    expect(ofSecond.map((w) => [new Date(w.from * 1000).toISOString(), new Date(w.to * 1000).toISOString()])).toEqual([
      ['2026-11-19T10:18:00.000Z', '2026-11-19T23:59:00.000Z'],
      ['2026-11-20T00:00:00.000Z', '2026-11-20T10:15:00.000Z'],
    ]);
    expect(
      planWindows(
        sources(120),
        new Map([
          [first!, state(first!, end)],
          [second!, state(second!, end)],
        ]),
        NOW,
      ),
    ).toEqual([]);
  });
});
