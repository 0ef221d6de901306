// The inventory pack (shared/db/clusters.ts): listClusters through the pack
// equals the items, every upsert is seen at once (the seqlock counter), and a
// pack that is stale, corrupt or half written never shows as data.
import { randomUUID } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getItem, putItem, queryAll, updateItem } from '../../shared/db/client.js';
import { bumpWriteCounter, clearPackCache, PACK_BUILDER, WRITER_MAX_MS, type PackBuilder } from '../../shared/db/packing.js';
import { INVENTORY_WINDOW_BITS, lastInventoryRead, listClusters, upsertClusters } from '../../shared/db/clusters.js';
import type { ClusterInput } from '../../shared/fleet/records.js';
import { brotliWindowBits } from '../support/brotli.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

const pk = 'CLUSTERS-PACK';
const head = () => getItem('clusters', { pk, sk: 'HEAD' }, true);
const counter = async () => Number((await getItem('clusters', { pk, sk: 'COUNTER' }, true))?.writes ?? 0);

function cluster(overrides: Partial<ClusterInput> = {}): ClusterInput {
  const id = randomUUID();
  return {
    cluster_id: id,
    cluster_name: `db-${id.slice(0, 6)}`,
    customer_name: `Customer ${id.slice(0, 4)}`,
    account_id: String(Math.floor(Math.random() * 1e12)).padStart(12, '0'),
    account_name: 'acct',
    email: 'ops@example.com',
    customer_tier: 'A',
    cluster_type: 'aurora-postgresql',
    region: 'eu-west-1',
    engine_version: '15.4',
    resource_state: 'available',
    node_count: 1 + Math.floor(Math.random() * 8),
    ...overrides,
  };
}

/** The inventory as the items say: the truth a pack must equal. */
async function fromItems() {
  const items = await queryAll('clusters', {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
    ExpressionAttributeValues: { ':pk': 'CLUSTERS', ':c': 'CLUSTER#' },
    ConsistentRead: true,
  });
  return items.map(({ pk: _pk, sk: _sk, ...record }) => record).sort(nameThenId);
}

