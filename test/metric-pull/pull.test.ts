// The metrics puller against a real Prometheus (Debian's `prometheus`, loaded
// with three days of history by `promtool tsdb create-blocks-from openmetrics`):
// rollups equal a brute-force computation over the same samples and the scores
// follow; a second pull adds only what is new; a replayed window (a run that
// died before its watermark moved) adds nothing; an unreachable or erroring
// server leaves stored data untouched and is reported; a cluster whose series
// stop is flagged stale; the inventory comes from an info series.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/dynamodb-local.js';
import { getCluster, listClusters } from '../../shared/db/clusters.js';
import { putPullStates, readPullStates } from '../../shared/db/metric-pulls.js';
import { windowDays } from '../../shared/db/days.js';
import { readFleetRollups } from '../../shared/db/metrics.js';
import { ingestClusters } from '../../shared/fleet/ingest.js';
import { clusterFields } from '../../shared/fleet/records.js';
import type { DayRollup } from '../../shared/fleet/rollup.js';
import { metricConcurrency, pullMetrics } from '../../shared/metric-pull/pull.js';
import { metricSourcesStatus } from '../../shared/metric-pull/status.js';
import { computeFleetView } from '../../shared/scoring/fleet-view.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';
import { metricSourcesYaml, useMetricSources } from '../support/metric-sources.js';
import { submitRuleSet } from '../../shared/rules/editing.js';
import type { Principal } from '../../shared/auth/principal.js';
import { openMetrics, startPrometheus, type RunningPrometheus } from '../support/prometheus.js';

const noWait = async () => {};

const MINUTE = 60;
// The history: one sample a minute per cluster and metric, ending ten minutes ago, on the minute.
const T2 = Math.floor(Date.now() / 1000 / MINUTE) * MINUTE - 10 * MINUTE;
/** The first pull stops here; the second reaches T2. */
const T1 = T2 - 60 * MINUTE;
const START = T2 - 3 * 86_400;

const clusters = Array.from({ length: 4 }, (_, i) => ({ id: randomUUID(), name: `pull-${i}` }));
const [fresh, named, stale, other] = clusters as [(typeof clusters)[number], (typeof clusters)[number], (typeof clusters)[number], (typeof clusters)[number]];
/** Not in the inventory: its points are refused as ingest refuses them. */
const unknownId = randomUUID();
/** Only in the info series: the inventory pull adds it. */
const discovered = { id: randomUUID(), name: 'found-in-prometheus' };
/** The stale cluster's series stop a day before the end. */
const STALE_FROM = T2 - 86_400;

/** A deterministic, wavy value per (cluster, metric, time). */
function sampleValue(cluster: number, metric: number, t: number): number {
  const x = Math.sin(t / 3_600 + cluster * 1.7 + metric) * 0.5 + 0.5;
  return Math.round((metric === 1 ? 0.3 + 0.6 * x : 10 + 900 * x) * 1000) / 1000;
}

const SERIES = ['fh_compaction_score', 'fh_disk_used_ratio', 'fh_qps'] as const;
const METRIC_OF = { fh_compaction_score: 'compaction_score', fh_disk_used_ratio: 'disk_used_pct', fh_qps: 'qps' } as const;
const FACTOR = { fh_compaction_score: 1, fh_disk_used_ratio: 100, fh_qps: 1 } as const;

interface Raw {
  cluster: string;
  metric: (typeof METRIC_OF)[keyof typeof METRIC_OF];
  t: number;
  value: number;
}
const raw: Raw[] = [];

