// What the fleet's views and the grouping passes read of the fleet's alerts, seen on the wire
// through the proxy: an alert is stored with its labels, annotations and texts (up to 64 KB), and
// the views read every alert of 14 days or more at every refresh and every container's first view,
// the grouping passes a day to 30 days of them on every recompute. The views read what they count
// and group by, the passes which clusters to regroup; the figures are what the alerts give.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { regroupAiRecent } from '../../shared/ai-issues/regroup.js';
import { type AlertNotice, ALERT_SHARDS, listAlertFactsSince, recordAlerts } from '../../shared/db/alerts.js';
import { getItem, putItem, queryAll } from '../../shared/db/client.js';
import { ALERT_FACTS_INDEX } from '../../shared/db/tables.js';
import { regroupRecent } from '../../shared/issues/regroup.js';
import { computeFleetView } from '../../shared/scoring/fleet-view.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import { requestsOf, tableOf, type DynamoProxy } from '../support/dynamo-proxy.js';
import { attributesAsked } from '../support/read-costs.js';

const NOW = new Date();
const TEXTS = ['labels', 'annotations', 'summary', 'detail', 'dashboard_url'];
const clusters: string[] = [];
const stored: AlertNotice[] = [];
let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  for (let c = 0; c < 3; c++) clusters.push(await storedCluster());
  // 10 alerts per cluster over the last 5 days, each with 20 KB of annotations; some resolved.
  for (const [c, cluster_id] of clusters.entries()) {
    for (let n = 0; n < 10; n++) {
      const starts_at = new Date(NOW.getTime() - (n * 12 + c) * 3_600_000).toISOString();
      const text = `runbook text ${n} `.repeat(1200);
      stored.push({
        alert_id: `${cluster_id}-${n}`,
        cluster_id,
        alert_name: `Alert${n % 4}`,
        severity: n % 2 ? 'warning' : 'critical',
        status: n % 3 ? 'Firing' : 'Resolved',
        starts_at,
        ends_at: n % 3 ? null : new Date(Date.parse(starts_at) + 600_000).toISOString(),
        fingerprint: `fp${c}${n}`,
        labels: { alertname: `Alert${n % 4}`, cluster_id, team: 'ops' },
        annotations: { description: text },
        summary: `summary ${n}`,
        detail: text,
        dashboard_url: 'https://grafana.example.com/d/1',
      });
    }
  }
  await recordAlerts(stored, NOW);
});
afterAll(() => proxy.close());

/** The fleet-wide reads of alerts (the start index's facts, the firing index) a call sends, with the attributes each asks for (undefined: all). */
async function fleetAlertReads(work: () => Promise<unknown>, index: string = ALERT_FACTS_INDEX.name): Promise<(string[] | undefined)[]> {
  const { requests } = await requestsOf(proxy, work, (r) => r.operation === 'Query' && tableOf(r).endsWith('alerts') && r.input.IndexName === index);
  return requests.map(attributesAsked);
}

