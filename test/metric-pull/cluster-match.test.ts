// How a pulled series' cluster label names a stored cluster, against the inventory in DynamoDB Local:
// by id, or (cluster.match: name) by a name only one cluster bears. Names need not be unique (two
// customers' `prod-1`): such a name names neither, refused with its reason, rather than score one
// cluster on the other's (or both clusters') data and leave the other without metrics.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { clusterResolver } from '../../shared/metric-pull/pull.js';
import { storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const twinName = `prod-${randomUUID().slice(0, 8)}`;
const loneName = `lone-${randomUUID().slice(0, 8)}`;
const rebuiltName = `rebuilt-${randomUUID().slice(0, 8)}`;
let twins: string[];
let lone: string;
let rebuilt: string;

beforeAll(async () => {
  await useTestTables();
  twins = await Promise.all([
    storedCluster({ cluster_name: twinName, customer_name: 'Acme' }),
    storedCluster({ cluster_name: twinName, customer_name: 'Globex' }),
  ]);
  lone = await storedCluster({ cluster_name: loneName });
  // A cluster deleted, and a new one given its name: the inventory keeps both.
  await storedCluster({ cluster_name: rebuiltName, resource_state: 'DELETED' });
  rebuilt = await storedCluster({ cluster_name: rebuiltName, resource_state: 'RUNNING' });
});

describe('matching series to clusters by name', () => {
  it('resolves a name one cluster bears, and refuses one that several bear, naming why', async () => {
    const byName = await clusterResolver({ label: 'cluster_name', match: 'name' });
    expect(byName.resolve({ cluster_name: loneName })).toEqual({ id: lone });
    expect(byName.resolve({ cluster_name: twinName })).toEqual({ reason: 'cluster_name: names more than one cluster (match them by id: cluster.match: id)' });
    expect(byName.resolve({ cluster_name: 'no-such-cluster' })).toEqual({ reason: 'cluster_name: unknown cluster name' });
  });

  it('a deleted cluster does not block the new one that bears its name', async () => {
    const byName = await clusterResolver({ label: 'cluster_name', match: 'name' });
    expect(byName.resolve({ cluster_name: rebuiltName })).toEqual({ id: rebuilt });
  });

  it('by id, twins are two clusters', async () => {
    const byId = await clusterResolver({ label: 'cluster_id', match: 'id' });
    expect(twins.map((id) => byId.resolve({ cluster_id: id }))).toEqual(twins.map((id) => ({ id })));
  });
});
