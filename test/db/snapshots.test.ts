// Score snapshots as a few compressed chunk items (issue 21 §1): round trip,
// sizes under DynamoDB's item limit, and readers that never see half a write.
import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { putItem, queryAll } from '../../shared/db/client.js';
import { CHUNK_BYTES, writeChunks } from '../../shared/db/packing.js';
import { commitSnapshot, jsonArrayWriter, listSnapshots, putSnapshot, readCurrentSnapshot, readSnapshot, writeSnapshotChunks } from '../../shared/db/scores.js';
import { brotliWindowBits } from '../support/brotli.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

const METRICS = ['cpu', 'memory', 'disk', 'connections', 'replication_lag', 'iops', 'latency_p99', 'error_rate'];
const round1 = (n: number) => Math.round(n * 10) / 10;
/** A refresh time `minutes` after an hour ago (snapshots expire SNAPSHOT_RETENTION_DAYS after theirs). */
const HOUR_AGO = Date.now() - 3_600_000;
const at = (minutes: number) => new Date(HOUR_AGO + minutes * 60_000).toISOString();

/** Items shaped like a unified score (≈1.5 KB of JSON each), with values that differ per cluster. */
function scores(total: number): { cluster_id: string; [k: string]: unknown }[] {
  return Array.from({ length: total }, (_, i) => ({
    cluster_id: randomUUID(),
    cluster_name: `prod-db-${String(i).padStart(5, '0')}`,
    tier: ['gold', 'silver', 'bronze'][i % 3],
    overall_score: round1(Math.random() * 100),
    classification: ['Healthy', 'Warning', 'Critical'][i % 3],
    top_risk: `Disk Usage (${Math.round(Math.random() * 100)})`,
    metrics_stale: i % 50 === 0,
    last_metric_at: new Date(Math.floor((Date.now() - Math.random() * 86_400_000) / 60_000) * 60_000).toISOString(),
    dimensions: METRICS.map((metric_key) => ({
      metric_key,
      score: round1(Math.random() * 100),
      value: round1(Math.random() * 100),
      status: ['healthy', 'watch', 'warning', 'critical'][Math.floor(Math.random() * 4)],
    })),
    risk_reasons: i % 7 === 0 ? [`${METRICS[i % 8]} above warning for ${i % 13} days`] : [],
  }));
}

const chunkItems = (kind: string, snapshotId: string) =>
  queryAll('scores', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `SNAPSHOT#${kind}#${snapshotId}` } });

