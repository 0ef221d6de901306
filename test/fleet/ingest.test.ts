// Fleet data ingestion against DynamoDB Local: exact rollups, Alertmanager
// semantics, partial batches, logs, and the direct Lambda invocation.
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as ingestHandler } from '../../functions/ingest.js';
import { listAlertsSince, listClusterAlerts } from '../../shared/db/alerts.js';
import { getItem, putItem } from '../../shared/db/client.js';
import { getCluster } from '../../shared/db/clusters.js';
import { currentIssuesGeneration, listClusterIssues } from '../../shared/db/issues.js';
import { listClusterLogs } from '../../shared/db/logs.js';
import { windowDays } from '../../shared/db/days.js';
import { MAX_MERGE_ATTEMPTS, readClusterRollups, readFleetRollups, shardOf } from '../../shared/db/metrics.js';
import { ingestAlerts, ingestClusters, ingestLogs, ingestMetrics } from '../../shared/fleet/ingest.js';
import {
  ALERT_MAP_ENTRIES_MAX,
  AlertmanagerAlert,
  fitAlertText,
  METRIC_KEYS,
  metricValueRefusal,
  PERCENT_METRIC_KEYS,
  REASON_MAX,
  type ClusterInput,
  type IngestResult,
  type MetricSample,
} from '../../shared/fleet/records.js';
import { decodeCell, encodeCell } from '../../shared/fleet/rollup-columns.js';
import { mergeSample, type DayRollup } from '../../shared/fleet/rollup.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';

const NOW = new Date('2026-11-20T12:00:00Z');
const NEVER_ENDS = '0001-01-01T00:00:00Z';

function cluster(name: string, over: Partial<ClusterInput> = {}): ClusterInput {
  return {
    cluster_id: randomUUID(),
    cluster_name: name,
    customer_name: 'Acme Retail',
    account_id: '123456789012',
    account_name: 'Acme Production',
    email: 'ops@acme.example.com',
    customer_tier: 'S',
    cluster_type: 'ELASTIC',
    region: 'US East (us-east-1)',
    engine_version: '3.2.6',
    resource_state: 'RUNNING',
    node_count: 6,
    ...over,
  };
}