describe('fleet-wide alert reads ask for what is counted', () => {
  it("the fleet view reads each alert's cluster, name, status and start, and counts them as stored", async () => {
    let view: Awaited<ReturnType<typeof computeFleetView>> | undefined;
    const reads = await fleetAlertReads(async () => {
      view = await computeFleetView(NOW);
    });
    // None of the start index that copies whole alerts.
    expect(await fleetAlertReads(() => computeFleetView(NOW), 'gsi1')).toEqual([]);
    // The alerts that started before the window and still fire, one query per partition of the firing index.
    const stillFiring = await fleetAlertReads(() => computeFleetView(NOW), 'gsi2');
    expect(stillFiring).toHaveLength(ALERT_SHARDS);
    reads.push(...stillFiring);
    expect(reads.length).toBeGreaterThan(0);
    for (const fields of reads) {
      expect(fields).toBeDefined();
      expect(fields!.filter((f) => TEXTS.includes(f))).toEqual([]);
    }
    for (const id of clusters) {
      const mine = stored.filter((a) => a.cluster_id === id);
      const seen = view!.fleet.find((d) => d.cluster.cluster_id === id)!.alerts;
      expect(seen.map((a) => `${a.alert_name} ${a.status} ${a.starts_at}`).sort()).toEqual(
        mine.map((a) => `${a.alert_name} ${a.status} ${a.starts_at}`).sort(),
      );
    }
  });

  it('the grouping passes read which clusters had alerts, and regroup those', async () => {
    const rules = await fleetAlertReads(async () => {
      expect(await regroupRecent(NOW)).toMatchObject({ clusters: clusters.length, failed: 0 });
    });
    const ai = await fleetAlertReads(async () => {
      expect(await regroupAiRecent(NOW)).toMatchObject({ clusters: clusters.length, failed: 0 });
    });
    for (const fields of [...rules, ...ai]) expect(fields).toEqual(['pk', 'sk', 'cluster_id']); // the key names an item that does not fit
    expect(rules.length).toBeGreaterThan(0);
    expect(ai.length).toBeGreaterThan(0);
  });

  it("an AI grouping pass compares an unchanged cluster's alerts by what its fingerprint reads, not whole", async () => {
    await regroupAiRecent(NOW); // grouped (the test before may have run it already)
    const { result, requests } = await requestsOf(
      proxy,
      () => regroupAiRecent(NOW),
      (r) => r.operation === 'Query' && tableOf(r).endsWith('alerts') && !r.input.IndexName,
    );
    expect(result).toMatchObject({ clusters: clusters.length, unchanged: clusters.length, regrouped: 0 });
    expect(requests).toHaveLength(clusters.length);
    for (const r of requests) {
      const fields = attributesAsked(r);
      expect(fields?.filter((f) => TEXTS.includes(f))).toEqual([]);
    }
  });
});