describe('score snapshots in compressed chunks', () => {
  it('round-trips 10,000 clusters in a few items, each under 400 KB', async () => {
    const items = scores(10_000);
    const generatedAt = new Date().toISOString();
    const written = await writeSnapshotChunks('fleet', generatedAt, items);
    await commitSnapshot(written, { kpis: { total: 10_000 } });

    expect(written.chunks).toBeLessThanOrEqual(4);
    const stored = await chunkItems('fleet', written.snapshot_id);
    expect(stored).toHaveLength(written.chunks);
    // Brotli's default window: a snapshot repeats rule texts across megabytes (2^18 made the health one 40–48% larger).
    expect(brotliWindowBits(stored[0]!.data as Uint8Array)).toBe(22);
    for (const item of stored) {
      const data = item.data as Uint8Array;
      expect(data).toBeInstanceOf(Uint8Array);
      expect(data.length).toBeLessThanOrEqual(CHUNK_BYTES);
      expect(data.length + String(item.pk).length + String(item.sk).length + 64).toBeLessThan(400 * 1024);
    }

    expect(await readSnapshot('fleet', generatedAt)).toEqual(items);
    const current = await readCurrentSnapshot('fleet');
    expect(current).toMatchObject({ generated_at: generatedAt, count: 10_000, summary: { kpis: { total: 10_000 } } });
    expect(current!.items).toEqual(items);
    expect((await listSnapshots('fleet'))[0]).toEqual({ generated_at: generatedAt, count: 10_000, summary: { kpis: { total: 10_000 } } });
  });

  it('splits what does not fit one chunk and joins it back in order', async () => {
    // Random text hardly compresses: ~1.2 MB of it is four chunks.
    const items = Array.from({ length: 300 }, (_, i) => ({ cluster_id: `c${i}`, noise: randomBytes(3000).toString('base64') }));
    const generatedAt = new Date().toISOString();
    const written = await writeSnapshotChunks('health', generatedAt, items);
    await commitSnapshot(written, {});
    expect(written.chunks).toBeGreaterThanOrEqual(3);
    expect(await chunkItems('health', written.snapshot_id)).toHaveLength(written.chunks);
    expect(await readSnapshot('health', generatedAt)).toEqual(items);
  });

  it('a reader sees the old snapshot until the new one is committed, never a mix', async () => {
    const t1 = at(1);
    const t2 = at(2);
    const old = scores(2_000);
    const next = scores(2_000);
    await putSnapshot('risk', t1, old, { summary: 'old' });

    // The new snapshot's chunks are written, its header not (a writer mid-way, or one that died).
    const pending = await writeSnapshotChunks('risk', t2, next);
    expect(await chunkItems('risk', pending.snapshot_id)).toHaveLength(pending.chunks);
    const during = await readCurrentSnapshot<{ cluster_id: string }>('risk');
    expect(during).toMatchObject({ generated_at: t1, summary: { summary: 'old' } });
    expect(during!.items).toEqual(old);
    expect(await readSnapshot('risk', t2)).toEqual([]);
    expect((await listSnapshots('risk')).map((h) => h.generated_at)).toEqual([t1]);

    await commitSnapshot(pending, { summary: 'new' });
    const after = await readCurrentSnapshot('risk');
    expect(after).toMatchObject({ generated_at: t2, summary: { summary: 'new' } });
    expect(after!.items).toEqual(next);
    expect(await readSnapshot('risk', t1)).toEqual(old); // history stays readable
    expect((await listSnapshots('risk')).map((h) => h.generated_at)).toEqual([t2, t1]);
  });

  it('readers racing a write each get one whole snapshot', async () => {
    const a = scores(1_000);
    const b = scores(1_000);
    await putSnapshot('risk', at(3), a, {});
    let writing = true;
    const seen = new Set<string>();
    const reader = (async () => {
      while (writing) {
        const current = await readCurrentSnapshot<{ cluster_id: string }>('risk');
        const whole = current!.items;
        expect(whole.length).toBe(1_000);
        const first = whole[0]!.cluster_id;
        const source = first === a[0]!.cluster_id ? a : b;
        expect(whole).toEqual(source);
        seen.add(current!.generated_at);
      }
    })();
    await putSnapshot('risk', at(4), b, {});
    await new Promise((resolve) => setTimeout(resolve, 50));
    writing = false;
    await reader;
    expect(seen.has(at(3)) || seen.has(at(4))).toBe(true);
    expect((await readCurrentSnapshot('risk'))!.generated_at).toBe(at(4));
  });

  it('the current snapshot never moves back: an older snapshot committed late joins the history only', async () => {
    const newer = at(121); // after the first test's snapshot (now)
    const older = at(120);
    await putSnapshot('fleet', newer, scores(10), { which: 'newer' });
    await putSnapshot('fleet', older, scores(10), { which: 'older' });
    expect((await readCurrentSnapshot('fleet'))!.summary).toEqual({ which: 'newer' });
    expect((await listSnapshots('fleet', 2)).map((h) => h.summary)).toEqual([{ which: 'newer' }, { which: 'older' }]);
  });
});

