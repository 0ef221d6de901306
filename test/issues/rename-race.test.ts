// A cluster renamed while its issues are being grouped (shared/issues/renames.ts, regroup.ts): the grouping reads the
// cluster's names after its issues, and a rename writes the inventory before it renames the issues (moving each
// one's grouping_version), so neither order of the two writes the old names back. The grouping read the inventory
// once, before its issues: renamed in between, its issues went back to the old name and stayed so.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { getCluster } from '../../shared/db/clusters.js';
import { listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts, ingestClusters } from '../../shared/fleet/ingest.js';
import { regroupClusters } from '../../shared/issues/regroup.js';
import { clusterRecord } from '../scoring/fixtures.js';
import { useTestTables } from '../support/dynamo.js';
import { tableOf, whileHeld, type DynamoProxy } from '../support/dynamo-proxy.js';

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

/** A cluster of its own named `name`, with one firing alert: an issue carrying that name. */
async function clusterWithIssue(name: string) {
  const { created_at: _c, updated_at: _u, ...cluster } = clusterRecord(name);
  await ingestClusters([cluster]);
  const fired = await ingestAlerts([
    {
      status: 'firing',
      labels: { alertname: 'RenameRace', cluster_id: cluster.cluster_id, severity: 'critical' },
      annotations: { summary: 's' },
      startsAt: new Date(Date.now() - 10 * 60_000).toISOString(),
      endsAt: '0001-01-01T00:00:00Z',
      fingerprint: randomUUID().slice(0, 16),
    },
  ]);
  expect(fired).toMatchObject({ accepted: 1, issues: { created: 1 } });
  return cluster;
}

const namesOf = async (clusterId: string) => (await listClusterIssues(clusterId)).map((i) => `${i.cluster_name} / ${i.customer_name}`);

describe('a rename during a grouping of the cluster', () => {
  it('renamed while the grouping reads its issues: the grouping writes the new names', async () => {
    const cluster = await clusterWithIssue(`race-old-${randomUUID().slice(0, 6)}`);
    const renamed = { ...cluster, cluster_name: `${cluster.cluster_name}-new`, customer_name: 'Renamed Co' };
    const held = whileHeld(
      proxy,
      (r) => tableOf(r).endsWith('issues') && r.operation === 'Query',
      () => ingestClusters([renamed]),
    );
    const result = await regroupClusters([cluster.cluster_id]);
    await held.done();
    expect(result.failed).toBe(0);
    expect((await getCluster(cluster.cluster_id))!.cluster_name).toBe(renamed.cluster_name);
    expect(await namesOf(cluster.cluster_id)).toEqual([`${renamed.cluster_name} / Renamed Co`]);
  });

  it('renamed after the grouping read its issues and before it wrote: it reads again, and writes the new names', async () => {
    const cluster = await clusterWithIssue(`race-late-${randomUUID().slice(0, 6)}`);
    const renamed = { ...cluster, cluster_name: `${cluster.cluster_name}-new` };
    // A new alert, so the grouping has an issue to write; its write waits for the rename.
    const held = whileHeld(
      proxy,
      (r) =>
        tableOf(r).endsWith('issues') &&
        ['PutItem', 'UpdateItem', 'TransactWriteItems'].includes(r.operation) &&
        JSON.stringify(r.input).includes('RenameRace'),
      () => ingestClusters([renamed]),
    );
    await ingestAlerts([
      {
        status: 'firing',
        labels: { alertname: 'RenameRace', cluster_id: cluster.cluster_id, severity: 'critical', instance: 'two' },
        annotations: { summary: 's' },
        startsAt: new Date(Date.now() - 5 * 60_000).toISOString(),
        endsAt: '0001-01-01T00:00:00Z',
        fingerprint: randomUUID().slice(0, 16),
      },
    ]);
    await held.done();
    expect((await namesOf(cluster.cluster_id)).every((n) => n.startsWith(`${renamed.cluster_name} /`))).toBe(true);
  });
});
