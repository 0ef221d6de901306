// Fleet data ingestion against DynamoDB Local: exact rollups, Alertmanager
// semantics, partial batches, logs, and the direct Lambda invocation.
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as ingestHandler } from '../../functions/ingest.js';
import { listAlertsSince, listClusterAlerts } from '../../shared/db/alerts.js';
import { getCluster } from '../../shared/db/clusters.js';
import { listClusterLogs } from '../../shared/db/logs.js';
import { readClusterRollups, readFleetRollups, windowDays } from '../../shared/db/metrics.js';
import { ingestAlerts, ingestClusters, ingestLogs, ingestMetrics } from '../../shared/fleet/ingest.js';
import { METRIC_KEYS, type ClusterInput, type MetricSample } from '../../shared/fleet/records.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date('2026-11-20T12:00:00Z');

function cluster(name: string, over: Partial<ClusterInput> = {}): ClusterInput {
  return {
    cluster_id: randomUUID(), cluster_name: name, customer_name: 'Acme Retail', account_id: '123456789012', account_name: 'Acme Production',
    email: 'ops@acme.example.com', customer_tier: 'S', cluster_type: 'ELASTIC', region: 'US East (us-east-1)', engine_version: '3.2.6',
    resource_state: 'RUNNING', node_count: 6, ...over,
  };
}