describe("a snapshot's JSON, written in pieces as it is compressed", () => {
  /** What jsonArrayWriter writes: each piece copied when written, since its buffer is reused once taken. */
  async function written(items: readonly unknown[]): Promise<Buffer[]> {
    const pieces: Buffer[] = [];
    await jsonArrayWriter(items)(async (piece) => {
      pieces.push(Buffer.from(piece));
      await new Promise((resolve) => setImmediate(resolve));
    });
    return pieces;
  }

  it('is JSON.stringify, byte for byte, at any length and with any text', async () => {
    const text = ['plain', 'Zürich ≥ 90 % — ok', 'emoji 🚀', 'a "quote" and \\ and \n', 'lone \ud800 surrogate'];
    for (const total of [0, 1, 31, 32, 33, 65, 1_000, 5_000]) {
      const items = Array.from({ length: total }, (_, i) => ({ i, name: text[i % text.length], nested: { list: [i, null, true], skipped: undefined } }));
      expect(Buffer.concat(await written(items)).equals(Buffer.from(JSON.stringify(items))), `${total} items`).toBe(true);
    }
    // What JSON.stringify makes null in an array stays null.
    const odd = [undefined, () => 1, Symbol('s'), { toJSON: () => 'mine' }, Number.NaN];
    expect(Buffer.concat(await written(odd)).toString()).toBe(JSON.stringify(odd));
  });

  it('cuts the JSON into pieces of about a MB, and takes an item larger than one whole', async () => {
    const items = Array.from({ length: 3_000 }, (_, i) => ({ cluster_id: `c${i}`, text: 'x'.repeat(1_000) }));
    const pieces = await written(items);
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(1 << 20);

    const large = [{ a: 1 }, { huge: 'é'.repeat(1_500_000) }, { b: 2 }];
    expect(Buffer.concat(await written(large)).equals(Buffer.from(JSON.stringify(large)))).toBe(true);
  });

  it('records the JSON size it compressed, and reads back what it wrote', async () => {
    const items = scores(3_000);
    const generatedAt = at(30);
    const chunks = await writeSnapshotChunks('fleet', generatedAt, items);
    expect(chunks.raw_bytes).toBe(Buffer.byteLength(JSON.stringify(items)));
    await commitSnapshot(chunks, {});
    expect(await readSnapshot('fleet', generatedAt)).toEqual(items);
  });

  it('a write that fails ends the serialising with its error, no more written', async () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ cluster_id: `c${i}`, text: 'x'.repeat(200) }));
    let writes = 0;
    const failing = jsonArrayWriter(items)(async () => {
      writes++;
      throw new Error('compressor gone');
    });
    await expect(failing).rejects.toThrow('compressor gone');
    expect(writes).toBe(1);
  });

  it('a value whose making fails writes no chunk', async () => {
    const place = { table: 'scores' as const, pk: `SNAPSHOT#fleet#failed-${randomUUID()}`, prefix: 'CHUNK#' };
    const failing = async (write: (piece: Buffer) => Promise<void>) => {
      await write(Buffer.from('[1,2,'));
      throw new TypeError('Do not know how to serialize a BigInt');
    };
    await expect(writeChunks(place, failing)).rejects.toThrow('BigInt');
    await expect(writeSnapshotChunks('fleet', at(31), [{ cluster_id: 'c', n: 1n }])).rejects.toThrow(TypeError);
    expect(await queryAll('scores', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': place.pk } })).toEqual([]);
  });
});

describe('snapshots written before chunks', () => {
  it('are still read: one item per cluster under a header without chunks', async () => {
    await useTestTables(); // a fresh table: no snapshot of any kind yet
    const generatedAt = '2025-12-01T00:00:00.000Z';
    const ttl = Math.floor(Date.now() / 1000) + 86_400;
    const items = scores(30);
    for (const item of items)
      await putItem('scores', { pk: `SNAPSHOT#health#${generatedAt}`, sk: `CLUSTER#${item.cluster_id}`, data: JSON.stringify(item), ttl });
    await putItem('scores', { pk: 'SNAPSHOTS#health', sk: generatedAt, count: items.length, summary: { legacy: true }, ttl });

    const read = await readSnapshot<{ cluster_id: string }>('health', generatedAt);
    expect(read.sort((x, y) => x.cluster_id.localeCompare(y.cluster_id))).toEqual([...items].sort((x, y) => x.cluster_id.localeCompare(y.cluster_id)));
    const current = await readCurrentSnapshot('health');
    expect(current).toMatchObject({ generated_at: generatedAt, count: 30, summary: { legacy: true } });
    expect(current!.items).toHaveLength(30);
    expect(await listSnapshots('health')).toEqual([{ generated_at: generatedAt, count: 30, summary: { legacy: true } }]);
  });

  it('a snapshot with no header (unfinished) reads as none', async () => {
    expect(await readSnapshot('fleet', '2020-01-01T00:00:00.000Z')).toEqual([]);
    expect(await readCurrentSnapshot('fleet')).toBeUndefined();
  });
});