function history(): string {
  const series: Parameters<typeof openMetrics>[0] = [];
  const everyone = [...clusters.map((c) => c.id), unknownId, discovered.id];
  everyone.forEach((id, ci) => {
    SERIES.forEach((name, mi) => {
      const samples: [number, number][] = [];
      const until = id === stale.id ? STALE_FROM : T2;
      for (let t = START; t <= until; t += MINUTE) {
        const value = sampleValue(ci, mi, t);
        samples.push([t * 1000, value]);
        raw.push({ cluster: id, metric: METRIC_OF[name], t, value: value * FACTOR[name] });
      }
      series.push({ name, labels: { cluster_id: id, instance: `fe-${ci}:8030` }, samples });
    });
  });
  // The info series of the discovered cluster: one sample every 5 minutes, value 1.
  const info: [number, number][] = [];
  for (let t = START; t <= T2; t += 5 * MINUTE) info.push([t * 1000, 1]);
  series.push({
    name: 'fh_cluster_info',
    labels: { cluster_id: discovered.id, cluster_name: discovered.name, customer: 'Acme Found', tier: 'A', region: 'eu-west-1' },
    samples: info,
  });
  return openMetrics(series);
}

const ROOT: Principal = { userId: 'u-root', username: 'root', name: 'Root', email: 'root@example.com', role: 'superadmin' };

const QUERIES = [
  { key: 'compaction_score', query: 'max by (cluster_id) (last_over_time(fh_compaction_score[59s]))' },
  { key: 'disk_used_pct', query: 'max by (cluster_id) (last_over_time(fh_disk_used_ratio[59s]))', convert: 'ratio_to_percent' },
  { key: 'qps', query: 'sum by (cluster_id) (last_over_time(fh_qps[59s]))' },
];
const INVENTORY = {
  query: 'max by (cluster_id, cluster_name, customer, tier, region) (fh_cluster_info)',
  labels: { cluster_name: 'cluster_name', customer_name: 'customer', customer_tier: 'tier', region: 'region' },
};

/** The test's source: three days of backfill, small requests (so windows are split), the given extra metrics and inventory. */
const useSources = (url: string, extra: { metrics?: typeof QUERIES; inventory?: boolean } = {}) =>
  useMetricSources({
    url,
    backfillDays: 3,
    maxPointsPerRequest: 5000,
    metrics: [...QUERIES, ...(extra.metrics ?? [])],
    inventory: extra.inventory ? INVENTORY : undefined,
  });

/** Brute force: each cluster-day's min, max, sum, count and last over the raw samples up to `until`. */
function expectedRollups(until: number): Map<string, DayRollup> {
  const days = new Map<string, DayRollup>();
  for (const s of raw) {
    if (s.t > until || s.cluster === unknownId) continue;
    const key = `${s.cluster}|${new Date(s.t * 1000).toISOString().slice(0, 10)}`;
    const day = days.get(key) ?? {};
    const r = day[s.metric];
    const at = new Date(s.t * 1000).toISOString();
    if (!r) day[s.metric] = { min: s.value, max: s.value, sum: s.value, count: 1, last: s.value, last_at: at };
    else {
      r.min = Math.min(r.min, s.value);
      r.max = Math.max(r.max, s.value);
      r.sum += s.value;
      r.count++;
      if (at >= r.last_at) Object.assign(r, { last: s.value, last_at: at });
    }
    days.set(key, day);
  }
  return days;
}

async function storedRollups(): Promise<Map<string, DayRollup>> {
  const byCluster = await readFleetRollups(windowDays(5, new Date(T2 * 1000)));
  const out = new Map<string, DayRollup>();
  for (const [cluster, list] of byCluster) for (const r of list) out.set(`${cluster}|${r.day}`, r.metrics);
  return out;
}

function expectRollupsEqual(stored: Map<string, DayRollup>, expected: Map<string, DayRollup>, clusterIds: readonly string[]) {
  const pick = (m: Map<string, DayRollup>) => [...m.keys()].filter((k) => clusterIds.includes(k.split('|')[0]!)).sort();
  expect(pick(stored)).toEqual(pick(expected));
  for (const key of pick(expected)) {
    const want = expected.get(key)!;
    const got = stored.get(key)!;
    expect(Object.keys(got).sort(), key).toEqual(Object.keys(want).sort());
    for (const metric of Object.keys(want) as (keyof DayRollup)[]) {
      const [g, w] = [got[metric]!, want[metric]!];
      expect({ ...g, sum: 0 }, `${key} ${metric}`).toEqual({ ...w, sum: 0 });
      expect(g.sum, `${key} ${metric} sum`).toBeCloseTo(w.sum, 6);
    }
  }
}

