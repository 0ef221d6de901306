// What an issue's answers read from DynamoDB, seen on the wire through the proxy.
// - Its cluster history: the issues table keeps every issue a cluster ever had (no retention),
//   each with up to 50 alert names and notes of up to 10 KB, and the history shows the newest
//   50. It counts and orders summaries and reads whole only the issues it shows.
// - Its detail: the cluster's alerts in the issue's span hold every other group's too (a noisy
//   cluster's thousands), each with annotations of up to 64 KB. It picks its own by key and
//   labels and reads whole only those.
// Each answer is what a brute-force computation over everything stored gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/issues.js';
import { listClusterAlerts, newestClusterAlerts } from '../../shared/db/alerts.js';
import { getIssue, listClusterIssues, writeGrouping } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { CLUSTER_HISTORY_LIMIT, issueView, newestFirst, timelineEntry } from '../../shared/issues/queries.js';
import { storedCluster } from '../support/clusters.js';
import { requestsOf, tableOf, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { itemsAskedFor, useWatchedTables } from '../support/read-costs.js';

const ISSUES = 70;
const HEAVY = ['alert_names', 'notes'];
const CLUSTER = 'history-cluster';
const ids: string[] = [];
let proxy: DynamoProxy;
let token: string;

beforeAll(async () => {
  ({ proxy, token } = await useWatchedTables());
  // 70 issues of one cluster, one every 6 hours back, each naming 50 long alert names; the newest Ongoing.
  const now = Date.now();
  for (let n = 0; n < ISSUES; n++) {
    const last = new Date(now - n * 6 * 3_600_000);
    const id = `hist-${String(n).padStart(2, '0')}`;
    ids.push(id);
    await writeGrouping(
      {
        issue_id: id,
        issue_name: `Disk ${n % 5}`,
        severity: n % 2 ? 'Warning' : 'Critical',
        status: n === 0 ? 'Ongoing' : 'Resolved',
        cluster_id: CLUSTER,
        alert_count: 50,
        alert_names: Array.from({ length: 50 }, (_, k) => `DiskUsageHigh_${n}_${k}_${'x'.repeat(100)}`),
        first_seen: new Date(last.getTime() - 3_600_000).toISOString(),
        last_seen: last.toISOString(),
        resolved_at: n === 0 ? null : new Date(last.getTime() + 60_000).toISOString(),
        group_key: `cluster=${CLUSTER}|alert_name=Disk ${n % 5}|n=${n}`,
      },
      { cluster_name: 'history', customer_name: 'Acme' },
      null,
    );
  }
});
afterAll(() => proxy.close());

/** How many issues' alert names or notes a request may send back. */
const heavyAskedFor = (r: WireRequest) => (tableOf(r).endsWith('issues') ? itemsAskedFor(r, HEAVY) : 0);

describe("an issue's cluster history", () => {
  it('reads alert names and notes of the issues it shows only, and answers what every stored issue gives', async () => {
    const route = '/api/issues/{issue_id}/cluster-history';
    const { result, requests } = await requestsOf(proxy, () =>
      call(handler as Handler, {
        method: 'GET',
        path: route.replace('{issue_id}', ids[5]!),
        routeKey: `GET ${route}`,
        params: { issue_id: ids[5]! },
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    expect(result.statusCode).toBe(200);
    const now = new Date();
    const others = (await Promise.all(ids.filter((id) => id !== ids[5]).map(async (id) => (await getIssue(id))!))).sort(newestFirst);
    const body = result.json!;
    expect(body.total).toBe(ISSUES - 1);
    expect(body.cluster_name).toBe('history');
    expect(body.issues.map((i: { issue_id: string }) => i.issue_id)).toEqual(others.slice(0, CLUSTER_HISTORY_LIMIT).map((i) => i.issue_id));
    // Durations of the Ongoing issue move with the clock: compared apart.
    const withoutDuration = ({ duration_minutes: _d, ...rest }: { duration_minutes: number }) => rest;
    expect(body.issues.map(withoutDuration)).toEqual(others.slice(0, CLUSTER_HISTORY_LIMIT).map((i) => withoutDuration(issueView(i, now))));
    // The issue itself (one GetItem), and the 50 shown.
    expect(requests.reduce((n, r) => n + heavyAskedFor(r), 0)).toBeLessThanOrEqual(CLUSTER_HISTORY_LIMIT + 1);
  });
});

describe("an issue's detail", () => {
  it("reads whole only its own alerts, not the cluster's other groups' in its span", async () => {
    const cluster = await storedCluster();
    const now = Date.now();
    // 12 DiskUsageHigh alerts among 240 QueryErrors of the same minutes, each described at 20 KB.
    const alerts = Array.from({ length: 252 }, (_, i) => {
      const name = i % 21 === 0 ? 'DiskUsageHigh' : 'QueryErrors';
      const start = new Date(now - (260 - i) * 60_000);
      return {
        status: 'resolved',
        labels: { alertname: name, cluster_id: cluster, severity: 'warning' },
        annotations: { summary: `${name} ${i}`, description: `description ${i} `.repeat(1500) },
        startsAt: start.toISOString(),
        endsAt: new Date(start.getTime() + 30_000).toISOString(),
        fingerprint: `fp${String(i).padStart(4, '0')}`,
      };
    });
    expect((await ingestAlerts(alerts, new Date(now))).rejected).toEqual([]);
    const issue = (await listClusterIssues(cluster)).find((i) => i.issue_name.includes('DiskUsageHigh'))!;
    expect(issue.alert_count).toBe(12);
    const route = '/api/issues/{issue_id}';
    const { result, requests } = await requestsOf(proxy, () =>
      call(handler as Handler, {
        method: 'GET',
        path: route.replace('{issue_id}', issue.issue_id),
        routeKey: `GET ${route}`,
        params: { issue_id: issue.issue_id },
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    expect(result.statusCode).toBe(200);
    const own = (await listClusterAlerts(cluster, new Date(0)))
      .filter((a) => a.alert_name === 'DiskUsageHigh')
      .reverse()
      .map(timelineEntry);
    expect(result.json!.alerts).toEqual(own);
    const whole = requests.filter((r) => tableOf(r).endsWith('alerts')).reduce((n, r) => n + alertTextsAskedFor(r), 0);
    expect(whole).toBe(12);

    // Picking reads at most so many pages of the span's alerts (NEWEST_PAGES_MAX): past them, the newest found.
    // A page of these 45 KB items ends at DynamoDB's 1 MB (counted before the projection), 22 or so alerts.
    const keep = (a: { alert_name: string }) => a.alert_name === 'DiskUsageHigh';
    const span = [new Date(issue.first_seen), new Date(issue.last_seen)] as const;
    const picked = await requestsOf(
      proxy,
      () => newestClusterAlerts(cluster, ...span, 200, keep, 2),
      (r) => r.operation === 'Query' && tableOf(r).endsWith('alerts'),
    );
    expect(picked.requests).toHaveLength(2);
    expect(picked.result.length).toBeGreaterThan(0);
    expect(picked.result.length).toBeLessThan(own.length);
    expect(picked.result.map(timelineEntry)).toEqual(own.slice(0, picked.result.length));
    expect((await newestClusterAlerts(cluster, ...span, 200, keep)).map(timelineEntry)).toEqual(own);
  });
});

/** How many alerts' annotations a request may send back. */
const alertTextsAskedFor = (r: WireRequest) => itemsAskedFor(r, ['annotations']);
