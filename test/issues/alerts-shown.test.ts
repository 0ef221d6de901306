// What an issue's detail and evidence show of a noisy issue's alerts, on DynamoDB Local: the
// newest 200, newest first, read from the newest; the issue still counts them all.
import { beforeAll, describe, expect, it } from 'vitest';
import { demoClusters } from '../../infra/local/demo-fleet.js';
import { listClusterAlerts } from '../../shared/db/alerts.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { ALERTS_SHOWN, issueDetail, issueEvidence } from '../../shared/issues/queries.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();
const [cluster] = demoClusters(1, 11).map((c) => c.inventory);

beforeAll(async () => {
  await useTestTables();
  await upsertClusters([cluster!]);
  // 260 firings of one alert, a minute apart: one issue. Another alert's 20 between them: not its alerts.
  const alerts = Array.from({ length: 280 }, (_, i) => {
    const start = new Date(NOW.getTime() - (300 - i) * 60_000);
    const other = i % 14 === 13;
    return {
      status: 'resolved',
      labels: { alertname: other ? 'JvmHeapHigh' : 'DiskUsageHigh', cluster_id: cluster!.cluster_id, severity: 'warning' },
      annotations: { summary: `firing ${i}` },
      startsAt: start.toISOString(),
      endsAt: new Date(start.getTime() + 20_000).toISOString(),
      fingerprint: `fp${String(i).padStart(6, '0')}`,
    };
  });
  expect((await ingestAlerts(alerts, NOW)).rejected).toEqual([]);
}, 60_000);

describe('a noisy issue', () => {
  it("its detail lists its newest 200 alerts, newest first, and none of another group's", async () => {
    const issue = (await listClusterIssues(cluster!.cluster_id)).find((i) => i.alert_names.includes('DiskUsageHigh'))!;
    expect(issue.alert_count).toBe(260);
    const detail = (await issueDetail(issue.issue_id, NOW)).body;
    const all = await listClusterAlerts(cluster!.cluster_id, new Date(NOW.getTime() - 86_400_000));
    const newest = all
      .filter((a) => a.alert_name === 'DiskUsageHigh')
      .reverse()
      .slice(0, ALERTS_SHOWN);
    expect(detail.alerts.map((a) => a.starts_at)).toEqual(newest.map((a) => a.starts_at));
    expect(detail.alerts).toHaveLength(200);
  });

  it("its evidence lists the cluster's newest 200 alerts of the last 7 days, newest first", async () => {
    const issue = (await listClusterIssues(cluster!.cluster_id))[0]!;
    const evidence = await issueEvidence(issue.issue_id, NOW);
    const all = await listClusterAlerts(cluster!.cluster_id, new Date(NOW.getTime() - 7 * 86_400_000));
    expect(evidence.alerts.map((a) => a.starts_at)).toEqual(
      all
        .reverse()
        .slice(0, ALERTS_SHOWN)
        .map((a) => a.starts_at),
    );
  });
});
