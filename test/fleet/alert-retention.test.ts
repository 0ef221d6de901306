// An alert's retention (ALERT_RETENTION_DAYS) counts from what was last heard of it, on DynamoDB Local: one that
// has fired for longer than the retention is still taken, and its item's `ttl` (what DynamoDB's TTL deletes by)
// moves on while it fires; a resolution is kept that long after its end. From its start, a notice of an alert
// firing for 400 days was refused and its stored item expired while it still fired, its issue going with it.
import { beforeAll, describe, expect, it } from 'vitest';
import { ALERT_RETENTION_DAYS, listClusterAlerts } from '../../shared/db/alerts.js';
import { getItem } from '../../shared/db/client.js';
import { listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const DAY_MS = 86_400_000;
const NOW = new Date();
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY_MS);
const epoch = (at: Date | string) => Math.floor(new Date(at).getTime() / 1000);
const RETENTION_S = ALERT_RETENTION_DAYS * 86_400;

const alert = (clusterId: string, startsAt: Date, over: Record<string, unknown> = {}) => ({
  status: 'firing',
  labels: { alertname: 'CertificateExpiringSoon', cluster_id: clusterId, severity: 'warning' },
  annotations: { summary: 'a certificate expires within 30 days' },
  startsAt: startsAt.toISOString(),
  fingerprint: 'retention0000001',
  ...over,
});

/** The stored item's `ttl`, as DynamoDB's TTL reads it. */
async function ttlOf(clusterId: string, startsAt: Date): Promise<unknown> {
  const item = await getItem('alerts', { pk: `CLUSTER#${clusterId}`, sk: `ALERT#${startsAt.toISOString()}#retention0000001` }, true);
  return item?.ttl;
}

beforeAll(async () => {
  await useTestTables();
});

describe('alert retention counts from the last notification', () => {
  it('takes an alert firing for longer than the retention, kept a retention from its notification; its issue is Ongoing', async () => {
    const c = await storedCluster();
    const start = daysAgo(ALERT_RETENTION_DAYS + 30);
    const result = await ingestAlerts([alert(c, start)], NOW);
    expect(result.rejected).toEqual([]);
    expect(result.accepted).toBe(1);
    expect(await ttlOf(c, start)).toBe(epoch(NOW) + RETENTION_S);
    expect((await listClusterAlerts(c, start)).map((a) => a.status)).toEqual(['Firing']);
    expect((await listClusterIssues(c)).map((i) => [i.status, i.first_seen])).toEqual([['Ongoing', start.toISOString()]]);
  });

  it('moves the ttl on as a firing alert is heard again, past the retention from its start', async () => {
    const c = await storedCluster();
    const start = daysAgo(ALERT_RETENTION_DAYS - 1);
    const firstHeard = daysAgo(ALERT_RETENTION_DAYS - 10);
    await ingestAlerts([alert(c, start)], firstHeard);
    expect(await ttlOf(c, start)).toBe(epoch(firstHeard) + RETENTION_S);
    // Alertmanager's repeat a day or more later renews the item (FIRING_RENEWAL_MS): its ttl with it.
    const repeat = await ingestAlerts([alert(c, start)], NOW);
    expect(repeat.rejected).toEqual([]);
    expect(await ttlOf(c, start)).toBe(epoch(NOW) + RETENTION_S);
  });

  it('takes the resolution of an alert that started beyond the retention, kept a retention from its end', async () => {
    const c = await storedCluster();
    const start = daysAgo(ALERT_RETENTION_DAYS + 5);
    const end = new Date(NOW.getTime() - 3_600_000);
    await ingestAlerts([alert(c, start)], daysAgo(2));
    const result = await ingestAlerts([alert(c, start, { status: 'resolved', endsAt: end.toISOString() })], NOW);
    expect(result.rejected).toEqual([]);
    expect(result.accepted).toBe(1);
    expect(await ttlOf(c, start)).toBe(epoch(end) + RETENTION_S);
    expect((await listClusterAlerts(c, start)).map((a) => [a.status, a.ends_at])).toEqual([['Resolved', end.toISOString()]]);
  });

  it('refuses an alert whose end is beyond the retention, and a start in the future', async () => {
    const c = await storedCluster();
    const result = await ingestAlerts(
      [
        alert(c, daysAgo(ALERT_RETENTION_DAYS + 5), { status: 'resolved', endsAt: daysAgo(ALERT_RETENTION_DAYS + 1).toISOString() }),
        alert(c, new Date(NOW.getTime() + DAY_MS), { fingerprint: 'retention0000002' }),
      ],
      NOW,
    );
    expect(result.rejected).toEqual([
      { index: 0, reason: `endsAt: older than the ${ALERT_RETENTION_DAYS}-day retention` },
      { index: 1, reason: 'startsAt: in the future' },
    ]);
    expect(await listClusterAlerts(c, new Date(0))).toEqual([]);
  });
});