let prometheus: RunningPrometheus;

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  prometheus = await startPrometheus({ history: history() });
  const inventory = clusters.map((c, i) => ({
    cluster_id: c.id,
    cluster_name: c.name,
    customer_name: 'Pull Test',
    account_id: 'acc-pull',
    account_name: 'Pull Test',
    email: 'ops@example.com',
    customer_tier: (['S', 'A', 'B', 'B'] as const)[i],
    cluster_type: 'shared_nothing',
    region: 'us-east-1',
    engine_version: '3.3.2',
    resource_state: 'Running',
    node_count: 3,
  }));
  expect((await ingestClusters(inventory)).accepted).toBe(4);
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
});

describe('pulling from a real Prometheus', () => {
  it('does nothing while the shipped default keeps the source disabled, and says so', async () => {
    const result = await pullMetrics({ now: new Date(T1 * 1000), sleep: noWait });
    expect(result.outcome).toBe('disabled');
    const status = await metricSourcesStatus(new Date(T1 * 1000));
    expect(status).toMatchObject({ enabled: false, rules_version: 0, last_run: { outcome: 'disabled' } });
    expect(status.metrics.every((m) => m.watermark === null)).toBe(true);
    expect((await storedRollups()).size).toBe(0);
  });

  it('backfills the lookback: every cluster-day equals the brute-force rollup of the samples, unknown clusters refused', async () => {
    await useSources(prometheus.url);
    // A run whose time runs short (a Lambda's remaining time) stops between windows: here after its first.
    let asked = 0;
    const short = await pullMetrics({ now: new Date(T1 * 1000), sleep: noWait, remainingMs: () => (++asked <= 2 ? 600_000 : 60_000) });
    // not every window pulled: partial, and no full success to its name
    expect(short.outcome).toBe('partial');
    expect((await metricSourcesStatus(new Date(T1 * 1000))).last_success_at).toBeNull();
    const afterShort = await readPullStates(['compaction_score']);
    expect(afterShort.get('compaction_score')?.watermark).toBeLessThan(T1);
    expect(afterShort.get('compaction_score')?.watermark).toBeGreaterThan(T1 - 3 * 86_400);
    // The next run goes on from the watermarks, and the two together store exactly the samples.
    const result = await pullMetrics({ now: new Date(T1 * 1000), sleep: noWait });
    expect(result.outcome).toBe('ok');
    expectRollupsEqual(await storedRollups(), expectedRollups(T1), [fresh.id, named.id, stale.id, other.id]);
    result.refused += short.refused;
    // The unknown cluster's points (3 metrics, one a minute over the backfill) are refused, nothing stored for it.
    const unknownPoints = raw.filter((s) => s.cluster === unknownId && s.t >= T1 - 3 * 86_400 && s.t <= T1).length;
    expect(result.refused).toBe(unknownPoints + raw.filter((s) => s.cluster === discovered.id && s.t >= T1 - 3 * 86_400 && s.t <= T1).length);
    expect((await storedRollups()).has(`${unknownId}|${new Date(T1 * 1000).toISOString().slice(0, 10)}`)).toBe(false);

    const status = await metricSourcesStatus(new Date(T1 * 1000 + 30_000));
    expect(status.enabled).toBe(true);
    expect(status.last_success_at).not.toBeNull();
    for (const m of status.metrics) {
      expect(m.watermark).toBe(new Date(T1 * 1000).toISOString());
      expect(m.lag_seconds).toBe(30);
      expect(m.last_error).toBeNull();
      expect(m.refusal_last).toMatch(/^cluster_id: unknown cluster \(\d+ points\)$/);
    }
  });

  it('scores follow the pulled data, and the cluster whose series stopped is flagged stale', async () => {
    const view = await computeFleetView(new Date(T1 * 1000));
    const expected = expectedRollups(T1);
    const maxOf = (cluster: string, metric: 'compaction_score') =>
      Math.max(...[...expected].filter(([k]) => k.startsWith(cluster)).map(([, d]) => d[metric]!.max));
    for (const c of [fresh, named, stale, other]) {
      const risk = view.snapshots.find((s) => s.cluster_id === c.id)!;
      // The risk rules aggregate compaction_score by max over their lookback (longer than the history).
      expect(risk.metrics.compaction_score?.value).toBeCloseTo(maxOf(c.id, 'compaction_score'), 2);
    }
    const staleScore = view.scores.find((s) => s.cluster_id === stale.id)!;
    expect(staleScore.metrics_stale).toBe(true);
    expect(staleScore.last_metric_at).toBe(new Date(STALE_FROM * 1000).toISOString());
    expect(staleScore.risk_reasons[0]).toMatch(/^no metrics since /);
    const freshScore = view.scores.find((s) => s.cluster_id === fresh.id)!;
    expect(freshScore.metrics_stale).toBe(false);
    expect(freshScore.last_metric_at).toBe(new Date(T1 * 1000).toISOString());
  });

  it('a second pull adds only what is new; a third with nothing new changes nothing', async () => {
    const second = await pullMetrics({ now: new Date(T2 * 1000), sleep: noWait });
    expect(second.outcome).toBe('ok');
    const newPoints = raw.filter((s) => s.t > T1 && s.t <= T2 && s.cluster !== unknownId && s.cluster !== discovered.id).length;
    expect(second.accepted).toBe(newPoints);
    expectRollupsEqual(await storedRollups(), expectedRollups(T2), [fresh.id, named.id, stale.id, other.id]);

    const third = await pullMetrics({ now: new Date(T2 * 1000 + 30_000), sleep: noWait });
    expect(third).toMatchObject({ outcome: 'ok', accepted: 0, refused: 0 });
    expectRollupsEqual(await storedRollups(), expectedRollups(T2), [fresh.id, named.id, stale.id, other.id]);
  });

  it('replays a window whose run died before the watermark moved without counting it twice', async () => {
    const states = await readPullStates(['compaction_score', 'disk_used_pct', 'qps']);
    // As if the last run wrote its window's rollups and died: the window pending, the watermark before it.
    // (A window never crosses midnight: the second pull's last one starts there when the hour did.)
    const from = Math.max(T1 + MINUTE, Math.floor(T2 / 86_400) * 86_400);
    await putPullStates([...states.values()].map((s) => ({ ...s, watermark: from - MINUTE, pending_from: from, pending_to: T2 })));
    const replay = await pullMetrics({ now: new Date(T2 * 1000 + 60_000), sleep: noWait });
    expect(replay.outcome).toBe('ok');
    expectRollupsEqual(await storedRollups(), expectedRollups(T2), [fresh.id, named.id, stale.id, other.id]);
    const after = await readPullStates(['compaction_score']);
    expect(after.get('compaction_score')).toMatchObject({ watermark: T2 + MINUTE, pending_from: null, pending_to: null });
  });

  it('an unreachable server leaves stored data untouched and is reported per metric', async () => {
    const before = await storedRollups();
    const closed = await freePort();
    await useSources(`http://127.0.0.1:${closed}`);
    const result = await pullMetrics({ now: new Date(T2 * 1000 + 120_000), sleep: noWait });
    expect(result.outcome).toBe('failed');
    expect(await storedRollups()).toEqual(before);
    const status = await metricSourcesStatus(new Date(T2 * 1000 + 120_000));
    expect(status.last_run?.outcome).toBe('failed');
    for (const m of status.metrics) {
      expect(m.watermark).toBe(new Date((T2 + MINUTE) * 1000).toISOString());
      expect(m.last_error?.message).toMatch(/unreachable/);
    }
    expect(status.errors.length).toBeGreaterThanOrEqual(3);
  });

  it('a query the server refuses fails that metric only; the others go on', async () => {
    await useSources(prometheus.url, { metrics: [{ key: 'memory_pct', query: 'sum by (cluster_id) (fh_qps[' }] });
    const before = await storedRollups();
    const result = await pullMetrics({ now: new Date(T2 * 1000 + 180_000), sleep: noWait });
    expect(result.outcome).toBe('partial');
    const failed = result.metrics.find((m) => m.metric_key === 'memory_pct')!;
    expect(failed.error).toMatch(/^400 .*bad_data/);
    // memory_pct stored nothing; the others moved on (there was nothing new to add).
    const after = await storedRollups();
    for (const [key, day] of after) expect(day.memory_pct, key).toBeUndefined();
    expect(after).toEqual(before);
    expect((await readPullStates(['qps'])).get('qps')?.watermark).toBe(T2 + 180);
    const status = await metricSourcesStatus();
    expect(status.metrics.find((m) => m.metric_key === 'memory_pct')?.last_error?.message).toMatch(/bad_data/);
    expect(status.metrics.find((m) => m.metric_key === 'qps')?.last_error).toBeNull();
  });

  it('refuses negative values as ingest does: nothing stored for the metric, and its status says why', async () => {
    // The test's own qps turned negative, as a sign flipped in a query would: no metric of the catalogue is.
    await useSources(prometheus.url, { metrics: [{ key: 'memory_pct', query: '-1 * sum by (cluster_id) (last_over_time(fh_qps[59s]))' }] });
    const result = await pullMetrics({ now: new Date(T2 * 1000 + 240_000), sleep: noWait });
    const negative = result.metrics.find((m) => m.metric_key === 'memory_pct')!;
    expect(negative.error).toBeNull();
    expect(negative.accepted).toBe(0);
    expect(negative.refused).toBeGreaterThan(0);
    for (const [key, day] of await storedRollups()) expect(day.memory_pct, key).toBeUndefined();
    const status = await metricSourcesStatus();
    expect(status.metrics.find((m) => m.metric_key === 'memory_pct')?.refusal_last).toMatch(/^value: must be a finite number from 0 to 1e15 \(\d+ points\)$/);

    // A pull within the same step ("Pull now" just after the schedule's) has nothing new to ask: what the last
    // asking said stays, where it was wiped and the still-refused query read as healthy.
    const again = await pullMetrics({ now: new Date(T2 * 1000 + 241_000), sleep: noWait });
    expect(again.metrics.find((m) => m.metric_key === 'memory_pct')).toMatchObject({ accepted: 0, refused: 0, error: null });
    const kept = (await metricSourcesStatus()).metrics.find((m) => m.metric_key === 'memory_pct');
    expect(kept).toMatchObject({ refused_last: negative.refused, refusal_last: expect.stringMatching(/^value: must be a finite number/) });
  });

  it('upserts the inventory from an info series, and pulls the new cluster in the same run', async () => {
    await useSources(prometheus.url, { inventory: true });
    const result = await pullMetrics({ now: new Date(T2 * 1000 + 240_000), sleep: noWait });
    expect(result.inventory).toMatchObject({ upserted: 1, refused: 0, error: null });
    expect(await getCluster(discovered.id)).toMatchObject({
      cluster_name: discovered.name,
      customer_name: 'Acme Found',
      customer_tier: 'A',
      region: 'eu-west-1',
      account_id: 'unassigned',
      resource_state: 'Running',
    });
    // Its watermark is the others': its points before this run were refused then, and are not pulled again.
    expect((await listClusters()).length).toBe(5);
    const again = await pullMetrics({ now: new Date(T2 * 1000 + 300_000), sleep: noWait });
    expect(again.inventory).toMatchObject({ upserted: 0, unchanged: 1 });
  });

  it('applies its labels over a change another write made while it pulled, rather than put back what it read', async () => {
    await useSources(prometheus.url, { inventory: true });
    const stored = (await getCluster(discovered.id))!;
    const record = Object.fromEntries(clusterFields().map((f) => [f, stored[f]]));
    // The tier differs from the info series' label (A), so the pull writes the cluster.
    expect((await ingestClusters([{ ...record, customer_tier: 'S' }])).accepted).toBe(1);
    // The pull's write of the cluster (tier A) waits until an ingest of a field the labels do not map has landed.
    let ingested: Promise<unknown> | undefined;
    const stop = proxy.watch(({ operation, input }) =>
      operation === 'UpdateItem' &&
      JSON.stringify(input.Key).includes(discovered.id) &&
      JSON.stringify(input.ExpressionAttributeValues).includes('{"S":"A"}') &&
      !ingested
        ? { hold: (ingested = ingestClusters([{ ...record, customer_tier: 'S', account_id: 'acc-moved' }])) }
        : undefined,
    );
    try {
      const result = await pullMetrics({ now: new Date(T2 * 1000 + 300_000), sleep: noWait });
      expect(result.inventory).toMatchObject({ upserted: 1, refused: 0, error: null });
    } finally {
      stop();
    }
    expect(ingested).toBeDefined();
    expect(await getCluster(discovered.id)).toMatchObject({ customer_tier: 'A', account_id: 'acc-moved' });
  });
});

