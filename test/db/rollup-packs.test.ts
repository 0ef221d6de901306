// Packed rollups (issue 21 §1): columns read through packs equal columns of the
// rollup items, late writes into packed days are never missed (the seqlock
// counter), open days are never packed, and a pack that is half written,
// split over chunks or corrupt never shows as data.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { deleteItem, getItem, putItem, queryAll, updateItem } from '../../shared/db/client.js';
import { CHUNK_BYTES, clearPackCache, CorruptPack, PACK_BUILDER, WRITER_MAX_MS, writePack } from '../../shared/db/packing.js';
import { windowDays } from '../../shared/db/days.js';
import { addSamples, mergePulledRollups, METRIC_SHARDS, putRollups, readFleetRollups, shardOf, type StoredRollup } from '../../shared/db/metrics.js';
import {
  decodePack,
  encodePack,
  isPackableDay,
  lastPackReadStats,
  lastWindowReadStats,
  packSettledDays,
  readFleetRollupColumns,
} from '../../shared/db/rollup-packs.js';
import type { ClusterRecord } from '../../shared/db/clusters.js';
import { aggregateFleet, columnarClusterData } from '../../shared/scoring/inputs.js';
import { columnsFromRollups, emptyColumns, METRICS, SLOTS, type RollupColumns } from '../../shared/fleet/rollup-columns.js';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import type { DayRollup } from '../../shared/fleet/rollup.js';
import { resetSettings } from '../../shared/config/env.js';
import { brotliWindowBits } from '../support/brotli.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

const DAY_MS = 86_400_000;
/** How the refresh reads: it may build packs. */
const refresh = { build: PACK_BUILDER };
/** `count` consecutive days, the newest `endsDaysAgo` days before today (each test its own, so tests share tables). */
const daysEnding = (endsDaysAgo: number, count: number) => windowDays(count, new Date(Date.now() - endsDaysAgo * DAY_MS));

/** Rollups with randomly missing cluster-days and metrics, values of every sign and size. */
function randomRollups(clusterIds: readonly string[], days: readonly string[], presence = 0.8): StoredRollup[] {
  const value = () => (Math.random() < 0.5 ? Math.round(Math.random() * 1000) / 10 : (Math.random() - 0.5) * 1e12);
  return clusterIds.flatMap((cluster_id) =>
    days.flatMap((day) => {
      if (Math.random() > presence) return [];
      const metrics: DayRollup = {};
      for (const key of METRIC_KEYS) {
        if (Math.random() < 0.3) continue;
        const [a, b, c] = [value(), value(), value()];
        const count = 1 + Math.floor(Math.random() * 288);
        const at = new Date(Date.parse(`${day}T00:00:00Z`) + Math.floor(Math.random() * DAY_MS)).toISOString();
        metrics[key] = { min: Math.min(a, b, c), max: Math.max(a, b, c), sum: a + b + c, count, last: c, last_at: at };
      }
      return [{ cluster_id, day, metrics }];
    }),
  );
}

const ids = (n: number) => Array.from({ length: n }, () => randomUUID());

/** The columns the items path gives: readFleetRollups, then columnsFromRollups. */
async function columnsFromItems(days: string[]): Promise<RollupColumns> {
  const byCluster = await readFleetRollups(days);
  return columnsFromRollups(days, [...byCluster.keys()], [...byCluster.values()].flat());
}

/** Each cluster's cells over the days (any row order): values and lastAt as plain numbers (NaN equals NaN in toEqual). */
function byCluster(columns: RollupColumns): Map<string, { values: number[]; lastAt: number[] }> {
  const out = new Map<string, { values: number[]; lastAt: number[] }>();
  columns.clusterIds.forEach((id, row) => {
    const values: number[] = [];
    const lastAt: number[] = [];
    for (let day = 0; day < columns.days.length; day++) {
      const cell = day * columns.clusterIds.length + row;
      values.push(...columns.values.subarray(cell * METRICS * SLOTS, (cell + 1) * METRICS * SLOTS));
      lastAt.push(...columns.lastAt.subarray(cell * METRICS, (cell + 1) * METRICS));
    }
    out.set(id, { values, lastAt });
  });
  return out;
}