/** Deterministic pseudo-random numbers for the brute-force comparison. */
function seeded(seed: number) {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

let clusters: ClusterInput[];

let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
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

  it("gives a renamed cluster's issues, its whole history, the new names at once; another field's change renames nothing", async () => {
    const renamedCluster = cluster('initech-prod-7', { customer_name: 'Initech' });
    await ingestClusters([renamedCluster], NOW);
    const alert = (status: 'firing' | 'resolved', fingerprint: string, startsAt: string) => ({
      status,
      labels: { alertname: `Renamed${fingerprint}`, cluster_id: renamedCluster.cluster_id, severity: 'warning' },
      annotations: {},
      startsAt,
      endsAt: status === 'resolved' ? new Date(Date.parse(startsAt) + 600_000).toISOString() : '0001-01-01T00:00:00Z',
      fingerprint,
    });
    // One issue resolved hours ago, one open.
    await ingestAlerts([alert('firing', 'r1', '2026-11-20T02:00:00Z'), alert('resolved', 'r1', '2026-11-20T02:00:00Z')], NOW);
    await ingestAlerts([alert('firing', 'r2', '2026-11-20T11:00:00Z')], NOW);
    const names = async () => (await listClusterIssues(renamedCluster.cluster_id)).map((i) => [i.status, i.cluster_name, i.customer_name]);
    expect((await names()).sort()).toEqual([
      ['Ongoing', 'initech-prod-7', 'Initech'],
      ['Resolved', 'initech-prod-7', 'Initech'],
    ]);
    const generation = await currentIssuesGeneration();
    await ingestClusters([{ ...renamedCluster, node_count: 12 }], new Date(NOW.getTime() + 60_000));
    expect(await currentIssuesGeneration()).toBe(generation); // not a rename: no issue written
    await ingestClusters([{ ...renamedCluster, cluster_name: 'initech-primary', customer_name: 'Initech Finance' }], new Date(NOW.getTime() + 120_000));
    expect((await names()).sort()).toEqual([
      ['Ongoing', 'initech-primary', 'Initech Finance'],
      ['Resolved', 'initech-primary', 'Initech Finance'],
    ]);
    expect(await currentIssuesGeneration()).toBeGreaterThan(generation); // the lists' caches read them again
    // A grouping after it keeps the names (it read the renamed issues' new grouping_version).
    await ingestAlerts([alert('firing', 'r2', '2026-11-20T11:00:00Z')], new Date(NOW.getTime() + 180_000));
    expect((await names()).every(([, cluster, customer]) => cluster === 'initech-primary' && customer === 'Initech Finance')).toBe(true);
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

  it('refuses a name or shown field that would read as another: control, bidirectional and zero-width characters; joiners stay', async () => {
    const spoofs: [keyof ClusterInput, string][] = [
      ['cluster_name', '\u202E10-bd-dorp'], // shown as prod-db-01
      ['cluster_name', 'prod-db-01\u200B'],
      ['customer_name', 'Acme\u2066 Corp'],
      ['account_name', 'ops\u0007'],
      ['cluster_name', 'pr\uFEFFod'], // (at either end, trimming takes it off)
      ['cluster_name', 'prod-db-01\u2060'], // word joiner
      ['customer_name', 'Ac\u00ADme'], // soft hyphen
      ['cluster_name', 'prod\u2028db'], // line separator
      ['cluster_name', 'globex-prod-1\u3164'], // Hangul filler: drawn as nothing
      ['customer_name', '\uFFA0\uFFA0'], // halfwidth Hangul fillers: a name that shows blank
      ['cluster_name', 'globex-prod-1\u2800'], // the empty Braille cell: a blank no trim takes off
      ['account_name', 'Admin\u034Fistrator'], // combining grapheme joiner
      // The other fields the console and the cluster_info series show.
      ['region', 'r\u0000nul'],
      ['region', 'eu-west-1\nus-east-1'],
      ['cluster_type', 'T\tab'],
      ['resource_state', 'RUNNING\u200B'],
      ['account_id', 'acc\u001b[31m'],
    ];
    const persian = cluster('mehr-db'); // a customer name whose script needs the zero-width non-joiner
    const emoji = cluster('heart-db'); // an emoji's variation selector stays too
    const result = await ingestClusters(
      [
        ...spoofs.map(([field, name]) => ({ ...cluster('spoof'), [field]: name })),
        { ...persian, customer_name: 'می\u200Cخواهم' },
        { ...emoji, cluster_name: 'heart-\u2764\uFE0F-db' },
      ],
      NOW,
    );
    expect(result.accepted).toBe(2);
    expect(result.rejected.map((r) => r.reason)).toEqual(
      spoofs.map(([field]) => `${field}: must hold no control, bidirectional, zero-width or invisible characters`),
    );
    expect(await getCluster(persian.cluster_id)).toMatchObject({ customer_name: 'می\u200Cخواهم' });
    expect(await getCluster(emoji.cluster_id)).toMatchObject({ cluster_name: 'heart-\u2764\uFE0F-db' });
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
        samples.push({
          cluster_id: c.cluster_id,
          metric_key: METRIC_KEYS[i % 4]!,
          // Up to 1,000, a percentage up to 100 (a larger one is refused).
          value: Math.round(random() * (PERCENT_METRIC_KEYS.has(METRIC_KEYS[i % 4]!) ? 100 : 1000) * 100) / 100,
          at: at.toISOString(),
        });
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
          expect(r.sum).toBeCloseTo(
            mine.reduce((a, s) => a + s.value, 0),
            6,
          );
          expect(r.last).toBe(latest.value);
          expect(r.last_at).toBe(latest.at);
        }
      }
      const total = stored.reduce((n, r) => n + Object.values(r.metrics).reduce((m, x) => m + x!.count, 0), 0);
      expect(total).toBe(samples.filter((s) => s.cluster_id === c.cluster_id).length);
    }
  });

  it('24 batches racing on one cluster-day: each is stored, or refuses just the samples it could not store', async () => {
    const id = clusters[2]!.cluster_id;
    const shared = new Date(NOW.getTime() - 26 * 3_600_000); // yesterday, a day of its own in this file
    // Each batch: one sample of the shared cluster-day, one of a minute of its own on another metric.
    const batches = Array.from({ length: 24 }, (_, b) => [
      { cluster_id: id, metric_key: 'peak_jvm_heap_gb', value: b + 1, at: new Date(shared.getTime() + b * 1000).toISOString() },
      { cluster_id: id, metric_key: 'memory_pct', value: 50, at: new Date(shared.getTime() + b * 1000).toISOString() },
    ]);
    const results = await Promise.allSettled(batches.map((batch) => ingestMetrics(batch, NOW)));
    // Never a failed request whose other samples were stored (a resend would count them twice).
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const answers = results.map((r) => (r as PromiseFulfilledResult<IngestResult>).value);
    for (const a of answers) {
      for (const r of a.rejected) expect(r.reason).toMatch(/^not stored: .* send this record again/);
    }
    const accepted = answers.reduce((n, a) => n + a.accepted, 0);
    const [stored] = await readClusterRollups(id, [shared.toISOString().slice(0, 10)]);
    const counted = stored!.metrics.peak_jvm_heap_gb!.count + stored!.metrics.memory_pct!.count;
    expect(counted).toBe(accepted);
    // A batch is refused only after each of its attempts lost to another's write: at least that many landed.
    expect(accepted).toBeGreaterThanOrEqual(2 * Math.min(batches.length, MAX_MERGE_ATTEMPTS));
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

describe('metric values are bounded (0..1e15) and rollups always finite', () => {
  it('refuses a huge or negative sample per record with the reason, so a day cannot overflow (1.5e308 twice made the sum Infinity, read back as 0)', async () => {
    const id = clusters[2]!.cluster_id;
    const sample = (value: unknown) => ({ cluster_id: id, metric_key: 'max_latency_ms', value, at: '2026-11-20T06:00:00Z' });
    const result = await ingestMetrics(
      [sample(40), sample(1.5e308), sample(1.5e308), sample(-1e16), sample(1e15), sample(-1e15), sample(null), sample(-0.5), sample(0)],
      NOW,
    );
    expect(result.accepted).toBe(3);
    const bound = 'value: must be a finite number from 0 to 1e15';
    expect(result.rejected).toEqual([
      { index: 1, reason: bound },
      { index: 2, reason: bound },
      { index: 3, reason: bound },
      { index: 5, reason: bound },
      { index: 6, reason: expect.stringMatching(/^value: /) },
      { index: 7, reason: bound },
    ]);
    const [day] = await readClusterRollups(id, ['2026-11-20']);
    expect(day!.metrics.max_latency_ms).toMatchObject({ count: 3, sum: 1e15 + 40, min: 0, max: 1e15 });
  });

  it('refuses a percentage above 100 per record (a ratio converted twice read 700%), and takes 100 itself', async () => {
    const id = clusters[2]!.cluster_id;
    const sample = (metric_key: string, value: number) => ({ cluster_id: id, metric_key, value, at: '2026-11-20T07:00:00Z' });
    const [before] = await readClusterRollups(id, ['2026-11-20']);
    const result = await ingestMetrics(
      [sample('disk_used_pct', 700), sample('memory_pct', 219.98), sample('disk_used_pct', 100), sample('error_rate_pct', 100.5), sample('qps', 700)],
      NOW,
    );
    expect(result.accepted).toBe(2);
    expect(result.rejected).toEqual([
      { index: 0, reason: 'value: a percentage must be from 0 to 100' },
      { index: 1, reason: 'value: a percentage must be from 0 to 100' },
      { index: 3, reason: 'value: a percentage must be from 0 to 100' },
    ]);
    const [day] = await readClusterRollups(id, ['2026-11-20']);
    expect(day!.metrics.disk_used_pct).toMatchObject({ count: (before?.metrics.disk_used_pct?.count ?? 0) + 1, max: 100 });
    expect(day!.metrics.memory_pct?.max ?? 0).toBeLessThanOrEqual(100);
    expect(day!.metrics.memory_pct?.count).toBe(before?.metrics.memory_pct?.count);
  });

  it("a pull's points are held to the same rules (metricValueRefusal, shared/metric-pull/pull.ts)", () => {
    expect(metricValueRefusal('disk_used_pct', 700)).toBe('a percentage must be from 0 to 100');
    expect(metricValueRefusal('memory_pct', 100.00000000000001)).toBeUndefined(); // a full disk's 1 − free / size, in floating point
    expect(metricValueRefusal('qps', 700)).toBeUndefined();
    expect(metricValueRefusal('qps', -1)).toBe('must be a finite number from 0 to 1e15');
    expect(metricValueRefusal('memory_pct', Number.NaN)).toBe('must be a finite number from 0 to 1e15');
  });

  it('a day of samples at the bound keeps a finite, exact sum', async () => {
    const id = clusters[2]!.cluster_id;
    const samples = Array.from({ length: 2000 }, (_, i) => ({
      cluster_id: id,
      metric_key: 'slow_queries_7d',
      value: 1e15,
      at: new Date(Date.parse('2026-11-19T00:00:00Z') + i * 1000).toISOString(),
    }));
    await Promise.all([ingestMetrics(samples.slice(0, 1000), NOW), ingestMetrics(samples.slice(1000), NOW)]);
    const [day] = await readClusterRollups(id, ['2026-11-19']);
    expect(day!.metrics.slow_queries_7d).toMatchObject({ count: 2000, sum: 2e18, min: 1e15, max: 1e15, last: 1e15 });
  });

  it('merges a batch once when its write landed but the answer was lost (the retry finds its own write)', async () => {
    const id = clusters[0]!.cluster_id;
    const samples = [10, 20, 30].map((value, i) => ({ cluster_id: id, metric_key: 'qps', value, at: `2026-11-17T0${i}:00:00Z` }));
    let lost = 0;
    const stop = proxy.watch(({ operation, input }) =>
      operation === 'PutItem' && JSON.stringify(input.Item?.pk ?? '').includes('2026-11-17') && lost++ === 0 ? 'lose-answer' : undefined,
    );
    try {
      expect(await ingestMetrics(samples, NOW)).toMatchObject({ accepted: 3 });
    } finally {
      stop();
    }
    expect(lost).toBeGreaterThan(1); // the client sent the put again, and DynamoDB refused it: the version had moved
    const [day] = await readClusterRollups(id, ['2026-11-17']);
    expect(day!.metrics.qps).toMatchObject({ count: 3, sum: 60, min: 10, max: 30, last: 30 });
  });

  it('a rollup stored non-finite before the bound (as JSON, before cells) reads as no data and restarts cleanly on the next sample', async () => {
    const id = clusters[1]!.cluster_id;
    const corrupt = {
      qps: { min: 1.5e308, max: 1.5e308, sum: null, count: 2, last: 1.5e308, last_at: '2026-11-18T10:00:00.000Z' },
      memory_pct: { min: 50, max: 60, sum: 110, count: 2, last: 60, last_at: '2026-11-18T10:00:00.000Z' },
    };
    await putItem('metrics', {
      pk: `ROLLUP#2026-11-18#${shardOf(id)}`,
      sk: `CLUSTER#${id}`,
      cluster_id: id,
      day: '2026-11-18',
      m: JSON.stringify(corrupt),
      version: 1,
    });
    expect((await readClusterRollups(id, ['2026-11-18']))[0]!.metrics).toEqual({ memory_pct: corrupt.memory_pct });
    await ingestMetrics([{ cluster_id: id, metric_key: 'qps', value: 12, at: '2026-11-18T11:00:00Z' }], NOW);
    expect((await readClusterRollups(id, ['2026-11-18']))[0]!.metrics.qps).toEqual({
      min: 12,
      max: 12,
      sum: 12,
      count: 1,
      last: 12,
      last_at: '2026-11-18T11:00:00.000Z',
    });
  });

  it('the merge and the stored cell refuse non-finite numbers instead of storing them', () => {
    const day: DayRollup = {};
    mergeSample(day, { metric_key: 'qps', value: 5, at: '2026-11-20T00:00:00Z' });
    for (const value of [1.5e308, Infinity, NaN, -1e15 - 1e3])
      expect(() => mergeSample(day, { metric_key: 'qps', value, at: '2026-11-20T00:01:00Z' })).toThrow(RangeError);
    expect(day.qps).toEqual({ min: 5, max: 5, sum: 5, count: 1, last: 5, last_at: '2026-11-20T00:00:00.000Z' });
    expect(() => encodeCell({ qps: { ...day.qps!, sum: Infinity } })).toThrow(RangeError);
    expect(decodeCell(encodeCell(day))).toEqual(day);
  });
});

describe('cluster inventory numbers are bounded', () => {
  it('refuses a node_count that is not a whole number in 0..10,000', async () => {
    const result = await ingestClusters(
      [cluster('n1', { node_count: 1e308 }), cluster('n2', { node_count: 2.5 }), cluster('n3', { node_count: -1 }), cluster('n4', { node_count: 10_000 })],
      NOW,
    );
    expect(result.accepted).toBe(1);
    expect(result.rejected.map((r) => [r.index, r.reason.split(':')[0]])).toEqual([
      [0, 'node_count'],
      [1, 'node_count'],
      [2, 'node_count'],
    ]);
  });
});

describe('engine versions', () => {
  it('takes a version of at most 64 characters, each number at most 9 digits, and names the others', async () => {
    const result = await ingestClusters(
      [
        cluster('v1', { engine_version: `3.${'1'.repeat(450_000)}` }),
        cluster('v2', { engine_version: '3.1234567890.1' }),
        cluster('v3', { engine_version: `3.2.1-${'r'.repeat(59)}` }),
        cluster('v4', { engine_version: `3.2.1-${'r'.repeat(58)}` }),
        cluster('v5', { engine_version: '123456789.987654321.1' }),
      ],
      NOW,
    );
    expect(result.accepted).toBe(2);
    expect(result.rejected.map((r) => [r.index, r.reason.split(':')[0]])).toEqual([
      [0, 'engine_version'],
      [1, 'engine_version'],
      [2, 'engine_version'],
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
  /** Receipt times: NOW plus `m` minutes. */
  const at = (m: number) => new Date(NOW.getTime() + m * 60_000);
  const storedOf = async (clusterId: string, fingerprint: string) =>
    (await listClusterAlerts(clusterId, new Date('2026-11-18T00:00:00Z'))).filter((a) => a.fingerprint === fingerprint);
  const issueOf = async (clusterId: string, name: string) => (await listClusterIssues(clusterId)).filter((i) => i.alert_names.includes(name));

  it('stores a severity label no list names as the label capitalised, spaces around it ignored as they are for the named ones', async () => {
    const id = clusters[0]!.cluster_id;
    const sent = [' info ', 'info\t'].map((severity, i) =>
      alert('firing', { fingerprint: `sevspace0000000${i}`, labels: { alertname: 'SeveritySpaces', cluster_id: id, severity } }),
    );
    expect(await ingestAlerts(sent, at(0))).toMatchObject({ accepted: 2, rejected: [] });
    for (const [i] of sent.entries()) expect((await storedOf(id, `sevspace0000000${i}`))[0]).toMatchObject({ severity: 'Info' });
  });

  it('the latest notification wins: fire, repeat, resolve, resolved redelivery, re-fire reopens the alert and its issue', async () => {
    const id = clusters[0]!.cluster_id;
    expect(await ingestAlerts([alert('firing')], at(0))).toEqual({ accepted: 1, rejected: [], duplicates: 0, issues: { created: 1, updated: 0 } });
    expect(await ingestAlerts([alert('firing', { annotations: { summary: 'Disk almost full', description: 'be-1 disk at 94%' } })], at(1))).toMatchObject({
      accepted: 1,
      duplicates: 1,
    }); // repeat
    expect((await storedOf(id, 'c3f1aa0b9e2d4455'))[0]!.detail).toBe('be-1 disk at 94%'); // a repeat still refreshes the text
    expect(await ingestAlerts([alert('resolved')], at(2))).toMatchObject({ duplicates: 0 });
    expect((await issueOf(id, 'DiskUsageHigh'))[0]).toMatchObject({ status: 'Resolved' }); // 11:15 + 30 quiet minutes < 12:02
    expect(await ingestAlerts([alert('resolved')], at(3))).toMatchObject({ accepted: 1, duplicates: 1 }); // resolved redelivery
    // Prometheus restarted (or resolve_timeout passed): the same occurrence fires again
    expect(await ingestAlerts([alert('firing')], at(4))).toMatchObject({ accepted: 1, duplicates: 0 });
    const stored = await storedOf(id, 'c3f1aa0b9e2d4455');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      alert_name: 'DiskUsageHigh',
      severity: 'Critical',
      status: 'Firing',
      starts_at: '2026-11-20T10:00:00.123Z',
      ends_at: null,
      summary: 'Disk almost full',
      detail: 'be-1 disk at 93%',
      dashboard_url: 'https://grafana.example.com/d/disk',
      cluster_id: id,
    });
    const issues = await issueOf(id, 'DiskUsageHigh');
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ status: 'Ongoing', resolved_at: null });
    // and it resolves again, later
    expect(await ingestAlerts([alert('resolved', { endsAt: '2026-11-20T12:03:30Z' })], at(5))).toMatchObject({ duplicates: 0 });
    expect((await storedOf(id, 'c3f1aa0b9e2d4455'))[0]).toMatchObject({ status: 'Resolved', ends_at: '2026-11-20T12:03:30.000Z' });
  });

  it('a resolution resent without an endsAt of its own is a duplicate: its end stays the first receipt, and its issue resolves', async () => {
    const id = clusters[0]!.cluster_id;
    const quiet = (status: 'firing' | 'resolved') =>
      alert(status, {
        labels: { alertname: 'ReplicationStalled', cluster_id: id, severity: 'warning' },
        startsAt: '2026-11-20T11:30:00Z',
        endsAt: '0001-01-01T00:00:00Z', // a relay that sends no end
        fingerprint: 'no-end-of-its-own',
      });
    expect(await ingestAlerts([quiet('firing')], at(0))).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(await ingestAlerts([quiet('resolved')], at(1))).toMatchObject({ accepted: 1, duplicates: 0 });
    // resent every 10 minutes, as a sender whose notification was not acknowledged would
    for (const m of [11, 21, 31, 41]) expect(await ingestAlerts([quiet('resolved')], at(m))).toMatchObject({ accepted: 1, duplicates: 1 });
    expect((await storedOf(id, 'no-end-of-its-own'))[0]).toMatchObject({ status: 'Resolved', ends_at: at(1).toISOString() });
    const item = await getItem('alerts', { pk: `CLUSTER#${id}`, sk: 'ALERT#2026-11-20T11:30:00.000Z#no-end-of-its-own' }, true);
    expect(item).toBeDefined();
    expect(item).not.toHaveProperty('ends_at_received'); // how ingest read the notice, not stored
    // ended at the first receipt, quiet for 40 minutes since: resolved (each resend used to restart its quiet period)
    expect((await issueOf(id, 'ReplicationStalled'))[0]).toMatchObject({ status: 'Resolved', resolved_at: at(1).toISOString() });
  });

  it("a resolution whose endsAt is Go's zero time spelled another way (.000Z, +00:00) ends at its receipt, not at its start", async () => {
    const id = clusters[0]!.cluster_id;
    for (const [n, zero] of ['0001-01-01T00:00:00.000Z', '0001-01-01T00:00:00+00:00', '0001-01-01T05:30:00+05:30'].entries()) {
      const fingerprint = `zero-end-spelling-${n}`;
      const notice = (status: 'firing' | 'resolved') =>
        alert(status, {
          labels: { alertname: `ZeroEnd${n}`, cluster_id: id, severity: 'warning' },
          startsAt: '2026-11-20T11:30:00Z',
          endsAt: zero,
          fingerprint,
        });
      expect(await ingestAlerts([notice('firing')], at(0))).toMatchObject({ accepted: 1, duplicates: 0 });
      expect(await ingestAlerts([notice('resolved')], at(1))).toMatchObject({ accepted: 1, duplicates: 0 });
      // Resent: a duplicate that keeps the first receipt as its end, as with the zero time Alertmanager writes.
      expect(await ingestAlerts([notice('resolved')], at(11))).toMatchObject({ accepted: 1, duplicates: 1 });
      expect((await storedOf(id, fingerprint))[0]).toMatchObject({ status: 'Resolved', ends_at: at(1).toISOString() });
    }
  });

  it('a delivery received before the stored one changes nothing, whatever order they are processed in; so does an older resolution', async () => {
    const id = clusters[1]!.cluster_id;
    const fp = { fingerprint: 'order00000000001', labels: { alertname: 'QueryErrors', cluster_id: id, severity: 'warning' } };
    await ingestAlerts([alert('firing', fp)], at(0));
    await ingestAlerts([alert('resolved', { ...fp, endsAt: '2026-11-20T11:50:00Z' })], at(10));
    // the firing Alertmanager sent before that resolution, processed only now
    expect(await ingestAlerts([alert('firing', fp)], at(9))).toMatchObject({ accepted: 1, duplicates: 1 });
    expect((await storedOf(id, fp.fingerprint))[0]).toMatchObject({ status: 'Resolved', ends_at: '2026-11-20T11:50:00.000Z' });
    // a resolution with an earlier endsAt than the stored one is an older one, even if it arrives later
    expect(await ingestAlerts([alert('resolved', { ...fp, endsAt: '2026-11-20T11:20:00Z' })], at(11))).toMatchObject({ duplicates: 1 });
    expect((await storedOf(id, fp.fingerprint))[0]).toMatchObject({ status: 'Resolved', ends_at: '2026-11-20T11:50:00.000Z' });
  });

  it("firing, resolved, a firing copy, the resolution's copy (an HA peer late): resolved, and the next repeat reopens it", async () => {
    const id = clusters[1]!.cluster_id;
    const fp = { fingerprint: 'hapeer0000000001', labels: { alertname: 'PeerLate', cluster_id: id, severity: 'critical' } };
    const resolved = alert('resolved', { ...fp, endsAt: '2026-11-20T11:20:00Z' });
    await ingestAlerts([alert('firing', fp)], at(0));
    await ingestAlerts([resolved], at(1));
    // Peer B's copies, late: its firing, then its resolution. The same notices come of a re-fire with the same start
    // followed by a late copy of the first resolution; resolving is chosen, since a wrongly resolved alert is reopened
    // by its next repeat and one wrongly kept firing would never hear of it again (Alertmanager sends nothing more).
    expect(await ingestAlerts([alert('firing', fp)], at(2))).toMatchObject({ duplicates: 0 });
    expect(await ingestAlerts([resolved], at(3))).toMatchObject({ duplicates: 0 });
    expect((await storedOf(id, fp.fingerprint))[0]).toMatchObject({ status: 'Resolved', ends_at: '2026-11-20T11:20:00.000Z' });
    expect(await ingestAlerts([alert('firing', fp)], at(4))).toMatchObject({ duplicates: 0 }); // a repeat: firing again
    expect((await storedOf(id, fp.fingerprint))[0]).toMatchObject({ status: 'Firing', ends_at: null });
  });

  it('a notice with no annotations at all keeps the stored text and link; one with annotations replaces them', async () => {
    const id = clusters[1]!.cluster_id;
    const fp = { fingerprint: 'bare0000resolved', labels: { alertname: 'BareResolution', cluster_id: id, severity: 'warning' } };
    await ingestAlerts([alert('firing', fp)], at(0));
    expect(await ingestAlerts([alert('resolved', { ...fp, annotations: {} })], at(1))).toMatchObject({ duplicates: 0 });
    const [kept] = await storedOf(id, fp.fingerprint);
    expect(kept).toMatchObject({
      status: 'Resolved',
      summary: 'Disk almost full',
      detail: 'be-1 disk at 93%',
      dashboard_url: 'https://grafana.example.com/d/disk',
    });
    expect(kept!.annotations).toMatchObject({ description: 'be-1 disk at 93%' });
    await ingestAlerts([alert('firing', { ...fp, annotations: { summary: 'Disk full again' } })], at(2));
    // its link now the generator's, as for any alert without a dashboard_url annotation
    expect((await storedOf(id, fp.fingerprint))[0]).toMatchObject({
      status: 'Firing',
      summary: 'Disk full again',
      dashboard_url: 'http://prometheus/graph?g0.expr=disk',
    });
  });

  it('notifications of one alert in one payload apply in payload order', async () => {
    const id = clusters[1]!.cluster_id;
    const a = { fingerprint: 'payload000000001', labels: { alertname: 'SlowQueries', cluster_id: id } };
    const b = { fingerprint: 'payload000000002', labels: { alertname: 'SlowQueries', cluster_id: id, instance: 'b' } };
    const result = await ingestAlerts([alert('firing', a), alert('resolved', a), alert('resolved', b), alert('firing', b), alert('firing', b)], at(0));
    expect(result).toMatchObject({ accepted: 5, duplicates: 1 });
    expect((await storedOf(id, a.fingerprint))[0]!.status).toBe('Resolved');
    expect((await storedOf(id, b.fingerprint))[0]).toMatchObject({ status: 'Firing', ends_at: null });
  });

  it('concurrent deliveries of stored alerts: the one received last wins, for every alert', async () => {
    const id = clusters[2]!.cluster_id;
    const group = (status: 'firing' | 'resolved', endsAt: string) =>
      Array.from({ length: 60 }, (_, i) =>
        alert(status, { fingerprint: `conc${String(i).padStart(12, '0')}`, labels: { alertname: 'MemoryHigh', cluster_id: id, pod: `p${i}` }, endsAt }),
      );
    await ingestAlerts(group('firing', NEVER_ENDS), at(0));
    // eight deliveries received one minute apart, processed all at once; the last received says resolved at 11:58
    const deliveries = Array.from({ length: 8 }, (_, k) => (k % 2 ? group('firing', NEVER_ENDS) : group('resolved', `2026-11-20T11:5${k + 1}:00Z`)));
    deliveries.push(group('resolved', '2026-11-20T11:58:00Z'));
    await Promise.all([...deliveries.keys()].reverse().map((k) => ingestAlerts(deliveries[k]!, at(1 + k)))); // the latest received starts first
    const stored = (await listClusterAlerts(id, new Date('2026-11-20T00:00:00Z'))).filter((a) => a.alert_name === 'MemoryHigh');
    expect(stored).toHaveLength(60);
    expect(new Set(stored.map((a) => `${a.status} ${a.ends_at}`))).toEqual(new Set(['Resolved 2026-11-20T11:58:00.000Z']));
  });

  it('stores a 3,000-alert notification with batched round trips, not one per alert; its redelivery is 3,000 duplicates', async () => {
    const ids = [clusters[0]!.cluster_id, clusters[1]!.cluster_id, clusters[2]!.cluster_id];
    const big = Array.from({ length: 3000 }, (_, i) =>
      alert('firing', {
        fingerprint: `big${String(i).padStart(13, '0')}`,
        startsAt: '2026-11-20T11:00:00Z',
        labels: { alertname: 'NodeDown', cluster_id: ids[i % 3]!, instance: `be-${i}` },
      }),
    );
    let requests = 0;
    let writes = 0;
    const stopCounting = proxy.observe(({ operation }) => {
      requests += 1;
      if (!/^(Get|BatchGet|Query|Scan)/.test(operation)) writes += 1;
    });
    try {
      expect(await ingestAlerts(big, at(0))).toMatchObject({ accepted: 3000, rejected: [], duplicates: 0 });
      expect(requests).toBeLessThan(200); // 30 reads, 120 batch writes, the cluster check and 3 clusters' grouping
      requests = 0;
      writes = 0;
      expect(await ingestAlerts(big, at(1))).toMatchObject({ accepted: 3000, duplicates: 3000, issues: { created: 0, updated: 0 } });
      // Reads only: 30 for the alerts, the cluster check and the 3 clusters' grouping, which finds nothing to change.
      expect(requests).toBeLessThan(60);
      expect(writes).toBe(0);
    } finally {
      stopCounting();
    }
    const stored = await listAlertsSince(new Date('2026-11-20T00:00:00Z'), NOW);
    expect(stored.filter((a) => a.alert_name === 'NodeDown')).toHaveLength(3000);
  });

  it('the retry of a notification that failed half-way groups the alerts its first attempt wrote', async () => {
    const [a, b] = [clusters[1]!.cluster_id, clusters[2]!.cluster_id];
    const notice = Array.from({ length: 150 }, (_, i) =>
      alert('firing', {
        fingerprint: `half${String(i).padStart(12, '0')}`,
        startsAt: '2026-11-20T09:00:00Z',
        labels: { alertname: i < 75 ? 'HalfA' : 'HalfB', cluster_id: i < 75 ? a : b, instance: `be-${i}` },
      }),
    );
    // DynamoDB refusing the second transaction of first sightings (100 to a transaction): the first is written, the sender gets an error.
    const stop = proxy.watch(({ operation, input }) =>
      operation === 'TransactWriteItems' && JSON.stringify(input).includes('#half000000000149"')
        ? { type: 'AccessDeniedException', message: 'the second batch was refused' }
        : undefined,
    );
    try {
      await expect(ingestAlerts(notice, at(0))).rejects.toThrow('the second batch was refused');
    } finally {
      stop();
    }
    // Alertmanager sends it again: the alerts written before count as duplicates, and still form their issue.
    const retry = await ingestAlerts(notice, at(1));
    expect(retry).toMatchObject({ accepted: 150, duplicates: 100 });
    expect((await issueOf(a, 'HalfA')).map((i) => [i.status, i.alert_count])).toEqual([['Ongoing', 75]]);
    expect((await issueOf(b, 'HalfB')).map((i) => [i.status, i.alert_count])).toEqual([['Ongoing', 75]]);
  });

  it('a new episode of the same alert (new startsAt) is a second alert; the fleet window finds both', async () => {
    const fp = { fingerprint: 'episode000000001' };
    await ingestAlerts([alert('firing', fp)], at(0));
    await ingestAlerts([alert('resolved', fp)], at(1));
    await ingestAlerts([alert('firing', { ...fp, startsAt: '2026-11-20T11:40:00Z' })], at(2));
    const window = (await listAlertsSince(new Date('2026-11-19T00:00:00Z'), NOW)).filter((a) => a.fingerprint === fp.fingerprint);
    expect(window.map((a) => a.status).sort()).toEqual(['Firing', 'Resolved']);
  });

  it('a resolved notification for an alert never seen firing is recorded as resolved', async () => {
    await ingestAlerts([alert('resolved', { fingerprint: 'late0000late0000', startsAt: '2026-11-19T08:00:00Z' })], NOW);
    const [late] = (await listClusterAlerts(clusters[0]!.cluster_id, new Date('2026-11-19T00:00:00Z'))).filter((a) => a.fingerprint === 'late0000late0000');
    expect(late).toMatchObject({ status: 'Resolved', ends_at: '2026-11-20T11:15:00.000Z' });
  });

  it('refuses alerts without a known cluster label, keeping the rest; the cluster label is configurable', async () => {
    const result = await ingestAlerts(
      [
        alert('firing', { fingerprint: 'ok00000000000001' }),
        alert('firing', { labels: { alertname: 'X', severity: 'warning' } }),
        alert('firing', { labels: { alertname: 'X', cluster_id: randomUUID() } }),
        { status: 'weird' },
        // No inventory record can carry this id (POST /api/ingest/clusters refuses it): not "unknown cluster", whose fix is the inventory's.
        alert('firing', { labels: { alertname: 'X', cluster_id: '11111111-2222-3333-4444-555555555555' } }),
      ],
      NOW,
    );
    expect(result.accepted).toBe(1);
    expect(result.rejected.map((r) => r.reason)).toEqual([
      'labels.cluster_id: missing (the label that names the cluster)',
      expect.stringMatching(/^cluster_id: unknown cluster/),
      expect.stringMatching(/^status: /),
      'labels.cluster_id: not a cluster id (a UUID, as the inventory names clusters)',
    ]);
    process.env.ALERT_CLUSTER_LABEL = 'cluster';
    try {
      const relabeled = await ingestAlerts(
        [alert('firing', { fingerprint: 'ok00000000000002', labels: { alertname: 'Y', cluster: clusters[2]!.cluster_id } })],
        NOW,
      );
      expect(relabeled.accepted).toBe(1);
      expect((await storedOf(clusters[2]!.cluster_id, 'ok00000000000002'))[0]!.alert_name).toBe('Y');
    } finally {
      delete process.env.ALERT_CLUSTER_LABEL;
    }
  });

  it('refuses an alert whose cluster label cannot name a stored cluster (a key DynamoDB refuses) by itself, keeping the rest', async () => {
    const result = await ingestAlerts(
      [
        alert('firing', { fingerprint: 'ok00000000000003' }),
        alert('firing', { fingerprint: 'long000000000001', labels: { alertname: 'X', cluster_id: 'y'.repeat(1020) } }),
        alert('firing', { fingerprint: 'long000000000002', labels: { alertname: 'X', cluster_id: '集'.repeat(400) } }),
      ],
      NOW,
    );
    expect(result.accepted).toBe(1);
    expect(result.rejected.map((r) => [r.index, r.reason])).toEqual([
      [1, 'labels.cluster_id: not a cluster id (a UUID, as the inventory names clusters)'],
      [2, 'labels.cluster_id: not a cluster id (a UUID, as the inventory names clusters)'],
    ]);
  });

  it('refuses an alert whose labels or annotations hold the key __proto__ (dropped unchecked before), keeping the rest', async () => {
    const raw = (over: string) =>
      JSON.parse(
        `{"status":"firing","labels":{"alertname":"X","cluster_id":"${clusters[0]!.cluster_id}"${over === 'labels' ? ',"__proto__":"x"' : ''}},` +
          `"annotations":{"summary":"s"${over === 'annotations' ? ',"__proto__":{"a":1}' : ''}},"startsAt":"2026-11-20T10:30:00Z"}`,
      );
    const result = await ingestAlerts([raw('labels'), raw('annotations'), raw('none')], NOW);
    expect(result.accepted).toBe(1);
    expect(result.rejected.map((r) => [r.index, r.reason])).toEqual([
      [0, expect.stringContaining('__proto__')],
      [1, expect.stringContaining('__proto__')],
    ]);
  });

  it('refuses an alert with a map of 130,000 bad labels by itself, with a short reason (zod overflowed the stack: a 500 for the whole notification)', async () => {
    const labels: Record<string, unknown> = { alertname: 'X', cluster_id: clusters[0]!.cluster_id };
    for (let i = 0; i < 130_000; i++) labels[`k${i}`] = 1;
    const huge = { status: 'firing', labels, annotations: {}, startsAt: '2026-11-20T10:30:00Z' };
    // Under the map bound, every value bad: the reason names the first few and counts the rest.
    const many = {
      ...huge,
      labels: Object.fromEntries(
        Object.keys(labels)
          .slice(0, ALERT_MAP_ENTRIES_MAX)
          .map((k) => [k, 1]),
      ),
    };
    const result = await ingestAlerts([alert('firing', { fingerprint: 'ok00000000000009' }), huge, many], NOW);
    expect(result.accepted).toBe(1);
    expect(result.rejected.map((r) => [r.index, r.reason])).toEqual([
      [1, 'labels: at most 10,000 entries'],
      [2, expect.stringMatching(/^labels\.alertname: .*; and 9,995 more$/)],
    ]);
    expect(result.rejected[1]!.reason.length).toBeLessThanOrEqual(REASON_MAX);
    // Unknown keys, which zod names in one message, make no longer a reason.
    const sample = { cluster_id: clusters[0]!.cluster_id, metric_key: METRIC_KEYS[0], value: 1, at: '2026-11-20T10:30:00Z' };
    const extra = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`extra${i}`, 1]));
    const metrics = await ingestMetrics([{ ...sample, ...extra }], NOW);
    expect(metrics.rejected[0]!.reason).toMatch(/^record: Unrecognized keys: "extra0", .*…$/);
    expect(metrics.rejected[0]!.reason.length).toBe(REASON_MAX);
  });

  it('cuts an alert whose labels and annotations pass 64 KB to fit, longest annotation first, rather than lose it and its resolution', async () => {
    const base = alert('firing');
    const result = await ingestAlerts(
      [
        alert('firing', { fingerprint: 'big0000000000001', annotations: { summary: 'disk full', description: 'x'.repeat(500_000) } }),
        alert('firing', { fingerprint: 'big0000000000002', labels: { ...base.labels, [`k${'e'.repeat(300)}`]: 'v' } }),
        alert('firing', { fingerprint: 'big0000000000003', annotations: { description: 'd'.repeat(60_000), runbook: 'r'.repeat(3_000) } }),
      ],
      NOW,
    );
    expect(result.accepted).toBe(2);
    // A label name over 256 characters is no text to cut: refused, as before.
    expect(result.rejected.map((r) => [r.index, r.reason])).toEqual([[1, expect.stringMatching(/^labels\./)]]);
    const [cut] = await storedOf(clusters[0]!.cluster_id, 'big0000000000001');
    expect(cut!.summary).toBe('disk full');
    expect(cut!.detail).toMatch(/^x+…$/);
    expect(cut!.detail.length).toBeGreaterThan(60_000);
    expect(Buffer.byteLength(JSON.stringify(cut!.labels)) + Buffer.byteLength(JSON.stringify(cut!.annotations))).toBeLessThanOrEqual(64 * 1024);
    // Within the bound: kept whole.
    expect((await storedOf(clusters[0]!.cluster_id, 'big0000000000003'))[0]!.detail).toHaveLength(60_000);
    // Sent again (Alertmanager's repeat), it is the same alert: nothing new.
    const again = await ingestAlerts(
      [alert('firing', { fingerprint: 'big0000000000001', annotations: { summary: 'disk full', description: 'x'.repeat(500_000) } })],
      NOW,
    );
    expect(again).toMatchObject({ accepted: 1, duplicates: 1 });
  });

  it('counts the 64 KB in UTF-8 bytes, and cuts a label value over 1,024 characters (labels are copied into issues)', async () => {
    const base = alert('firing');
    const result = await ingestAlerts(
      [
        // 22,000 three-byte characters: 22 K characters, 66 KB.
        alert('firing', { fingerprint: 'utf0000000000001', annotations: { description: '中'.repeat(22_000) } }),
        alert('firing', { fingerprint: 'utf0000000000002', labels: { ...base.labels, alertname: 'A'.repeat(1_500) } }),
        alert('firing', {
          fingerprint: 'utf0000000000003',
          labels: { ...base.labels, alertname: 'A'.repeat(1_024) },
          annotations: { description: '中'.repeat(20_000) },
        }),
      ],
      NOW,
    );
    expect(result).toMatchObject({ accepted: 3, rejected: [] });
    const [wide] = await storedOf(clusters[0]!.cluster_id, 'utf0000000000001');
    expect(wide!.detail).toMatch(/^中+…$/);
    expect(Buffer.byteLength(JSON.stringify(wide!.annotations))).toBeLessThanOrEqual(64 * 1024);
    const [long] = await storedOf(clusters[0]!.cluster_id, 'utf0000000000002');
    expect(long!.labels.alertname).toBe(`${'A'.repeat(1_023)}…`);
    expect((await storedOf(clusters[0]!.cluster_id, 'utf0000000000003'))[0]!.alert_name).toHaveLength(1_024);
  });

  it('fits text whose wide or escaped characters come first (a cut by the average undershot, and refused it)', () => {
    const base = alert('firing');
    for (const [name, description] of [
      ['CJK, then ASCII', `${'中'.repeat(20_000)}${'a'.repeat(60_000)}`],
      ['control characters, then ASCII', `${'\u0001'.repeat(10_000)}${'a'.repeat(50_000)}`],
      ['quotes, then ASCII', `${'"'.repeat(20_000)}${'a'.repeat(40_000)}`],
      ['emoji, then ASCII', `${'🔥'.repeat(10_000)}${'a'.repeat(40_000)}`],
    ]) {
      const parsed = AlertmanagerAlert.safeParse(fitAlertText({ ...base, annotations: { summary: 's', description } }));
      expect(parsed.success, name).toBe(true);
      const { labels, annotations } = parsed.data!;
      const bytes = Buffer.byteLength(JSON.stringify(labels)) + Buffer.byteLength(JSON.stringify(annotations));
      expect(bytes, name).toBeLessThanOrEqual(64 * 1024);
      expect(bytes, name).toBeGreaterThan(64 * 1024 - 16); // cut to the bound, not far below it
      expect(annotations.description!.endsWith('…'), name).toBe(true);
      expect(annotations.description!, name).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // never half an emoji
    }
  });

  it('refuses an alert whose labels alone pass 64 KB: nothing of it is text an ellipsis can stand for', async () => {
    const base = alert('firing');
    const labels = { ...base.labels, ...Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`l${i}`, 'v'.repeat(1_000)])) };
    const result = await ingestAlerts([alert('firing', { fingerprint: 'lab0000000000001', labels })], NOW);
    expect(result.rejected).toEqual([{ index: 0, reason: 'annotations: labels and annotations together must be at most 64 KB' }]);
  });

  it('refuses a startsAt in the future or over ten years back (a zero time), or an end beyond the retention; a resolution time is kept within [startsAt, receipt]', async () => {
    const id = clusters[0]!.cluster_id;
    const result = await ingestAlerts(
      [
        alert('firing', { fingerprint: 'time000000000001', startsAt: '9999-12-31T00:00:00Z' }),
        alert('resolved', { fingerprint: 'time000000000002', startsAt: '2025-10-01T00:00:00Z', endsAt: '2025-10-02T00:00:00Z' }),
        alert('resolved', { fingerprint: 'time000000000003', startsAt: '2026-11-20T09:00:00Z', endsAt: '9999-01-01T00:00:00Z' }),
        alert('resolved', { fingerprint: 'time000000000004', startsAt: '2026-11-20T09:00:00Z', endsAt: '2020-01-01T00:00:00Z' }),
        alert('firing', { fingerprint: 'time000000000005', startsAt: '0001-01-01T00:00:00Z' }),
      ],
      NOW,
    );
    expect(result.rejected).toEqual([
      { index: 0, reason: 'startsAt: in the future' },
      { index: 1, reason: 'endsAt: older than the 400-day retention' },
      { index: 4, reason: 'startsAt: more than ten years ago: not an alert start' },
    ]);
    expect((await storedOf(id, 'time000000000003'))[0]!.ends_at).toBe(NOW.toISOString());
    expect((await storedOf(id, 'time000000000004'))[0]!.ends_at).toBe('2026-11-20T09:00:00.000Z');
  });
});