/** Deterministic pseudo-random numbers for the brute-force comparison. */
function seeded(seed: number) {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

let clusters: ClusterInput[];

beforeAll(async () => {
  await useTestTables();
  clusters = [cluster('acme-prod-1'), cluster('acme-prod-2'), cluster('globex-prod-1', { customer_name: 'Globex', customer_tier: 'A' })];
  expect(await ingestClusters(clusters, NOW)).toEqual({ accepted: 3, rejected: [] });
});

describe('clusters', () => {
  it('upserts inventory, keeping when a cluster was first seen', async () => {
    const before = await getCluster(clusters[0]!.cluster_id);
    await ingestClusters([{ ...clusters[0]!, node_count: 9, engine_version: '3.3.5' }], new Date(NOW.getTime() + 60_000));
    const after = await getCluster(clusters[0]!.cluster_id);
    expect(after).toMatchObject({ node_count: 9, engine_version: '3.3.5', created_at: before!.created_at });
    expect(after!.updated_at > before!.updated_at).toBe(true);
  });

  it('names each bad record and stores the good ones', async () => {
    const good = cluster('wayne-prod-1');
    const result = await ingestClusters(
      [{ ...good }, { ...cluster('x'), cluster_id: 'not-a-uuid' }, { ...cluster('y'), customer_tier: 'Z' }, { ...good, cluster_name: 'again' }, 'nonsense'],
      NOW,
    );
    expect(result.accepted).toBe(1);
    expect(result.rejected.map((r) => r.index)).toEqual([1, 2, 3, 4]);
    expect(result.rejected[0]!.reason).toMatch(/^cluster_id: /);
    expect(result.rejected[1]!.reason).toMatch(/^customer_tier: /);
    expect(result.rejected[2]!.reason).toMatch(/appears earlier in this batch/);
    expect(await getCluster(good.cluster_id)).toMatchObject({ cluster_name: 'wayne-prod-1' });
  });
});

describe('metric rollups', () => {
  it('are exact against a brute-force computation, under concurrent batches', async () => {
    const random = seeded(7);
    const samples: MetricSample[] = [];
    // 3 clusters × 3 days × 4 metric keys, samples at distinct minutes, in shuffled order
    for (const c of clusters) {
      for (let i = 0; i < 600; i++) {
        const at = new Date(NOW.getTime() - Math.floor(random() * 3 * 24 * 60) * 60_000 - i * 1000);
        samples.push({ cluster_id: c.cluster_id, metric_key: METRIC_KEYS[i % 4]!, value: Math.round((random() * 1000 - 200) * 100) / 100, at: at.toISOString() });
      }
    }
    // eight concurrent batches that overlap on the same cluster-days: version conflicts must be retried, not lost
    const batches = Array.from({ length: 8 }, (_, b) => samples.filter((_, i) => i % 8 === b));
    const results = await Promise.all(batches.map((batch) => ingestMetrics(batch, NOW)));
    expect(results.reduce((n, r) => n + r.accepted, 0)).toBe(samples.length);

    const days = windowDays(4, NOW);
    const fleet = await readFleetRollups(days);
    for (const c of clusters) {
      const stored = await readClusterRollups(c.cluster_id, days);
      expect(fleet.get(c.cluster_id)).toEqual(stored);
      for (const rollup of stored) {
        for (const key of METRIC_KEYS.slice(0, 4)) {
          const mine = samples.filter((s) => s.cluster_id === c.cluster_id && s.metric_key === key && s.at.startsWith(rollup.day));
          const latest = mine.reduce((a, b) => (b.at > a.at ? b : a));
          const r = rollup.metrics[key]!;
          expect(r.count).toBe(mine.length);
          expect(r.min).toBe(Math.min(...mine.map((s) => s.value)));
          expect(r.max).toBe(Math.max(...mine.map((s) => s.value)));
          expect(r.sum).toBeCloseTo(mine.reduce((a, s) => a + s.value, 0), 6);
          expect(r.last).toBe(latest.value);
          expect(r.last_at).toBe(latest.at);
        }
      }
      const total = stored.reduce((n, r) => n + Object.values(r.metrics).reduce((m, x) => m + x!.count, 0), 0);
      expect(total).toBe(samples.filter((s) => s.cluster_id === c.cluster_id).length);
    }
  });

  it('refuses unknown clusters, unknown keys, old and future samples, and keeps the rest', async () => {
    const id = clusters[1]!.cluster_id;
    const result = await ingestMetrics(
      [
        { cluster_id: id, metric_key: 'qps', value: 10, at: NOW.toISOString() },
        { cluster_id: randomUUID(), metric_key: 'qps', value: 10, at: NOW.toISOString() },
        { cluster_id: id, metric_key: 'cpu_magic', value: 10, at: NOW.toISOString() },
        { cluster_id: id, metric_key: 'qps', value: 10, at: '2020-01-01T00:00:00Z' },
        { cluster_id: id, metric_key: 'qps', value: 10, at: '2027-01-01T00:00:00Z' },
        { cluster_id: id, metric_key: 'qps', value: 'ten', at: NOW.toISOString() },
        { cluster_id: id, metric_key: 'qps', value: 12, at: NOW.toISOString(), extra: 1 },
      ],
      NOW,
    );
    expect(result.accepted).toBe(1);
    expect(result.rejected).toEqual([
      { index: 1, reason: expect.stringMatching(/^cluster_id: unknown cluster/) },
      { index: 2, reason: expect.stringMatching(/^metric_key: /) },
      { index: 3, reason: 'at: older than the 90-day retention' },
      { index: 4, reason: 'at: in the future' },
      { index: 5, reason: expect.stringMatching(/^value: /) },
      { index: 6, reason: expect.stringMatching(/extra/) },
    ]);
  });
});

describe('alerts from the Alertmanager webhook', () => {
  const alert = (status: 'firing' | 'resolved', over: Record<string, unknown> = {}) => ({
    status,
    labels: { alertname: 'DiskUsageHigh', cluster_id: clusters[0]!.cluster_id, severity: 'critical', instance: 'be-1' },
    annotations: { summary: 'Disk almost full', description: 'be-1 disk at 93%', dashboard_url: 'https://grafana.example.com/d/disk' },
    startsAt: '2026-11-20T10:00:00.123456789Z',
    endsAt: status === 'resolved' ? '2026-11-20T11:15:00Z' : '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus/graph?g0.expr=disk',
    fingerprint: 'c3f1aa0b9e2d4455',
    ...over,
  });

  it('firing, then resolved, then duplicate redeliveries give one resolved alert', async () => {
    expect(await ingestAlerts([alert('firing')], NOW)).toEqual({ accepted: 1, rejected: [], duplicates: 0, issues: { created: 1, updated: 0 } });
    expect(await ingestAlerts([alert('firing')], NOW)).toMatchObject({ accepted: 1, duplicates: 1 }); // group_interval resend
    await ingestAlerts([alert('resolved')], NOW);
    await ingestAlerts([alert('resolved')], NOW);
    expect(await ingestAlerts([alert('firing')], NOW)).toMatchObject({ duplicates: 1 }); // late firing: stays resolved
    const stored = (await listClusterAlerts(clusters[0]!.cluster_id, new Date('2026-11-20T00:00:00Z'))).filter((a) => a.fingerprint === 'c3f1aa0b9e2d4455');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      alert_name: 'DiskUsageHigh', severity: 'Critical', status: 'Resolved', starts_at: '2026-11-20T10:00:00.123Z', ends_at: '2026-11-20T11:15:00.000Z',
      summary: 'Disk almost full', detail: 'be-1 disk at 93%', dashboard_url: 'https://grafana.example.com/d/disk', cluster_id: clusters[0]!.cluster_id,
    });
  });

  it('a new episode of the same alert (new startsAt) is a second alert; the fleet window finds both', async () => {
    await ingestAlerts([alert('firing', { startsAt: '2026-11-20T11:40:00Z' })], NOW);
    const window = (await listAlertsSince(new Date('2026-11-19T00:00:00Z'), NOW)).filter((a) => a.fingerprint === 'c3f1aa0b9e2d4455');
    expect(window.map((a) => a.status).sort()).toEqual(['Firing', 'Resolved']);
  });

  it('a resolved notification for an alert never seen firing is recorded as resolved', async () => {
    await ingestAlerts([alert('resolved', { fingerprint: 'late0000late0000', startsAt: '2026-11-19T08:00:00Z' })], NOW);
    const [late] = (await listClusterAlerts(clusters[0]!.cluster_id, new Date('2026-11-19T00:00:00Z'))).filter((a) => a.fingerprint === 'late0000late0000');
    expect(late).toMatchObject({ status: 'Resolved', ends_at: '2026-11-20T11:15:00.000Z' });
  });

  it('refuses alerts without a known cluster label, keeping the rest; the cluster label is configurable', async () => {
    const result = await ingestAlerts(
      [alert('firing', { fingerprint: 'ok00000000000001' }), alert('firing', { labels: { alertname: 'X', severity: 'warning' } }),
        alert('firing', { labels: { alertname: 'X', cluster_id: randomUUID() } }), { status: 'weird' }],
      NOW,
    );
    expect(result.accepted).toBe(1);
    expect(result.rejected.map((r) => r.reason)).toEqual([
      'labels.cluster_id: missing (the label that names the cluster)',
      expect.stringMatching(/^cluster_id: unknown cluster/),
      expect.stringMatching(/^status: /),
    ]);
    process.env.ALERT_CLUSTER_LABEL = 'cluster';
    try {
      const relabeled = await ingestAlerts([alert('firing', { fingerprint: 'ok00000000000002', labels: { alertname: 'Y', cluster: clusters[2]!.cluster_id } })], NOW);
      expect(relabeled.accepted).toBe(1);
      expect((await listClusterAlerts(clusters[2]!.cluster_id, new Date('2026-11-20T00:00:00Z')))[0]!.alert_name).toBe('Y');
    } finally {
      delete process.env.ALERT_CLUSTER_LABEL;
    }
  });
});