describe('clusters the inventory refuses', () => {
  it('the status says why (the first refusal, stamped), not only how many', async () => {
    // The tier taken from the region label ('eu-west-1'): no tier, so the discovered cluster is refused.
    await useMetricSources({
      url: prometheus.url,
      backfillDays: 3,
      maxPointsPerRequest: 5000,
      metrics: QUERIES,
      inventory: { ...INVENTORY, labels: { ...INVENTORY.labels, customer_tier: 'region' } },
    });
    const now = new Date(T2 * 1000 + 300_000); // the info series is still within Prometheus's 5-minute lookback
    const result = await pullMetrics({ now, sleep: noWait });
    expect(result.inventory, JSON.stringify(result)).toMatchObject({ upserted: 0, refused: 1, error: null });
    const status = await metricSourcesStatus(now);
    expect(status.inventory).toMatchObject({
      refused_last: 1,
      last_error: { at: now.toISOString(), metric_key: null, message: expect.stringMatching(/^refused 1: customer_tier: /) },
    });
  });

  it('a default every new cluster would be refused for is refused when the rule set is saved', async () => {
    const yaml = metricSourcesYaml({ url: prometheus.url, metrics: QUERIES, inventory: INVENTORY }).replace(
      'engine_version: "3.3.0"',
      'engine_version: unknown',
    );
    const answer = await submitRuleSet(ROOT, 'metric-sources', yaml, { ip: '127.0.0.1', userAgent: 'test' }).catch((e: unknown) => e);
    expect(answer).toMatchObject({ status: 422, message: expect.stringContaining('inventory.defaults.engine_version: must be a version such as 3.2.1') });
  });
});

describe('the worker, as Lambda runs it', () => {
  it('throws when every part failed, so its failure queue and Errors alarm see a pull that got nothing', async () => {
    await useSources(`http://127.0.0.1:${await freePort()}`);
    const { handler, MetricsPullFailed } = await import('../../functions/metrics-puller.js');
    await expect(handler({})).rejects.toBeInstanceOf(MetricsPullFailed);
  });
});

describe('metrics queried at once', () => {
  it('are four at the default answer size, fewer as max_points_per_request grows, never none', () => {
    expect([1_000, 200_000, 266_667, 400_000, 400_001, 800_000, 1_000_000].map(metricConcurrency)).toEqual([4, 4, 2, 2, 1, 1, 1]);
  });
});