/** listClusters' order: by name in code points, twins by id. */
const nameThenId = (a: object, b: object) => {
  const key = (record: object) => {
    const { cluster_name, cluster_id } = record as Record<string, unknown>;
    return `${String(cluster_name)}\u0000${String(cluster_id)}`;
  };
  const [x, y] = [key(a), key(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};

async function expectSameAsItems(options: { build?: PackBuilder } = {}) {
  const listed = await listClusters(options);
  expect(listed).toEqual(await fromItems());
  return listed;
}

beforeEach(() => clearPackCache());

describe('inventory pack', () => {
  it('the refresh builds it; then a fresh container reads it, and a warm one keeps it while nothing is written', async () => {
    await upsertClusters(Array.from({ length: 300 }, () => cluster()));
    await expectSameAsItems({ build: PACK_BUILDER });
    expect(lastInventoryRead()).toEqual({ from: 'items', built: true });
    expect((await head())?.built_from).toBe(await counter());
    expect((await counter()) % 2).toBe(0);

    clearPackCache();
    await expectSameAsItems();
    expect(lastInventoryRead()).toEqual({ from: 'pack', built: false });
    await expectSameAsItems();
    expect(lastInventoryRead()).toEqual({ from: 'cached', built: false });
    // A refresh finding the pack current writes nothing.
    const current = await head();
    for (const cold of [false, true]) {
      if (cold) clearPackCache();
      await expectSameAsItems({ build: PACK_BUILDER });
      expect(lastInventoryRead()).toEqual({ from: cold ? 'pack' : 'cached', built: false });
    }
    expect(await head()).toEqual(current);
  });

  it('is compressed with a 256 KB window, so a reader decodes it through a ring buffer of that size, not 4 MB', async () => {
    await upsertClusters(Array.from({ length: 50 }, () => cluster()));
    await expectSameAsItems({ build: PACK_BUILDER });
    const packId = String((await head())?.pack_id);
    const [first] = await queryAll('clusters', {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :part)',
      ExpressionAttributeValues: { ':pk': pk, ':part': `PART#${packId}#` },
      ConsistentRead: true,
    });
    expect(brotliWindowBits(first!.data as Uint8Array)).toBe(INVENTORY_WINDOW_BITS);
    expect(INVENTORY_WINDOW_BITS).toBe(18);
  });

  it('an upsert (new cluster, changed field) is in the next read, warm or cold, and the next refresh packs it', async () => {
    const [known] = await listClusters({ build: PACK_BUILDER });
    const newcomer = cluster();
    await upsertClusters([newcomer, { ...known!, node_count: 99 }]);
    for (const cold of [false, true]) {
      if (cold) clearPackCache();
      const listed = await expectSameAsItems();
      expect(lastInventoryRead()).toEqual({ from: 'items', built: false });
      expect(listed.find((c) => c.cluster_id === known!.cluster_id)?.node_count).toBe(99);
      expect(listed.some((c) => c.cluster_id === newcomer.cluster_id)).toBe(true);
    }
    // This container read the items at this counter value: the refresh packs what it holds.
    await expectSameAsItems({ build: PACK_BUILDER });
    expect(lastInventoryRead()).toEqual({ from: 'cached', built: true });
    clearPackCache();
    await expectSameAsItems();
    expect(lastInventoryRead()).toEqual({ from: 'pack', built: false });
  });

  it('an odd counter (a writer died between its bumps) reads the items until the refresh evens it 15 minutes after its last bump', async () => {
    await listClusters({ build: PACK_BUILDER });
    const before = await head();
    // The dead writer: its first bump, then its put, never its second bump.
    await bumpWriteCounter('clusters', { pk, sk: 'COUNTER' });
    await putItem('clusters', { pk: 'CLUSTERS', sk: 'CLUSTER#late', ...cluster({ cluster_id: 'late' }), created_at: 'x', updated_at: 'x' });
    await expectSameAsItems({ build: PACK_BUILDER });
    expect(lastInventoryRead()).toEqual({ from: 'items', built: false });
    expect(await head()).toEqual(before);
    // A later writer adds two: still odd, still the items.
    await upsertClusters([cluster()]);
    expect((await counter()) % 2).toBe(1);
    await expectSameAsItems({ build: PACK_BUILDER });
    expect(lastInventoryRead()).toEqual({ from: 'items', built: false });

    // Its last bump 16 minutes ago (as the clock will say then): only a refresh evens it, then packs.
    await updateItem(
      'clusters',
      { pk, sk: 'COUNTER' },
      { UpdateExpression: 'SET bumped_at = :at', ExpressionAttributeValues: { ':at': Date.now() - WRITER_MAX_MS - 60_000 } },
    );
    await expectSameAsItems();
    expect((await counter()) % 2).toBe(1);
    await expectSameAsItems({ build: PACK_BUILDER });
    expect(lastInventoryRead()).toEqual({ from: 'items', built: true });
    expect((await counter()) % 2).toBe(0);
    clearPackCache();
    await expectSameAsItems();
    expect(lastInventoryRead()).toEqual({ from: 'pack', built: false });
  });

  it('a read that may not build (API containers) writes no pack', async () => {
    await upsertClusters([cluster()]);
    const before = await head();
    await expectSameAsItems();
    expect(lastInventoryRead()).toEqual({ from: 'items', built: false });
    expect(await head()).toEqual(before);
  });

  it('a corrupt pack is never data: the items are read and it is rebuilt', async () => {
    await listClusters({ build: PACK_BUILDER });
    const corrupt = await head();
    await putItem('clusters', { pk, sk: `PART#${String(corrupt?.pack_id)}#0000`, data: new Uint8Array(Number(corrupt?.bytes)).fill(7) });
    clearPackCache(); // a new container
    await expectSameAsItems({ build: PACK_BUILDER });
    expect(lastInventoryRead()).toEqual({ from: 'items', built: true });
    const mended = await head();
    expect(mended?.built_from).toBe(corrupt?.built_from);
    expect(mended?.pack_id).not.toBe(corrupt?.pack_id);
    clearPackCache();
    await expectSameAsItems();
    expect(lastInventoryRead()).toEqual({ from: 'pack', built: false });
  });

  it('a pack whose records do not fit their type is corrupt, not data', async () => {
    const { writePack, switchPackHead } = await import('../../shared/db/packing.js');
    await listClusters({ build: PACK_BUILDER });
    const writes = await counter();
    const wrong = [{ cluster_id: 'x', node_count: 'many' }];
    const raw = Buffer.from(JSON.stringify(wrong));
    await switchPackHead('clusters', pk, await writePack('clusters', pk, { builtFrom: writes, clusters: 1, encoding: 'records-json+br1', raw }));
    clearPackCache();
    await expectSameAsItems();
    expect(lastInventoryRead()).toEqual({ from: 'items', built: false });
  });

  it("keeps no slices of a build that died before its head (clusters has no TTL): the next switch deletes older packs', not a later build's", async () => {
    const { writePack } = await import('../../shared/db/packing.js');
    const packIds = async () =>
      new Set(
        (
          await queryAll('clusters', {
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :part)',
            ExpressionAttributeValues: { ':pk': pk, ':part': 'PART#' },
          })
        ).map((part) => String(part.sk).split('#')[1]),
      );
    await listClusters({ build: PACK_BUILDER });
    const before = await head();
    const writes = await counter();
    const raw = Buffer.from('[]');
    // A build of this value that died before switching its head, and one of a later value still writing its slices.
    const dead = await writePack('clusters', pk, { builtFrom: writes, clusters: 0, encoding: 'records-json+br1', raw });
    const later = await writePack('clusters', pk, { builtFrom: writes + 4, clusters: 0, encoding: 'records-json+br1', raw });
    expect(await packIds()).toEqual(new Set([before?.pack_id, dead.pack_id, later.pack_id]));

    await upsertClusters([cluster()]);
    clearPackCache();
    await expectSameAsItems({ build: PACK_BUILDER });
    const now = await head();
    expect(now?.built_from).toBe(writes + 2);
    expect(await packIds()).toEqual(new Set([now?.pack_id, later.pack_id]));
  });

  it('answers in name order, twins by id, whether read from the items or from the pack', async () => {
    // Names running against the ids (the last id has the first name), and two twins.
    const made = Array.from({ length: 30 }, () => cluster()).sort((a, b) => (a.cluster_id < b.cluster_id ? -1 : 1));
    made.forEach((c, i) => {
      c.cluster_name = `order-${String(99 - i).padStart(2, '0')}`;
    });
    made[4]!.cluster_name = made[3]!.cluster_name;
    await upsertClusters(made);
    for (const build of [undefined, PACK_BUILDER, undefined]) {
      clearPackCache();
      const listed = await listClusters({ build });
      expect(listed.map((c) => c.cluster_id)).toEqual([...listed].sort(nameThenId).map((c) => c.cluster_id));
      const ours = listed.filter((c) => made.some((m) => m.cluster_id === c.cluster_id));
      expect(ours.map((c) => c.cluster_id)).toEqual([...made.slice(5).reverse(), made[3]!, made[4]!, ...made.slice(0, 3).reverse()].map((c) => c.cluster_id));
    }
    expect(lastInventoryRead().from).toBe('pack');
  });

  it('upserts racing pack builds: every read after the writes are done equals the items', async () => {
    const batches = Array.from({ length: 6 }, () => Array.from({ length: 20 }, () => cluster()));
    await Promise.all([
      ...batches.map((batch) => upsertClusters(batch)),
      ...Array.from({ length: 6 }, async () => {
        clearPackCache();
        await listClusters({ build: PACK_BUILDER });
      }),
    ]);
    expect((await counter()) % 2).toBe(0);
    for (const build of [undefined, PACK_BUILDER, undefined]) {
      clearPackCache();
      await expectSameAsItems({ build });
    }
  });
});