describe('the start index of facts', () => {
  it('copies only the facts, so a read of it is billed by them, not by the alert with its texts', async () => {
    // A read of each index with no projection: what each holds of the alerts above (20 KB of texts each).
    const read = async (IndexName: string) => {
      const { requests, result } = await requestsOf(
        proxy,
        () =>
          Promise.all(
            Array.from({ length: ALERT_SHARDS }, (_, shard) =>
              queryAll('alerts', { IndexName, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': `ALERTS#${shard}` } }),
            ),
          ),
        (r) => r.operation === 'Query',
      );
      return { items: result.flat(), requests };
    };
    const [whole, facts] = [await read('gsi1'), await read(ALERT_FACTS_INDEX.name)];
    expect(facts.items.length).toBe(whole.items.length);
    expect(facts.items.length).toBeGreaterThanOrEqual(stored.length);
    const keys = ['pk', 'sk', 'gsi1pk', 'gsi1sk'];
    for (const item of facts.items) expect(Object.keys(item).every((k) => keys.includes(k) || ALERT_FACTS_INDEX.include.includes(k as never))).toBe(true);
    expect(whole.items.some((item) => 'annotations' in item)).toBe(true);
  });

  it('reads the start index whole while the facts index is not there yet (being built, or a table from before it)', async () => {
    const since = new Date(NOW.getTime() - 6 * 86_400_000);
    const expected = await listAlertFactsSince(since, NOW);
    const stop = proxy.watch((r) =>
      r.operation === 'Query' && r.input.IndexName === ALERT_FACTS_INDEX.name
        ? { type: 'ValidationException', message: `Cannot read from backfilling global secondary index: ${ALERT_FACTS_INDEX.name}` }
        : undefined,
    );
    try {
      const reads = await fleetAlertReads(async () => expect(await listAlertFactsSince(since, NOW)).toEqual(expected), 'gsi1');
      expect(reads.length).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });
});

describe("a cluster's regrouping", () => {
  it("reads its alerts' keys, names, labels and times, not their annotations and texts", async () => {
    const { result, requests } = await requestsOf(
      proxy,
      () => regroupRecent(NOW),
      (r) => r.operation === 'Query' && tableOf(r).endsWith('alerts') && !r.input.IndexName,
    );
    expect(result).toMatchObject({ clusters: clusters.length, failed: 0 });
    expect(requests.length).toBeGreaterThanOrEqual(clusters.length);
    for (const r of requests) {
      const fields = attributesAsked(r);
      expect(fields?.filter((f) => ['annotations', 'summary', 'detail', 'dashboard_url'].includes(f))).toEqual([]);
    }
  });
});

describe('the start index', () => {
  const notice = (cluster_id: string, n: number, starts_at: string): AlertNotice => ({
    alert_id: `${cluster_id}-storm-${n}`,
    cluster_id,
    alert_name: 'DiskFull',
    severity: 'critical',
    status: 'Firing',
    starts_at,
    ends_at: null,
    fingerprint: `storm${n}`,
    labels: { alertname: 'DiskFull', cluster_id },
    annotations: {},
    summary: '',
    detail: '',
    dashboard_url: '',
  });

  it("spreads a storm's alerts over its shards, and the views read them all in start order", async () => {
    const cluster = await storedCluster();
    const storm = Array.from({ length: 64 }, (_, n) => notice(cluster, n, new Date(NOW.getTime() - 3_600_000 + n * 1000).toISOString()));
    const { requests } = await requestsOf(
      proxy,
      () => recordAlerts(storm, NOW),
      (r) => r.operation === 'TransactWriteItems' && String(r.input.TransactItems?.[0]?.Put?.TableName).endsWith('alerts'),
    );
    const keys = requests.flatMap((r) => (r.input.TransactItems as { Put: { Item: { gsi1pk: { S: string } } } }[]).map((a) => a.Put));
    const partitions = new Set(keys.map((w) => w.Item.gsi1pk.S));
    expect(keys).toHaveLength(storm.length);
    expect(partitions.size).toBe(ALERT_SHARDS);
    for (const p of partitions) expect(p).toMatch(/^ALERTS#[0-7]$/);
    const read = (await listAlertFactsSince(new Date(NOW.getTime() - 2 * 3_600_000), NOW)).filter((a) => a.cluster_id === cluster);
    expect(read.map((a) => a.starts_at)).toEqual(storm.map((a) => a.starts_at));
  });

  it('still reads an alert stored before the shards, under its day alone, until a write moves it into a shard', async () => {
    const cluster = await storedCluster();
    const starts_at = new Date(NOW.getTime() - 2 * 86_400_000).toISOString();
    const old = notice(cluster, 0, starts_at);
    const key = { pk: `CLUSTER#${cluster}`, sk: `ALERT#${starts_at}#${old.fingerprint}` };
    const day = `ALERTS#${starts_at.slice(0, 10)}`;
    await putItem('alerts', {
      ...key,
      ...old,
      received_at: starts_at,
      updated_at: starts_at,
      notified_at: Date.parse(starts_at),
      gsi1pk: day,
      gsi1sk: `${starts_at}#${old.fingerprint}`,
    });
    const facts = async () => (await listAlertFactsSince(new Date(NOW.getTime() - 3 * 86_400_000), NOW)).filter((a) => a.cluster_id === cluster);
    expect(await facts()).toEqual([{ cluster_id: cluster, alert_name: 'DiskFull', status: 'Firing', starts_at }]);
    // Its resolution rewrites it whole, into its shard: read once, resolved.
    await recordAlerts([{ ...old, status: 'Resolved', ends_at: NOW.toISOString() }], NOW);
    expect((await getItem('alerts', key))?.gsi1pk).toMatch(/^ALERTS#[0-7]$/);
    expect(await facts()).toEqual([{ cluster_id: cluster, alert_name: 'DiskFull', status: 'Resolved', starts_at }]);
  });
});
