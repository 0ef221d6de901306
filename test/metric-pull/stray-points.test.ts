// A Prometheus-compatible server (Thanos, Mimir, VictoriaMetrics behind the same
// /api/v1/query_range) that answers a step beyond the range it was asked for, or
// repeats a time within a series: each point is still counted once. A local server
// speaking Prometheus's wire format stands in for it: a real Prometheus never
// answers so, which is why the real-Prometheus suite (pull.test.ts) cannot show it.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowDays } from '../../shared/db/days.js';
import { readFleetRollups } from '../../shared/db/metrics.js';
import { ingestClusters } from '../../shared/fleet/ingest.js';
import { pullMetrics } from '../../shared/metric-pull/pull.js';
import { metricSourcesStatus } from '../../shared/metric-pull/status.js';
import { useTestTables } from '../support/dynamo.js';
import { useMetricSources } from '../support/metric-sources.js';

const STEP = 60;
const NOW = Math.floor(Date.now() / 1000 / STEP) * STEP - 10 * STEP;
const clusterId = randomUUID();
/** A point's value on the grid: 1 to 100. Strays carry values the grid never has, so any one counted shows. */
const gridValue = (t: number) => ((t / STEP) % 100) + 1;
const STRAY = 5_000;

let server: Server;
let url: string;
/** The ranges asked for: [start, end], seconds. */
const asked: [number, number][] = [];

beforeAll(async () => {
  await useTestTables();
  const cluster = {
    cluster_id: clusterId,
    cluster_name: 'stray-points',
    customer_name: 'Stray Co',
    account_id: 'acc-stray',
    account_name: 'Stray Co',
    email: 'ops@example.com',
    customer_tier: 'B' as const,
    cluster_type: 'shared_nothing',
    region: 'us-east-1',
    engine_version: '3.3.2',
    resource_state: 'Running',
    node_count: 3,
  };
  expect((await ingestClusters([cluster])).accepted).toBe(1);
  server = createServer((req, res) => {
    let received = '';
    req.on('data', (chunk: Buffer) => (received += chunk.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(received);
      const empty = { resultType: 'vector', result: [] };
      if (!req.url?.endsWith('/api/v1/query_range'))
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'success', data: empty }));
      const [start, end, step] = ['start', 'end', 'step'].map((name) => Number(form.get(name)));
      asked.push([start!, end!]);
      const values: [number, string][] = [[start! - step!, String(STRAY)]]; // a step before the range
      for (let t = start!; t <= end!; t += step!) values.push([t, String(gridValue(t))]);
      values.push([end!, String(STRAY)]); // the last time again
      values.push([end! + step!, String(STRAY)]); // a step after the range: the next request's first
      const data = { resultType: 'matrix', result: [{ metric: { cluster_id: clusterId }, values }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'success', data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(() => new Promise((resolve) => server?.close(resolve)));

describe('points a Prometheus-compatible server answers beyond its range, or twice', () => {
  it('are refused, saying why, and every point on the grid is counted once', async () => {
    // 1,000 points a request (the least a source may set): three days' window is split into several requests (and at each
    // UTC midnight), each neighbouring the next.
    await useMetricSources({ url, backfillDays: 3, maxPointsPerRequest: 1_000, metrics: [{ key: 'qps', query: 'sum by (cluster_id) (fh_qps)' }] });
    const result = await pullMetrics({ now: new Date(NOW * 1000), sleep: async () => {} });
    expect(result.outcome).toBe('ok');
    expect(asked.length).toBeGreaterThanOrEqual(4);
    // The ranges asked for tile the window: each starts a step after the one before ended.
    for (let i = 1; i < asked.length; i++) expect(asked[i]![0]).toBe(asked[i - 1]![1] + STEP);
    const grid: number[] = [];
    for (const [start, end] of asked) for (let t = start; t <= end; t += STEP) grid.push(t);
    expect(result.accepted).toBe(grid.length);
    expect(result.refused).toBe(3 * asked.length);
    const qps = (await metricSourcesStatus(new Date(NOW * 1000))).metrics.find((m) => m.metric_key === 'qps')!;
    expect(qps.refusal_last).toMatch(/^at: (outside the range asked for|not after the series’ previous point .*) \(\d+ points?\)$/);

    const days = (await readFleetRollups(windowDays(5, new Date(NOW * 1000)))).get(clusterId) ?? [];
    const stored = days.map((d) => d.metrics.qps!);
    expect(stored.reduce((n, r) => n + r.count, 0)).toBe(grid.length);
    expect(stored.reduce((n, r) => n + r.sum, 0)).toBe(grid.reduce((n, t) => n + gridValue(t), 0));
    expect(Math.max(...stored.map((r) => r.max))).toBeLessThanOrEqual(100);
  });
});
