// The metrics puller's test harness, checked against the real thing: openMetrics()
// writes what promtool reads, and a Prometheus started by startPrometheus() with
// three days of backfilled history answers every backfilled sample, up to a few
// minutes ago, right after start, with exact values at step times that fall on
// sample timestamps.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HistorySeries, openMetrics, type RunningPrometheus, startPrometheus } from '../support/prometheus.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('openMetrics', () => {
  it('groups series by name, sorts samples, writes seconds and escapes label values', () => {
    const text = openMetrics([
      {
        name: 'disk_used',
        help: 'Disk "used"\nratio',
        labels: { cluster_id: 'c1' },
        samples: [
          [2_000, 0.5],
          [1_000, 0.25],
        ],
      },
      { name: 'qps', labels: {}, samples: [[1_500, 3]] },
      {
        name: 'disk_used',
        labels: { cluster_id: 'a "b" \\ c\nd', az: 'x' },
        samples: [
          [1_234.5, Number.NaN],
          [3_000, Number.POSITIVE_INFINITY],
        ],
      },
      { name: 'disk_used', labels: { cluster_id: 'c1' }, samples: [[500, -1e-7]] },
    ]);
    expect(text).toBe(
      [
        '# HELP disk_used Disk \\"used\\"\\nratio',
        '# TYPE disk_used gauge',
        'disk_used{cluster_id="c1"} -1e-7 0.5',
        'disk_used{cluster_id="c1"} 0.25 1',
        'disk_used{cluster_id="c1"} 0.5 2',
        'disk_used{az="x",cluster_id="a \\"b\\" \\\\ c\\nd"} NaN 1.2345',
        'disk_used{az="x",cluster_id="a \\"b\\" \\\\ c\\nd"} +Inf 3',
        '# TYPE qps gauge',
        'qps 3 1.5',
        '# EOF',
        '',
      ].join('\n'),
    );
    expect(openMetrics([])).toBe('# EOF\n');
  });

  it('refuses what promtool would drop or misread: a repeated timestamp, bad names', () => {
    expect(() =>
      openMetrics([
        {
          name: 'm',
          labels: {},
          samples: [
            [1_000, 1],
            [1_000, 2],
          ],
        },
      ]),
    ).toThrow(/two samples of m at 1000 ms/);
    expect(() => openMetrics([{ name: 'm-x', labels: {}, samples: [] }])).toThrow(/invalid metric name/);
    expect(() => openMetrics([{ name: 'm', labels: { 'a-b': 'x' }, samples: [] }])).toThrow(/invalid label name/);
    expect(() => openMetrics([{ name: 'm', labels: { __name__: 'x' }, samples: [] }])).toThrow(/invalid label name/);
  });
});