describe('refused records are logged', () => {
  it('one warn line per request, with counts per reason', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => lines.push(String(chunk)) > 0);
    process.env.LOG_LEVEL = 'warn';
    try {
      const orphan = () => ({ status: 'firing', labels: { alertname: 'X', cluster_id: randomUUID() }, startsAt: NOW.toISOString() });
      const result = await ingestAlerts([orphan(), orphan(), orphan(), { status: 'firing', labels: { alertname: 'X' }, startsAt: NOW.toISOString() }], NOW);
      expect(result.rejected).toHaveLength(4);
      await ingestAlerts([], NOW); // nothing refused: no line
    } finally {
      spy.mockRestore();
      process.env.LOG_LEVEL = 'silent';
    }
    const warns = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 'warn');
    expect(warns).toEqual([
      expect.objectContaining({
        service: 'ingest',
        message: 'ingest refused records',
        kind: 'alerts',
        accepted: 0,
        rejected: 4,
        reasons: { 'cluster_id: unknown cluster': 3, 'labels.cluster_id: missing (the label that names the cluster)': 1 },
        // Each refused alert named: its index, reason, alert name and cluster.
        refused: [0, 1, 2]
          .map((index) => ({ index, reason: expect.stringMatching(/^cluster_id: unknown cluster /), alertname: 'X', cluster: expect.any(String) }))
          .concat([{ index: 3, reason: 'labels.cluster_id: missing (the label that names the cluster)', alertname: 'X' } as never]),
      }),
    ]);
  });
});

