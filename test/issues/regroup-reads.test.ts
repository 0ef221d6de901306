// What a cluster's regrouping reads of its issues, seen on the wire through the proxy. The
// issues table keeps every issue a cluster ever had (no retention), each with up to 50 alert
// names and notes of up to 10 KB, and an ingest regroups the cluster on every delivery. A
// regrouping reads only the issues that may still take alerts (Ongoing, or resolved within the
// horizon), plus any issue still keyed the way it was before (read whole until rekeyed, a few
// per regrouping). The grouping it writes is the same either way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertAlert } from '../../shared/db/alerts.js';
import { queryAll, updateItem } from '../../shared/db/client.js';
import { listClusterIssues, writeGrouping, type IssueRecord } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { regroupClusters } from '../../shared/issues/regroup.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { requestsOf, tableOf, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';
import { itemsAskedFor, useWatchedTables } from '../support/read-costs.js';

const OLD_ISSUES = 150;
const DAY = 86_400_000;
const HEAVY = ['alert_names', 'notes'];
/** The live issue, and the new one's id asked for before it is created. */
const BOUND = 3;
let proxy: DynamoProxy;
let cluster: string;

beforeAll(async () => {
  ({ proxy } = await useWatchedTables());
  cluster = await storedCluster();
  // 150 issues of the cluster that ended 40 to 189 days ago, each naming 50 long alert names.
  const now = Date.now();
  for (let n = 0; n < OLD_ISSUES; n++) {
    const resolved = new Date(now - (40 + n) * DAY);
    await writeGrouping(
      {
        issue_id: `old-${cluster}-${n}`,
        issue_name: `Disk ${n}`,
        severity: 'Warning',
        status: 'Resolved',
        cluster_id: cluster,
        alert_count: 50,
        alert_names: Array.from({ length: 50 }, (_, k) => `DiskUsageHigh_${n}_${k}_${'x'.repeat(100)}`),
        first_seen: new Date(resolved.getTime() - 3_600_000).toISOString(),
        last_seen: resolved.toISOString(),
        resolved_at: resolved.toISOString(),
        group_key: `cluster=${cluster}|alert_name=Disk ${n}`,
      },
      { cluster_name: 'old', customer_name: 'Acme' },
      null,
    );
  }
});
afterAll(() => proxy.close());