describe('startPrometheus with three days of backfilled history', () => {
  // Samples every minute on the minute, from three days ago up to three minutes ago.
  const last = Math.floor(Date.now() / MINUTE) * MINUTE - 3 * MINUTE;
  const first = last - 3 * 24 * HOUR;
  const clusters = ['c-1', 'c-2', 'quoted "c" \\ 3'];
  const valueAt = (cluster: number, t: number) => Math.round(((t - first) / MINUTE) * 7 + cluster * 1000) / 100 + 0.1;
  const history: HistorySeries[] = clusters.map((id, i) => ({
    name: 'starrocks_be_disks_data_used_capacity',
    labels: { cluster_id: id, instance: `be-${i}:8040` },
    samples: Array.from({ length: (last - first) / MINUTE + 1 }, (_, k) => {
      const t = first + k * MINUTE;
      return [t, valueAt(i, t)] as [number, number];
    }),
  }));
  // One sample off the minute, at a fractional second.
  const offMinute = last - 90_500;
  history.push({ name: 'fractional', labels: {}, samples: [[offMinute, 42.5]] });

  let prom: RunningPrometheus;

  beforeAll(async () => {
    prom = await startPrometheus({ history: openMetrics(history) });
  }, 60_000);

  afterAll(async () => {
    await prom?.stop();
  });

  it('promtool cut the history into blocks aligned to 2-hour boundaries, the last one ending at the newest sample', () => {
    const rows = prom.backfillOutput
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .map(([, min, max]) => [Number(min), Number(max)] as const)
      .sort((a, b) => a[0] - b[0]);
    expect(rows.length).toBeGreaterThanOrEqual(36);
    expect(rows[0]![0]).toBe(first);
    for (const [min] of rows.slice(1)) expect(min % (2 * HOUR)).toBe(0);
    for (const [min, max] of rows) expect(max - min).toBeLessThanOrEqual(2 * HOUR);
    // A block's max time is exclusive: the newest sample + 1 ms.
    expect(rows.at(-1)![1]).toBe(last + 1);
  });

  it('answers the whole history right after start, the oldest and the newest sample included', async () => {
    const counts = await prom.query('count_over_time(starrocks_be_disks_data_used_capacity[4d])', last);
    expect(counts).toHaveLength(3);
    for (const c of counts) expect(Number(c.value[1])).toBe((last - first) / MINUTE + 1);
    const newest = await prom.query('starrocks_be_disks_data_used_capacity{cluster_id="c-1"}', last);
    expect(newest).toEqual([
      {
        metric: { __name__: 'starrocks_be_disks_data_used_capacity', cluster_id: 'c-1', instance: 'be-0:8040' },
        value: [last / 1000, String(valueAt(0, last))],
      },
    ]);
    const oldest = await prom.query('starrocks_be_disks_data_used_capacity{cluster_id="c-2"}', first);
    expect(Number(oldest[0]!.value[1])).toBe(valueAt(1, first));
    const fractional = await prom.query('fractional', offMinute);
    expect(fractional[0]!.value).toEqual([offMinute / 1000, '42.5']);
  });

  it('query_range at a 60 s step on the minute answers every backfilled value exactly', async () => {
    const series = await prom.queryRange('starrocks_be_disks_data_used_capacity', { startMs: first, endMs: last, stepSeconds: 60 });
    expect(series.map((s) => s.metric.cluster_id).sort()).toEqual([...clusters].sort());
    for (const s of series) {
      const i = clusters.indexOf(s.metric.cluster_id!);
      expect(s.values).toHaveLength((last - first) / MINUTE + 1);
      const wrong = s.values.filter(([seconds, value], k) => seconds * 1000 !== first + k * MINUTE || Number(value) !== valueAt(i, seconds * 1000));
      expect(wrong.slice(0, 5), s.metric.cluster_id).toEqual([]);
    }
    // The label value with quotes and a backslash came through promtool intact.
    expect(series.some((s) => s.metric.cluster_id === 'quoted "c" \\ 3')).toBe(true);
  });

  it('repeats the last sample at later steps for the 5-minute lookback, then answers nothing', async () => {
    const after = await prom.queryRange('starrocks_be_disks_data_used_capacity{cluster_id="c-1"}', {
      startMs: last,
      endMs: last + 10 * MINUTE,
      stepSeconds: 60,
    });
    expect(after[0]!.values.map(([s]) => (s * 1000 - last) / MINUTE)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(after[0]!.values.map(([, v]) => v))).toEqual(new Set([String(valueAt(0, last))]));
  });

  it('stop() ends Prometheus and removes its folder', async () => {
    const other = await startPrometheus({ history: openMetrics([{ name: 'x', labels: {}, samples: [[last, 1]] }]) });
    expect(await other.query('x', last)).toHaveLength(1);
    await other.stop();
    expect(existsSync(other.dataDir)).toBe(false);
    await expect(fetch(`${other.url}/-/ready`)).rejects.toThrow();
    await other.stop();
  });
});

describe('startPrometheus failures', () => {
  it("fails with promtool's own message when the history is not OpenMetrics", async () => {
    await expect(startPrometheus({ history: 'm 1 100\n' })).rejects.toThrow(/promtool tsdb create-blocks-from openmetrics failed \(exit 1\): .*# EOF/);
  });

  it('names the package when a binary is missing', async () => {
    const saved = process.env.PROMTOOL_BIN;
    process.env.PROMTOOL_BIN = '/nonexistent/promtool';
    try {
      await expect(startPrometheus({ history: '# EOF\n' })).rejects.toThrow(
        '/nonexistent/promtool not found (set PROMTOOL_BIN to use another): apt-get install prometheus; .ci/run installs it',
      );
    } finally {
      if (saved === undefined) delete process.env.PROMTOOL_BIN;
      else process.env.PROMTOOL_BIN = saved;
    }
  });

  it("fails with Prometheus' output when it cannot start", async () => {
    await expect(startPrometheus({ scrapeConfigs: [{ job_name: 'x', scrape_interval: 'not a duration' }] })).rejects.toThrow(
      /Prometheus did not start \(exited with 2\):[\s\S]*not a valid duration/,
    );
  });
});
