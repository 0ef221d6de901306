// The clusters route group (the console's cluster page) through the real local
// server: inventory, and daily rollups checked against a brute-force computation
// of the samples ingested; 404 for unknown clusters, 422 for bad windows, 401
// without a token, and the same answer for a viewer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowDays } from '../../shared/db/days.js';
import { ClusterMetricsResponse, ClusterResponse } from '../../shared/routes/clusters.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let viewer: string;

const cluster = (name: string) => ({
  cluster_id: randomUUID(),
  cluster_name: name,
  customer_name: 'Hooli',
  account_id: '123456789012',
  account_name: 'Hooli Production',
  email: 'ops@hooli.example.com',
  customer_tier: 'S',
  cluster_type: 'ELASTIC',
  region: 'US East (us-east-1)',
  engine_version: '3.3.2',
  resource_state: 'RUNNING',
  node_count: 6,
});
const charted = cluster('hooli-prod-1');
const silent = cluster('hooli-idle-1');

interface Sample {
  cluster_id: string;
  metric_key: string;
  value: number;
  at: string;
}
const samples: Sample[] = [];

beforeAll(async () => {
  service = await startTestService();
  viewer = await userToken('viewer', 'cluster-page-viewer');
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.ingestToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { accepted: number; rejected: unknown[] };
  };
  expect(await post('/api/ingest/clusters', { clusters: [charted, silent] })).toEqual({ accepted: 2, rejected: [] });
  // Four days of samples every 50 minutes, two metrics, sent shuffled (so `last` is the latest `at`, not the last sent).
  const now = Date.now();
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let minutes = 5; minutes < 4 * 24 * 60; minutes += 50) {
    const at = new Date(now - minutes * 60_000).toISOString();
    samples.push({ cluster_id: charted.cluster_id, metric_key: 'disk_used_pct', value: Math.round(random() * 10_000) / 100, at });
    if (minutes % 150 === 5) samples.push({ cluster_id: charted.cluster_id, metric_key: 'qps', value: Math.round(random() * 5000), at });
  }
  const shuffled = [...samples].sort(() => random() - 0.5);
  for (let i = 0; i < shuffled.length; i += 40) expect((await post('/api/ingest/metrics', { samples: shuffled.slice(i, i + 40) })).rejected).toEqual([]);
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

const get = async (path: string, token: string | null = viewer) => {
  const res = await fetch(`${service.url}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
};

/** What the answer must be, from the raw samples. */
function bruteForce(days: number) {
  const dates = windowDays(days);
  const keys = ['disk_used_pct', 'qps'];
  return keys
    .map((metric_key) => ({
      metric_key,
      points: dates.flatMap((day) => {
        const mine = samples.filter((s) => s.metric_key === metric_key && s.at.slice(0, 10) === day);
        if (!mine.length) return [];
        const latest = mine.reduce((a, b) => (b.at > a.at ? b : a));
        const values = mine.map((s) => s.value);
        return [
          {
            day,
            avg: values.reduce((a, b) => a + b, 0) / values.length,
            min: Math.min(...values),
            max: Math.max(...values),
            last: latest.value,
            last_at: latest.at,
            count: values.length,
          },
        ];
      }),
    }))
    .filter((m) => m.points.length > 0); // a metric without a point in the window is not listed (after midnight, ?days=1 may have none)
}

function expectSameRollups(actual: any[], expected: ReturnType<typeof bruteForce>) {
  expect(actual.map((m) => m.metric_key)).toEqual(expected.map((m) => m.metric_key));
  for (const [i, metric] of expected.entries()) {
    const got = actual[i].points as any[];
    expect(got.map((p) => p.day)).toEqual(metric.points.map((p) => p.day));
    for (const [j, p] of metric.points.entries()) {
      const { avg, ...exact } = got[j];
      const { avg: wanted, ...exactWanted } = p;
      expect(exact).toEqual(exactWanted);
      expect(avg).toBeCloseTo(wanted, 9); // summed in another order
    }
  }
}

describe('GET /api/clusters/{cluster_id}', () => {
  it("answers the cluster's inventory record to any signed-in user", async () => {
    const { status, body } = await get(`/api/clusters/${charted.cluster_id}`);
    expect(status).toBe(200);
    expect(ClusterResponse.parse(body)).toEqual(body);
    expect(body.cluster).toEqual({ ...charted, created_at: expect.any(String), updated_at: expect.any(String) });
  });

  it('answers 404 problem+json for a cluster the inventory does not hold, 401 without a token', async () => {
    const missing = await get(`/api/clusters/${randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.type).toMatch(/^application\/problem\+json/);
    expect(missing.body).toMatchObject({ status: 404, title: 'Not Found', detail: expect.stringMatching(/^No cluster /) });
    expect((await get(`/api/clusters/${charted.cluster_id}`, null)).status).toBe(401);
  });
});

describe('GET /api/clusters/{cluster_id}/metrics', () => {
  it('answers 14 days of daily rollups by default, equal to a brute-force computation of the samples', async () => {
    const { status, body } = await get(`/api/clusters/${charted.cluster_id}/metrics`);
    expect(status).toBe(200);
    ClusterMetricsResponse.parse(body);
    expect(body).toMatchObject({ cluster_id: charted.cluster_id, days: 14, dates: windowDays(14) });
    const expected = bruteForce(14);
    expect(expected[0]!.points.length).toBeGreaterThanOrEqual(4); // four days back reaches a fifth calendar day
    expectSameRollups(body.metrics, expected);
  });

  it('answers the window asked for (1..90 days), an empty ?days= taking the default', async () => {
    for (const days of [1, 2, 90]) {
      const { status, body } = await get(`/api/clusters/${charted.cluster_id}/metrics?days=${days}`);
      expect(status, `days=${days}`).toBe(200);
      expect(body.dates).toEqual(windowDays(days));
      expectSameRollups(body.metrics, bruteForce(days));
    }
    expect((await get(`/api/clusters/${charted.cluster_id}/metrics?days=`)).body.days).toBe(14);
  });

  it('answers no metrics for a known cluster without samples', async () => {
    const { status, body } = await get(`/api/clusters/${silent.cluster_id}/metrics?days=7`);
    expect(status).toBe(200);
    expect(body).toEqual({ cluster_id: silent.cluster_id, days: 7, dates: windowDays(7), metrics: [] });
  });

  it('answers 422 for a window outside 1..90 days, 404 for an unknown cluster, 401 without a token', async () => {
    for (const days of ['0', '91', '2.5', 'abc', '-3']) {
      const { status, type, body } = await get(`/api/clusters/${charted.cluster_id}/metrics?days=${days}`);
      expect(status, `days=${days}`).toBe(422);
      expect(type).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(body)).toContain('days');
    }
    expect((await get(`/api/clusters/${randomUUID()}/metrics`)).status).toBe(404);
    expect((await get(`/api/clusters/${charted.cluster_id}/metrics`, null)).status).toBe(401);
  });
});
