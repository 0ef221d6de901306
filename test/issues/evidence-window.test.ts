// An issue's evidence lists "the cluster's alerts of the last 7 days" as every window of alerts counts
// them (the scores, the chat's snapshot, the issue lists): started in the 7 × 24 h, or started before and
// still firing. On DynamoDB Local, through ingest as Alertmanager sends them; the clock is passed in.
import { beforeAll, describe, expect, it } from 'vitest';
import { demoClusters } from '../../infra/local/demo-fleet.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import { listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { EVIDENCE_ALERT_DAYS, issueEvidence } from '../../shared/issues/queries.js';
import { useTestTables } from '../support/dynamo.js';

const NOW = new Date();
const DAY = 86_400_000;
const [cluster, other] = demoClusters(2, 23).map((c) => c.inventory);
const at = (msBefore: number) => new Date(NOW.getTime() - msBefore).toISOString();
const since = NOW.getTime() - EVIDENCE_ALERT_DAYS * DAY;

const alert = (alertname: string, status: 'firing' | 'resolved', startsAt: string, endsAt?: string, of = cluster!) => ({
  status,
  labels: { alertname, cluster_id: of.cluster_id, severity: 'critical' },
  annotations: { summary: alertname },
  startsAt,
  ...(endsAt && { endsAt }),
  fingerprint: `fp-${alertname}`,
});

beforeAll(async () => {
  await useTestTables();
  await upsertClusters([cluster!, other!]);
  const sent = [
    // Firing for 8 days: the alert the issue is about.
    alert('DiskFullForDays', 'firing', at(8 * DAY), '0001-01-01T00:00:00Z'),
    // Started and resolved before the window: in none.
    alert('OldBlip', 'resolved', at(9 * DAY), at(8 * DAY)),
    // Started exactly at the window's first instant, still firing: in it once.
    alert('AtTheEdge', 'firing', new Date(since).toISOString()),
    // Started a day ago, resolved.
    alert('RecentBlip', 'resolved', at(DAY), at(DAY - 60_000)),
    // Another cluster's alert firing for 10 days: the firing index holds it too, and it is not this cluster's.
    alert('ElsewhereForDays', 'firing', at(10 * DAY), '0001-01-01T00:00:00Z', other!),
  ];
  expect((await ingestAlerts(sent, NOW)).rejected).toEqual([]);
}, 60_000);

describe("an issue's evidence", () => {
  it('lists an alert that started before the 7 days and still fires, and counts it', async () => {
    const issue = (await listClusterIssues(cluster!.cluster_id)).find((i) => i.alert_names.includes('DiskFullForDays'))!;
    expect(issue.status).toBe('Ongoing');
    const evidence = await issueEvidence(issue.issue_id, NOW);
    // Newest first: those that started in the window, then the older one still firing.
    expect(evidence.alerts.map((a) => a.alert_name)).toEqual(['RecentBlip', 'AtTheEdge', 'DiskFullForDays']);
    expect(evidence).toMatchObject({ alerts_total: 3, alerts_truncated: false });
  });
});