describe('logs', () => {
  it('stores events once (a resent batch does not duplicate), refusing ones beyond 7 days', async () => {
    const id = clusters[1]!.cluster_id;
    const events = [
      { cluster_id: id, at: '2026-11-20T09:00:00Z', level: 'ERROR', message: 'Query failed: Memory of process exceed limit', source: 'be-2' },
      { cluster_id: id, at: '2026-11-20T09:05:00Z', level: 'warn', message: 'Disk usage 91%', source: 'be-1' },
      { cluster_id: id, at: '2026-11-01T09:00:00Z', level: 'info', message: 'old', source: 'fe' },
      { cluster_id: id, at: '2026-11-20T09:06:00Z', level: 'loud', message: 'x' },
    ];
    const first = await ingestLogs(events, NOW);
    expect(first.accepted).toBe(2);
    expect(first.rejected).toEqual([{ index: 2, reason: 'at: older than the 7-day retention' }, { index: 3, reason: expect.stringMatching(/^level: /) }]);
    await ingestLogs(events.slice(0, 2), NOW);
    const stored = await listClusterLogs(id, new Date('2026-11-19T00:00:00Z'));
    expect(stored).toEqual([
      { cluster_id: id, at: '2026-11-20T09:00:00.000Z', level: 'error', message: 'Query failed: Memory of process exceed limit', source: 'be-2' },
      { cluster_id: id, at: '2026-11-20T09:05:00.000Z', level: 'warn', message: 'Disk usage 91%', source: 'be-1' },
    ]);
  });
});

describe('direct Lambda invocation (CLI through the AWS SDK)', () => {
  const invoke = (event: unknown) => ingestHandler(event, {} as Context);

  it('takes the same bodies as the HTTP routes', async () => {
    const c = cluster('direct-1');
    expect(await invoke({ kind: 'clusters', body: { clusters: [c] } })).toEqual({ accepted: 1, rejected: [] });
    const sample = { cluster_id: c.cluster_id, metric_key: 'disk_used_pct', value: 55, at: new Date().toISOString() };
    expect(await invoke({ kind: 'metrics', body: { samples: [sample] } })).toEqual({ accepted: 1, rejected: [] });
  });

  it('refuses an invocation of the wrong shape with the reason', async () => {
    await expect(invoke({ kind: 'metrics', body: { samples: [] } })).rejects.toThrow(/body\.samples/);
    await expect(invoke({ kind: 'gossip' })).rejects.toThrow(/invalid ingest invocation/);
  });
});