async function expectSameAsItems(days: string[], now = new Date()): Promise<RollupColumns> {
  const packed = await readFleetRollupColumns(days, now, refresh);
  const expected = await columnsFromItems(days);
  expect(packed.days).toEqual(days);
  expect(packed.clusterIds.length).toBe(expected.clusterIds.length);
  expect(byCluster(packed)).toEqual(byCluster(expected));
  return packed;
}

/** One day `daysAgo` of `clusters` clusters' rollups, packed by a refresh; `shard`: the first cluster's. */
async function onePackedDay(daysAgo: number, clusters: number): Promise<{ days: string[]; shard: number }> {
  const days = daysEnding(daysAgo, 1);
  const clusterIds = ids(clusters);
  await putRollups(randomRollups(clusterIds, days, 1));
  await readFleetRollupColumns(days, new Date(), refresh);
  return { days, shard: shardOf(clusterIds[0]!) };
}

const counterOf = async (day: string, shard: number) => Number((await getItem('metrics', { pk: `PACK#${day}#${shard}`, sk: 'COUNTER' }, true))?.writes ?? 0);
const headOf = (day: string, shard: number) => getItem('metrics', { pk: `PACK#${day}#${shard}`, sk: 'HEAD' }, true);
const partitions = (days: string[]) => days.length * METRIC_SHARDS;