describe('a notification cut short by max_alerts', () => {
  it('is stored and its truncatedAlerts count logged at warn', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => lines.push(String(chunk)) > 0);
    process.env.LOG_LEVEL = 'warn';
    let result: unknown;
    try {
      const a = {
        status: 'firing',
        labels: { alertname: 'Cut', cluster_id: clusters[0]!.cluster_id },
        startsAt: NOW.toISOString(),
        fingerprint: 'cut0000000000001',
      };
      result = await ingestHandler({ kind: 'alerts', body: { version: '4', truncatedAlerts: 1200, alerts: [a] } }, {} as Context);
    } finally {
      spy.mockRestore();
      process.env.LOG_LEVEL = 'silent';
    }
    expect(result).toMatchObject({ accepted: 1 });
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([expect.objectContaining({ level: 'warn', truncated: 1200, sent: 1 })]);
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
    expect(first.rejected).toEqual([
      { index: 2, reason: 'at: older than the 7-day retention' },
      { index: 3, reason: expect.stringMatching(/^level: /) },
    ]);
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

  it('stores a lone surrogate as U+FFFD, as the HTTP routes do', async () => {
    const c = cluster('direct-2');
    // As the runtime parses the payload `{"cluster_name": "db \\ud800"}`.
    expect(await invoke({ kind: 'clusters', body: { clusters: [{ ...c, cluster_name: 'db \ud800' }] } })).toEqual({ accepted: 1, rejected: [] });
    expect((await getCluster(c.cluster_id))?.cluster_name).toBe('db \uFFFD');
  });

  it('refuses an invocation of the wrong shape with the reason as its answer, not as a function error (which would alarm)', async () => {
    expect(await invoke({ kind: 'metrics', body: { samples: [] } })).toEqual({
      error: 'invalid ingest invocation',
      detail: expect.stringMatching(/^body\.samples: /),
    });
    expect(await invoke({ kind: 'gossip' })).toEqual({ error: 'invalid ingest invocation', detail: expect.stringMatching(/^kind: /) });
  });
});