/** The cluster's sort keys in the by-cluster index, as stored. */
const clusterKeys = async () =>
  (await queryAll('issues', { IndexName: 'gsi2', KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': `CLUSTER#${cluster}` } })).map(
    (i) => String(i.gsi2sk),
  );

/** How many issues' alert names or notes a request may send back: a by-cluster range as many as it holds. */
async function heavyAskedFor(requests: WireRequest[]): Promise<number> {
  const keys = await clusterKeys();
  const inRange = (q: WireRequest) => {
    if (q.input.IndexName !== 'gsi2') return Number.POSITIVE_INFINITY;
    const condition = String(q.input.KeyConditionExpression);
    const values = q.input.ExpressionAttributeValues as Record<string, { S: string }>;
    if (condition === 'gsi2pk = :pk') return keys.length;
    const bound = /gsi2sk (>=|<) (:\w+)$/.exec(condition);
    if (!bound) return Number.POSITIVE_INFINITY;
    const at = values[bound[2]!]!.S;
    return keys.filter((key) => (bound[1] === '>=' ? key >= at : key < at)).length;
  };
  return requests.filter((r) => tableOf(r).endsWith('issues')).reduce((n, r) => n + itemsAskedFor(r, HEAVY, inRange), 0);
}

/** The cluster's one firing alert (since 3 days ago) delivered, which regroups the cluster. */
const NOW = new Date();
const ingest = () => requestsOf(proxy, () => ingestAlerts([alertNotice(NOW, cluster, 'Lag', 'fp-lag', 3 * 24 * 60)]));
/** The cluster regrouped again, as the scheduled pass and every later delivery do: nothing changes. */
const regroup = () => requestsOf(proxy, () => regroupClusters([cluster]));

/** Grouping's fields of the cluster's issues, by id. */
const groupingOf = (issues: IssueRecord[]) =>
  Object.fromEntries(
    issues.map((i) => [
      i.issue_id,
      { status: i.status, first_seen: i.first_seen, resolved_at: i.resolved_at, alert_count: i.alert_count, superseded_by: i.superseded_by },
    ]),
  );

describe("a cluster's regrouping", () => {
  it('reads the issues that may still take alerts, not every issue the cluster had', async () => {
    const first = await ingest();
    expect(first.result.rejected).toEqual([]);
    const issues = await listClusterIssues(cluster);
    expect(issues).toHaveLength(OLD_ISSUES + 1);
    expect(issues.filter((i) => i.status === 'Ongoing').map((i) => i.alert_names)).toEqual([['Lag']]);
    expect(await heavyAskedFor(first.requests)).toBeLessThanOrEqual(BOUND);

    const again = await regroup();
    expect(again.result).toMatchObject({ unchanged: 1, created: 0, updated: 0, removed: 0, failed: 0 });
    expect(groupingOf(await listClusterIssues(cluster))).toEqual(groupingOf(issues));
    expect(await heavyAskedFor(again.requests)).toBeLessThanOrEqual(BOUND);
  });

  it('reads issues keyed the earlier way whole, keeps grouping them the same, and rekeys them a few at a time', async () => {
    const before = await listClusterIssues(cluster);
    // As stored before the by-cluster index was keyed by activity: `<first_seen>#<id>`, the live issue among them.
    for (const issue of before.slice(-41)) {
      await updateItem(
        'issues',
        { pk: `ISSUE#${issue.issue_id}`, sk: 'ISSUE' },
        { UpdateExpression: 'SET gsi2sk = :key', ExpressionAttributeValues: { ':key': `${issue.first_seen}#${issue.issue_id}` } },
      );
    }
    const legacy = async () => (await clusterKeys()).filter((key) => !key.startsWith('A#')).length;
    expect(await legacy()).toBe(41);

    const passes: number[] = [];
    for (let pass = 0; pass < 3; pass++) {
      const { result, requests } = await regroup();
      expect(result).toMatchObject({ unchanged: 1, failed: 0 });
      expect(groupingOf(await listClusterIssues(cluster))).toEqual(groupingOf(before));
      passes.push(await legacy());
      if (pass === 2) expect(await heavyAskedFor(requests)).toBeLessThanOrEqual(BOUND);
    }
    expect(passes).toEqual([16, 0, 0]);
  });

  it('keeps the id of an issue it did not read (ended long ago) when grouping produces it again', async () => {
    const own = await storedCluster();
    const started = 45 * 24 * 60;
    // Firing for 45 days: an issue; then resolved 44 days ago, so it ended before the horizon.
    expect((await ingestAlerts([alertNotice(NOW, own, 'Replication', 'fp-repl', started)])).rejected).toEqual([]);
    expect((await ingestAlerts([alertNotice(NOW, own, 'Replication', 'fp-repl', started, started - 60)])).rejected).toEqual([]);
    const [old] = await listClusterIssues(own);
    expect(old).toMatchObject({ status: 'Resolved', alert_count: 1 });
    // Its alert delivered as firing again (a late notice): the same issue, Ongoing again.
    const again = await ingestAlerts([alertNotice(NOW, own, 'Replication', 'fp-repl', started)]);
    expect(again.rejected).toEqual([]);
    const issues = await listClusterIssues(own);
    expect(issues.map((i) => [i.issue_id, i.status])).toEqual([[old!.issue_id, 'Ongoing']]);
  });

  it('names the issue of a cluster gone from the inventory as its issues did, though none was read', async () => {
    const gone = `gone-${cluster}`;
    const ended = new Date(Date.now() - 90 * DAY);
    await writeGrouping(
      {
        issue_id: `gone-old-${cluster}`,
        issue_name: 'Lag',
        severity: 'Warning',
        status: 'Resolved',
        cluster_id: gone,
        alert_count: 1,
        alert_names: ['Lag'],
        first_seen: new Date(ended.getTime() - 3_600_000).toISOString(),
        last_seen: ended.toISOString(),
        resolved_at: ended.toISOString(),
        group_key: `cluster=${gone}|alert_name=Lag`,
      },
      { cluster_name: 'warehouse-eu', customer_name: 'Acme' },
      null,
    );
    // Its alert (stored before the cluster left the inventory: ingest takes none of an unknown cluster).
    const started = new Date(NOW.getTime() - 10 * 60_000).toISOString();
    await upsertAlert(
      {
        alert_id: 'fp-disk',
        cluster_id: gone,
        alert_name: 'DiskFull',
        severity: 'warning',
        status: 'Firing',
        starts_at: started,
        ends_at: null,
        fingerprint: 'fp-disk',
        labels: { alertname: 'DiskFull', cluster_id: gone },
        annotations: {},
        summary: 'DiskFull',
        detail: '',
        dashboard_url: '',
      },
      NOW,
    );
    expect(await regroupClusters([gone])).toMatchObject({ created: 1, failed: 0 });
    const fresh = (await listClusterIssues(gone)).find((i) => i.alert_names.includes('DiskFull'));
    expect(fresh).toMatchObject({ cluster_name: 'warehouse-eu', customer_name: 'Acme' });
  });
});