describe('packed rollups', () => {
  it('read through packs (built, then cold, then cached) equal the items path: missing clusters, metrics and days, every shard', async () => {
    const days = daysEnding(3, 6);
    const rollups = randomRollups(ids(400), days).filter((r) => r.day !== days[2]); // one day without any rollup
    await putRollups(rollups);

    await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: 0, items: partitions(days), built: partitions(days) });
    const head = await headOf(days[0]!, 0);
    expect(head?.built_from).toBe(await counterOf(days[0]!, 0));

    clearPackCache(); // a cold container: every partition from its pack
    const cold = await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: partitions(days), items: 0, built: 0 });
    expect(new Set(cold.clusterIds)).toEqual(new Set(rollups.map((r) => r.cluster_id)));

    await expectSameAsItems(days); // warm: counters and heads only
    expect(lastPackReadStats()).toEqual({ cached: partitions(days), packs: 0, items: 0, built: 0 });
  });

  it('a late write into a packed day (ingest, then a pull) is in the next read, warm or cold', async () => {
    const days = daysEnding(10, 3);
    const clusterIds = ids(60);
    await putRollups(randomRollups(clusterIds, days, 1));
    await expectSameAsItems(days);

    const late = clusterIds[7]!;
    const lateDay = days[1]!;
    const newcomer = randomUUID();
    const at = `${lateDay}T23:59:00.000Z`;
    await addSamples([
      { cluster_id: late, metric_key: 'qps', value: 123456.5, at },
      { cluster_id: newcomer, metric_key: 'disk_used_pct', value: 97, at },
    ]);
    expect((await counterOf(lateDay, shardOf(late))) % 2).toBe(0);
    const warm = await expectSameAsItems(days); // the container's cache must not hide it
    expect(warm.rowOf.has(newcomer)).toBe(true);
    expect(lastPackReadStats().items).toBeGreaterThanOrEqual(1);

    await mergePulledRollups([
      {
        cluster_id: late,
        day: lateDay,
        metrics: { memory_pct: { min: 1, max: 99, sum: 150, count: 3, last: 50, last_at: at } },
        windows: { memory_pct: { from: `${lateDay}T23:00:00.000Z`, to: at } },
      },
    ]);
    const pulled = await expectSameAsItems(days);
    const row = pulled.rowOf.get(late)!;
    const cell = 1 * pulled.clusterIds.length + row;
    const memory = METRIC_KEYS.indexOf('memory_pct');
    expect(pulled.values[(cell * METRICS + memory) * SLOTS + 4]).toBeGreaterThanOrEqual(3); // count: the pulled window is in

    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: partitions(days), items: 0, built: 0 });
  });

  it('an odd counter (a writer died between its bumps) reads that shard-day from items and builds no pack of it, until a refresh evens it 15 minutes on', async () => {
    const days = daysEnding(14, 2);
    const clusterIds = ids(40);
    await putRollups(randomRollups(clusterIds, days, 1));
    await expectSameAsItems(days);
    const victim = clusterIds[0]!;
    const [day, shard] = [days[0]!, shardOf(victim)];
    const before = await headOf(day, shard);

    // The dead writer: its first bump, then its put, never its second bump.
    await updateItem(
      'metrics',
      { pk: `PACK#${day}#${shard}`, sk: 'COUNTER' },
      { UpdateExpression: 'ADD writes :one', ExpressionAttributeValues: { ':one': 1 } },
    );
    const metrics: DayRollup = { qps: { min: 1, max: 2, sum: 3, count: 2, last: 2, last_at: `${day}T12:00:00.000Z` } };
    await putItem('metrics', { pk: `ROLLUP#${day}#${shard}`, sk: `CLUSTER#${victim}`, cluster_id: victim, day, m: JSON.stringify(metrics), version: 9 });

    for (const cold of [false, true]) {
      if (cold) clearPackCache();
      const read = await expectSameAsItems(days);
      const cell = read.rowOf.get(victim)!;
      expect(read.values[(cell * METRICS + METRIC_KEYS.indexOf('qps')) * SLOTS + 3]).toBe(3);
      expect(lastPackReadStats().items).toBe(1);
      expect(lastPackReadStats().built).toBe(0);
    }
    expect(await headOf(day, shard)).toEqual(before);

    // 15 minutes after its last bump no writer can be in flight: the refresh evens it and packs.
    await updateItem(
      'metrics',
      { pk: `PACK#${day}#${shard}`, sk: 'COUNTER' },
      { UpdateExpression: 'SET bumped_at = :at', ExpressionAttributeValues: { ':at': Date.now() - WRITER_MAX_MS - 60_000 } },
    );
    await readFleetRollupColumns(days, new Date(), {});
    expect((await counterOf(day, shard)) % 2).toBe(1);
    const healed = await expectSameAsItems(days);
    expect(lastPackReadStats()).toMatchObject({ items: 1, built: 1 });
    expect((await counterOf(day, shard)) % 2).toBe(0);
    expect(healed.values[(healed.rowOf.get(victim)! * METRICS + METRIC_KEYS.indexOf('qps')) * SLOTS + 3]).toBe(3);
    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: partitions(days), items: 0, built: 0 });
  });

  it('packs no day that may still change: not today, not yesterday before 02:00 UTC', async () => {
    const [yesterday, today] = ['2031-03-04', '2031-03-05'];
    const clusterIds = ids(30);
    await putRollups(randomRollups(clusterIds, [yesterday, today], 1));
    const headsOf = async (day: string) => (await Promise.all(Array.from({ length: METRIC_SHARDS }, (_, s) => headOf(day, s)))).filter(Boolean).length;

    await expectSameAsItems([yesterday, today], new Date(`${today}T01:59:59.999Z`));
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: 0, items: partitions([yesterday, today]), built: 0 });
    expect(await headsOf(yesterday)).toBe(0);

    await expectSameAsItems([yesterday, today], new Date(`${today}T02:00:00.000Z`));
    expect(lastPackReadStats().built).toBe(METRIC_SHARDS);
    expect(await headsOf(yesterday)).toBe(METRIC_SHARDS);
    expect(await headsOf(today)).toBe(0);

    await expectSameAsItems([yesterday, today], new Date(`${today}T23:59:59.999Z`)); // today from items again, though all else is cached
    expect(lastPackReadStats()).toEqual({ cached: METRIC_SHARDS, packs: 0, items: METRIC_SHARDS, built: 0 });
  });

  it('a pack larger than one chunk is cut under the item limit and read back whole', async () => {
    const day = daysEnding(20, 1);
    const shard = 5;
    const clusterIds: string[] = [];
    while (clusterIds.length < 900) {
      const id = randomUUID();
      if (shardOf(id) === shard) clusterIds.push(id);
    }
    // Full random doubles barely compress: 900 clusters ≈ 650 KB raw.
    const rollups = clusterIds.map((cluster_id) => {
      const metrics: DayRollup = {};
      for (const key of METRIC_KEYS) {
        const r = () => (Math.random() - 0.5) * 1e9;
        metrics[key] = {
          min: r(),
          max: r(),
          sum: r(),
          count: 1 + Math.floor(Math.random() * 1e6),
          last: r(),
          last_at: `${day[0]}T${String(Math.floor(Math.random() * 24)).padStart(2, '0')}:00:00.123Z`,
        };
      }
      return { cluster_id, day: day[0]!, metrics };
    });
    await putRollups(rollups);
    await expectSameAsItems(day);
    const head = await headOf(day[0]!, shard);
    expect(Number(head?.chunks)).toBeGreaterThanOrEqual(2);
    const parts = await queryAll('metrics', {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :part)',
      ExpressionAttributeValues: { ':pk': `PACK#${day[0]}#${shard}`, ':part': `PART#${String(head?.pack_id)}#` },
    });
    expect(parts).toHaveLength(Number(head?.chunks));
    for (const part of parts) expect((part.data as Uint8Array).length).toBeLessThanOrEqual(CHUNK_BYTES);
    // Cells repeat across the whole pack: brotli's default window (2^18 made window packs 19% larger).
    expect(brotliWindowBits(parts[0]!.data as Uint8Array)).toBe(22);

    clearPackCache();
    await expectSameAsItems(day);
    expect(lastPackReadStats().packs).toBe(METRIC_SHARDS);
  });

  it('a pack write that died after its chunks (head not switched) changes no read', async () => {
    const days = daysEnding(25, 2);
    const clusterIds = ids(50);
    await putRollups(randomRollups(clusterIds, days, 1));
    await expectSameAsItems(days);
    const victim = clusterIds[3]!;
    const [day, shard] = [days[1]!, shardOf(victim)];
    const head = await headOf(day, shard);

    // Stray chunks of other data under the current counter, and under the next one after a late write.
    const wrong = emptyColumns([day], [victim, randomUUID()]);
    wrong.values.fill(42);
    const strayChunks = async () =>
      writePack('metrics', `PACK#${day}#${shard}`, {
        builtFrom: await counterOf(day, shard),
        clusters: 2,
        encoding: 'cells-v1+br1',
        raw: encodePack(wrong),
      });
    await strayChunks();
    await addSamples([{ cluster_id: victim, metric_key: 'node_count', value: 7, at: `${day}T08:00:00.000Z` }]);
    await strayChunks();

    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toMatchObject({ items: 1, built: 1 });
    const rebuilt = await headOf(day, shard);
    expect(rebuilt?.pack_id).not.toBe(head?.pack_id);
    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: partitions(days), items: 0, built: 0 });
  });

  it('writes racing pack builds: every read after the writes are done equals the items', async () => {
    const days = daysEnding(35, 2);
    const clusterIds = ids(48);
    await putRollups(randomRollups(clusterIds, days, 1));
    for (let round = 0; round < 6; round++) {
      clearPackCache(); // every partition whose counter moved is rebuilt while the writes go on
      const samples = clusterIds.slice(0, 24).map((cluster_id, i) => ({
        cluster_id,
        metric_key: METRIC_KEYS[(round + i) % METRIC_KEYS.length]!,
        value: round * 100 + i,
        at: `${days[i % 2]}T${String(10 + round).padStart(2, '0')}:00:00.000Z`,
      }));
      await Promise.all([
        readFleetRollupColumns(days, new Date(), refresh),
        addSamples(samples.slice(0, 12)),
        readFleetRollupColumns(days, new Date(), refresh),
        addSamples(samples.slice(12)),
      ]);
      await expectSameAsItems(days);
      clearPackCache();
      await expectSameAsItems(days);
    }
  });

  it('a corrupt pack is never data: its items are read and it is rebuilt', async () => {
    const { days, shard } = await onePackedDay(30, 20);
    const pk = `PACK#${days[0]}#${shard}`;
    const head = await headOf(days[0]!, shard);
    await putItem('metrics', { pk, sk: `PART#${String(head?.pack_id)}#0000`, data: new Uint8Array(Number(head?.bytes)).fill(7) });

    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toMatchObject({ items: 1, built: 1 });
    const mended = await headOf(days[0]!, shard);
    expect(mended?.built_from).toBe(head?.built_from);
    expect(mended?.pack_id).not.toBe(head?.pack_id);
    const parts = await queryAll('metrics', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } });
    expect(parts.filter((i) => String(i.sk).startsWith(`PART#${String(head?.pack_id)}#`))).toHaveLength(0); // the corrupt chunks, deleted

    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: METRIC_SHARDS, items: 0, built: 0 });
  });

  it('a head whose raw size is wrong or absurd is corrupt: its items are read and it is rebuilt', async () => {
    const { days, shard } = await onePackedDay(33, 12);
    for (const wrong of [(raw: number) => raw - 1, (raw: number) => raw + 1, () => 2 ** 40, () => -1, () => 1.5]) {
      const head = (await headOf(days[0]!, shard))!;
      await putItem('metrics', { ...head, pk: String(head.pk), sk: String(head.sk), raw_bytes: wrong(Number(head.raw_bytes)) });
      clearPackCache();
      await expectSameAsItems(days);
      expect(lastPackReadStats()).toMatchObject({ items: 1, built: 1 });
      clearPackCache();
      await expectSameAsItems(days);
      expect(lastPackReadStats()).toMatchObject({ packs: METRIC_SHARDS, items: 0 });
    }
  });

  it('a head whose chunks are gone: read from items, and mended by the same counter value', async () => {
    const days = daysEnding(32, 1);
    await putRollups(randomRollups(ids(20), days, 1));
    await readFleetRollupColumns(days, new Date(), refresh);
    const pk = `PACK#${days[0]}#0`;
    const head = await headOf(days[0]!, 0);
    for (let i = 0; i < Number(head?.chunks); i++) await deleteItem('metrics', { pk, sk: `PART#${String(head?.pack_id)}#${String(i).padStart(4, '0')}` });

    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toMatchObject({ items: 1, built: 1 });
    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: METRIC_SHARDS, items: 0, built: 0 });
  });

  it('decoding checks every length against the bytes there are', () => {
    const pack = columnsFromRollups(
      ['2030-01-01'],
      ['a', 'bé', 'c'],
      [{ cluster_id: 'bé', day: '2030-01-01', metrics: { qps: { min: 1, max: 3, sum: 4, count: 2, last: 3, last_at: '2030-01-01T10:00:00.000Z' } } }],
    );
    const raw = encodePack(pack);
    const name = { pk: 'PACK#2030-01-01#0', packId: 'test' };
    const back = decodePack(raw, name);
    expect(back.clusterIds).toEqual(['a', 'bé', 'c']);
    expect(back.values).toEqual(pack.values);
    expect(back.lastAt).toEqual(pack.lastAt);
    // The same bytes at every offset of a larger buffer: viewed where aligned, copied where not.
    for (let offset = 0; offset < 8; offset++) {
      const held = Buffer.alloc(raw.length + 8);
      raw.copy(held, offset);
      const moved = decodePack(held.subarray(offset, offset + raw.length), name);
      expect(moved.values).toEqual(pack.values);
      expect(moved.lastAt).toEqual(pack.lastAt);
    }

    expect(() => decodePack(raw.subarray(0, raw.length - 8), name)).toThrow(CorruptPack);
    expect(() => decodePack(Buffer.concat([raw, Buffer.alloc(8)]), name)).toThrow(CorruptPack);
    const tooMany = Buffer.from(raw);
    tooMany.writeUInt32LE(1_000_000, 8);
    expect(() => decodePack(tooMany, name)).toThrow(/PACK#2030-01-01#0 test/);
    const longId = Buffer.from(raw);
    longId.writeUInt16LE(60_000, 24);
    expect(() => decodePack(longId, name)).toThrow(CorruptPack);
    expect(() => decodePack(Buffer.alloc(10), name)).toThrow(CorruptPack);
  });

  it('a read that may not build (API containers: only the refresh may write packs) reads items and writes no pack', async () => {
    const days = daysEnding(50, 2);
    const clusters = ids(8);
    await putRollups(randomRollups(clusters, days, 1));
    clearPackCache();
    const read = byCluster(await readFleetRollupColumns(days, new Date(), {}));
    expect(read).toEqual(byCluster(await columnsFromItems(days)));
    expect(lastPackReadStats()).toMatchObject({ built: 0, packs: 0 });
    clearPackCache();
    await readFleetRollupColumns(days, new Date(), refresh);
    expect(lastPackReadStats().packs).toBe(0); // still none stored: the first read had written nothing
    expect(lastPackReadStats().built).toBeGreaterThan(0);
  });

  it('a refresh in a container that read items without building packs what it holds, without reading the items again', async () => {
    const days = daysEnding(52, 1);
    await putRollups(randomRollups(ids(12), days, 1));
    clearPackCache();
    await readFleetRollupColumns(days, new Date(), {});
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: 0, items: partitions(days), built: 0 });
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: partitions(days), packs: 0, items: 0, built: partitions(days) });
    clearPackCache();
    await expectSameAsItems(days);
    expect(lastPackReadStats()).toEqual({ cached: 0, packs: partitions(days), items: 0, built: 0 });
  });

  it('packSettledDays packs the settled days no refresh read (the chat reads 14), so a reader that may not build reads packs; it reads nothing where the packs are current or a write is in flight', async () => {
    const days = daysEnding(56, 3);
    const clusterIds = ids(40);
    await putRollups(randomRollups(clusterIds, days, 1));
    const today = windowDays(1)[0]!; // never packed
    const none = { cached: 0, packs: 0, items: 0, built: 0 };
    expect(await packSettledDays([...days, today], new Date(), PACK_BUILDER)).toEqual({ ...none, items: partitions(days), built: partitions(days) });
    const asChatReads = async () => {
      clearPackCache();
      const read = byCluster(await readFleetRollupColumns(days, new Date(), {}));
      expect(read).toEqual(byCluster(await columnsFromItems(days)));
      expect(lastPackReadStats()).toEqual({ ...none, packs: partitions(days) });
    };
    await asChatReads();
    expect(await packSettledDays(days, new Date(), PACK_BUILDER)).toEqual(none); // current: counters and heads only

    await addSamples([{ cluster_id: clusterIds[3]!, metric_key: 'qps', value: 4321.5, at: `${days[1]}T23:59:00.000Z` }]);
    expect(await packSettledDays(days, new Date(), PACK_BUILDER)).toEqual({ ...none, items: 1, built: 1 });
    await asChatReads();

    // A writer's first bump just now (its write in flight): that shard is left to a later call, its items unread.
    const [day, shard] = [days[0]!, shardOf(clusterIds[5]!)];
    await updateItem(
      'metrics',
      { pk: `PACK#${day}#${shard}`, sk: 'COUNTER' },
      { UpdateExpression: 'ADD writes :one SET bumped_at = :now', ExpressionAttributeValues: { ':one': 1, ':now': Date.now() } },
    );
    expect(await packSettledDays(days, new Date(), PACK_BUILDER)).toEqual(none);
  });

  // Last: it moves this file's process to tables of its own.
  it('decoded packs are cached per table: another table with the same partitions and counter values reads its own', async () => {
    const days = daysEnding(40, 2);
    const clusters = ids(6);
    await putRollups(randomRollups(clusters, days, 1));
    await readFleetRollupColumns(days, new Date(), refresh); // builds the packs and caches them
    const first = byCluster(await readFleetRollupColumns(days, new Date(), refresh));
    await useTestTables();
    resetSettings();
    await putRollups(randomRollups(clusters, days, 1)); // the same shards, so the same counter values
    await readFleetRollupColumns(days, new Date(), refresh);
    const second = byCluster(await readFleetRollupColumns(days, new Date(), refresh));
    expect(second).toEqual(byCluster(await columnsFromItems(days)));
    expect(second).not.toEqual(first);
  });
});

describe("window packs (the refresh: a shard's settled lookback days folded)", () => {
  /** Noon of a window's last day: the days before it settled, itself still open. */
  const noonOf = (day: string) => new Date(Date.parse(`${day}T12:00:00Z`));
  const windowRead = (days: string[], now: Date) => readFleetRollupColumns(days, now, { ...refresh, window: true });

  /** `count` days ending `daysAgo` of `clusters` clusters, every cluster-day present, read (and built) once at noon of the last day. */
  async function windowOfDays(daysAgo: number, count: number, clusters: number): Promise<{ days: string[]; now: Date; clusterIds: string[] }> {
    const days = daysEnding(daysAgo, count);
    const now = noonOf(days[count - 1]!);
    const clusterIds = ids(clusters);
    await putRollups(randomRollups(clusterIds, days, 1));
    await expectWindowSameAsDays(days, now);
    return { days, now, clusterIds };
  }

  /** The engine's fold over the lookback from the windowed read equals its fold from the items, cluster by cluster. */
  async function expectWindowSameAsDays(days: string[], now: Date): Promise<RollupColumns> {
    const windowed = await windowRead(days, now);
    const perDay = await columnsFromItems(days);
    expect(windowed.window).toEqual(days.filter((day) => isPackableDay(day, now)));
    expect(windowed.days).toEqual([days[0], ...days.filter((day) => !isPackableDay(day, now))]);
    expect(new Set(windowed.clusterIds)).toEqual(new Set(perDay.clusterIds));
    const fleetOf = (columns: RollupColumns) => perDay.clusterIds.map((id) => columnarClusterData({ cluster_id: id } as ClusterRecord, columns, []));
    const [byWindow, byDays] = [aggregateFleet(fleetOf(windowed), days[0]!), aggregateFleet(fleetOf(perDay), days[0]!)];
    byDays.forEach((expected, i) => {
      expect(byWindow[i]!.lastMetricAt).toBe(expected.lastMetricAt);
      const cell = (agg: typeof expected) => [...agg.values.subarray(agg.base, agg.base + METRICS * SLOTS)];
      expect(cell(byWindow[i]!)).toEqual(cell(expected));
    });
    return windowed;
  }

  it('folded and built once, then read from its pack (cold) or the cache (warm), equal to the days: every shard, missing clusters and metrics', async () => {
    const days = daysEnding(20, 7);
    const now = noonOf(days[6]!);
    await putRollups(randomRollups(ids(300), days));
    await expectWindowSameAsDays(days, now);
    expect(lastWindowReadStats()).toEqual({ cached: 0, packs: 0, folded: METRIC_SHARDS, built: METRIC_SHARDS });
    clearPackCache();
    await expectWindowSameAsDays(days, now);
    expect(lastWindowReadStats()).toEqual({ cached: 0, packs: METRIC_SHARDS, folded: 0, built: 0 });
    expect(lastPackReadStats()).toMatchObject({ packs: 0, cached: 0, items: METRIC_SHARDS }); // only the open day, per shard
    await expectWindowSameAsDays(days, now);
    expect(lastWindowReadStats()).toEqual({ cached: METRIC_SHARDS, packs: 0, folded: 0, built: 0 });
  });

  it('a late write into one of its days is in the next read, warm or cold: that shard is folded again and its pack rebuilt', async () => {
    const { days, now, clusterIds } = await windowOfDays(23, 4, 50);
    const late = clusterIds[3]!;
    await addSamples([{ cluster_id: late, metric_key: 'qps', value: 9_876.5, at: `${days[1]}T23:59:00.000Z` }]);
    const warm = await expectWindowSameAsDays(days, now);
    expect(lastWindowReadStats()).toEqual({ cached: METRIC_SHARDS - 1, packs: 0, folded: 1, built: 1 });
    const qps = (warm.rowOf.get(late)! * METRICS + METRIC_KEYS.indexOf('qps')) * SLOTS;
    expect(warm.values[qps + 2]).toBeGreaterThanOrEqual(9_876.5); // max over the window
    clearPackCache();
    await expectWindowSameAsDays(days, now);
    expect(lastWindowReadStats()).toEqual({ cached: 0, packs: METRIC_SHARDS, folded: 0, built: 0 });
  });

  it('a day whose counter is odd (a write in flight, or a writer that died) is folded from the days, and no window of it is built', async () => {
    const { days, now, clusterIds } = await windowOfDays(26, 3, 40);
    const shard = shardOf(clusterIds[0]!);
    await updateItem(
      'metrics',
      { pk: `PACK#${days[0]}#${shard}`, sk: 'COUNTER' },
      { UpdateExpression: 'ADD writes :one', ExpressionAttributeValues: { ':one': 1 } },
    );
    for (const cold of [false, true]) {
      if (cold) clearPackCache();
      await expectWindowSameAsDays(days, now);
      expect(lastWindowReadStats()).toMatchObject({ folded: 1, built: 0 });
    }
  });

  it('a corrupt window pack is never data: folded from the days, and rebuilt', async () => {
    const { days, now, clusterIds } = await windowOfDays(29, 3, 30);
    const pk = `WINDOW#${days[0]}#${days[1]}#${shardOf(clusterIds[0]!)}`;
    const head = await getItem('metrics', { pk, sk: 'HEAD' }, true);
    expect(head?.built_from).toBeGreaterThan(0);
    await putItem('metrics', { pk, sk: `PART#${String(head?.pack_id)}#0000`, data: new Uint8Array(Number(head?.bytes)).fill(3) });
    clearPackCache();
    await expectWindowSameAsDays(days, now);
    expect(lastWindowReadStats()).toEqual({ cached: 0, packs: METRIC_SHARDS - 1, folded: 1, built: 1 });
    clearPackCache();
    await expectWindowSameAsDays(days, now);
    expect(lastWindowReadStats()).toEqual({ cached: 0, packs: METRIC_SHARDS, folded: 0, built: 0 });
  });

  it('writes racing window builds, warm and cold: every read after the writes are done equals the days', async () => {
    const { days, now, clusterIds } = await windowOfDays(37, 4, 48);
    for (let round = 0; round < 6; round++) {
      if (round % 2 === 1) clearPackCache(); // cold rounds: day packs and windows read or rebuilt while the writes go on
      const samples = clusterIds.slice(0, 24).map((cluster_id, i) => ({
        cluster_id,
        metric_key: METRIC_KEYS[(round + i) % METRIC_KEYS.length]!,
        value: round * 100 + i,
        at: `${days[i % 3]}T${String(10 + round).padStart(2, '0')}:00:00.000Z`,
      }));
      await Promise.all([windowRead(days, now), addSamples(samples.slice(0, 12)), windowRead(days, now), addSamples(samples.slice(12))]);
      await expectWindowSameAsDays(days, now);
      clearPackCache();
      await expectWindowSameAsDays(days, now);
    }
  });

  it('without `window`, or with fewer than two settled days, the days are read one by one', async () => {
    const days = daysEnding(31, 2);
    await putRollups(randomRollups(ids(10), days, 1));
    for (const read of [() => readFleetRollupColumns(days, noonOf(days[1]!), refresh), () => windowRead(days, noonOf(days[1]!))]) {
      const columns = await read();
      expect(columns.window).toBeUndefined();
      expect(columns.days).toEqual(days);
      expect(lastWindowReadStats()).toEqual({ cached: 0, packs: 0, folded: 0, built: 0 });
    }
  });
});
