// Packed rollups (issue 21 §1): per (day, shard), that shard's cluster-days of
// the day as one binary pack in the cell layout of RollupColumns, so a full
// refresh reads ~100 packs instead of ~70,000 rollup items and decodes them by
// typed-array copies, not JSON parses. In the `metrics` table, beside the rollups:
//   pk = PACK#<day>#<shard>, sk = COUNTER                → writes: the seqlock counter (metrics.ts bumps it)
//   pk = PACK#<day>#<shard>, sk = HEAD                   → the current pack: pack_id, built_from, chunks, bytes, encoding
//   pk = PACK#<day>#<shard>, sk = PART#<pack_id>#<nnnn>  → one slice of that pack's bytes (binary)
// The rollup items stay the source of truth. A pack records the counter value
// it was built from (read before its items, consistently, and even: no write in
// flight); it is current only while the counter still holds that value, since
// every write into a closed day moves the counter twice (metrics.ts). Only days
// that no longer change are packed: days before yesterday, and yesterday from
// 02:00 UTC today (late samples, clock skew). A pack's chunks go under a new
// pack id first, then the head switches (conditionally, never back to an older
// counter): readers see the old pack or the new one, never a mix, and the
// chunks of a build that died are never read (they age out by TTL). A pack
// that does not decode (CorruptPack, naming it) is logged, never used: its
// items are read and its pack rebuilt.
// README "Packed rollups" has the reasoning.
import { endianness } from 'node:os';
import { emptyColumns, METRICS, putDay, SLOTS, type RollupColumns } from '../fleet/rollup-columns.js';
import { parseDayRollup } from '../fleet/rollup.js';
import { createLogger, errorFields, type Logger } from '../log.js';
import { batchGet, mapLimit, queryAll, tableName, type Item } from './client.js';
import { METRIC_SHARDS, packPartition, rollupPartition, ttlOf } from './metrics.js';
import {
  CorruptPack,
  healWriteCounter,
  PACK_COUNTER_SK,
  PACK_HEAD_SK,
  packHeadOf,
  readPackBytes,
  switchPackHead,
  writePack,
  writesOf,
  type PackHead,
} from './packing.js';

/** Format of the bytes before compression (the layout below); a pack of any other is refused. */
const FORMAT_VERSION = 1;
const MAGIC = 0x50524846; // 'FHRP' little-endian
const HEADER_BYTES = 24;
/** The layout below, brotli quality 1 (packing.ts; README: it pays in bytes, not in read time through DynamoDB Local). */
const ENCODING = 'cells-v1+br1';
/** Decoded packs kept per container, least recently used dropped first. */
const CACHE_BYTES = 256 * 1024 * 1024;
/** Yesterday is packed from this hour (UTC) of today on. */
const GRACE_HOURS = 2;

let logger: Logger | undefined;
const log = () => (logger ??= createLogger('rollup-packs'));

/** One (day, shard)'s cluster-days: one-day columns (row = the pack's cluster order, by cluster id). */
export type RollupPack = Pick<RollupColumns, 'clusterIds' | 'values' | 'lastAt'>;

/** A day that no longer changes by `now`: its day ended GRACE_HOURS or more ago. */
export function isPackableDay(day: string, now: Date): boolean {
  return now.getTime() >= Date.parse(`${day}T00:00:00Z`) + (24 + GRACE_HOURS) * 3_600_000;
}

// ---- the binary form --------------------------------------------------------
// Little-endian, 8-byte aligned doubles so decoding is a copy:
//   u32 magic, u32 format, u32 clusters n, u32 METRICS, u32 SLOTS, u32 id bytes
//   u16 × n   each cluster id's length in UTF-16 code units
//   the ids, UTF-8, one after the other; zero padding to a multiple of 8
//   f64 × n × METRICS × SLOTS   values, as RollupColumns.values of one day
//   f64 × n × METRICS           lastAt, as RollupColumns.lastAt of one day

if (endianness() !== 'LE') throw new Error('rollup packs are little-endian: this platform is not');

const align8 = (n: number) => Math.ceil(n / 8) * 8;

/** The raw (uncompressed) bytes of a pack. */
export function encodePack(pack: RollupPack): Buffer {
  const n = pack.clusterIds.length;
  const ids = Buffer.from(pack.clusterIds.join(''), 'utf8');
  const valuesAt = align8(HEADER_BYTES + 2 * n + ids.length);
  const lastAtAt = valuesAt + n * METRICS * SLOTS * 8;
  const out = Buffer.alloc(lastAtAt + n * METRICS * 8);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(FORMAT_VERSION, 4);
  out.writeUInt32LE(n, 8);
  out.writeUInt32LE(METRICS, 12);
  out.writeUInt32LE(SLOTS, 16);
  out.writeUInt32LE(ids.length, 20);
  pack.clusterIds.forEach((id, i) => {
    if (id.length === 0 || id.length > 0xffff) throw new RangeError(`cluster id of ${id.length} characters cannot be packed`);
    out.writeUInt16LE(id.length, HEADER_BYTES + 2 * i);
  });
  ids.copy(out, HEADER_BYTES + 2 * n);
  if (pack.values.length !== n * METRICS * SLOTS || pack.lastAt.length !== n * METRICS) throw new RangeError('pack columns do not match its clusters');
  Buffer.from(pack.values.buffer, pack.values.byteOffset, pack.values.byteLength).copy(out, valuesAt);
  Buffer.from(pack.lastAt.buffer, pack.lastAt.byteOffset, pack.lastAt.byteLength).copy(out, lastAtAt);
  return out;
}

/** A pack from its raw bytes; every length is checked against the bytes there are (`name` names the pack in errors). */
export function decodePack(raw: Buffer, name: { pk: string; packId: string }): RollupPack {
  const corrupt = (reason: string) => new CorruptPack(name.pk, name.packId, reason);
  if (raw.length < HEADER_BYTES) throw corrupt(`${raw.length} bytes, shorter than its header`);
  if (raw.readUInt32LE(0) !== MAGIC) throw corrupt('not a rollup pack');
  if (raw.readUInt32LE(4) !== FORMAT_VERSION) throw corrupt(`format ${raw.readUInt32LE(4)}, expected ${FORMAT_VERSION}`);
  const n = raw.readUInt32LE(8);
  if (raw.readUInt32LE(12) !== METRICS || raw.readUInt32LE(16) !== SLOTS)
    throw corrupt(`${raw.readUInt32LE(12)} metrics × ${raw.readUInt32LE(16)} slots, expected ${METRICS} × ${SLOTS}`);
  const idBytes = raw.readUInt32LE(20);
  // Lengths checked before any allocation they size: n and idBytes must fit the bytes read.
  const idsAt = HEADER_BYTES + 2 * n;
  if (idsAt + idBytes > raw.length) throw corrupt(`${n} clusters and ${idBytes} id bytes do not fit in ${raw.length} bytes`);
  const valuesAt = align8(idsAt + idBytes);
  const lastAtAt = valuesAt + n * METRICS * SLOTS * 8;
  const end = lastAtAt + n * METRICS * 8;
  if (end !== raw.length) throw corrupt(`${raw.length} bytes, ${end} expected for ${n} clusters`);
  const ids = raw.toString('utf8', idsAt, idsAt + idBytes);
  const clusterIds = new Array<string>(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const length = raw.readUInt16LE(HEADER_BYTES + 2 * i);
    if (length === 0 || at + length > ids.length) throw corrupt(`cluster id ${i + 1} of ${n} runs past the ids`);
    clusterIds[i] = ids.slice(at, at + length);
    at += length;
  }
  if (at !== ids.length) throw corrupt(`ids hold ${ids.length - at} characters no cluster claims`);
  // Copies: the bytes may sit at any offset of a pooled buffer, and the columns own their arrays.
  const values = new Float64Array(n * METRICS * SLOTS);
  new Uint8Array(values.buffer).set(raw.subarray(valuesAt, lastAtAt));
  const lastAt = new Float64Array(n * METRICS);
  new Uint8Array(lastAt.buffer).set(raw.subarray(lastAtAt, end));
  return { clusterIds, values, lastAt };
}

/** A pack of rollup items as a Query returns them (sorted by cluster id). */
function packFromItems(day: string, items: readonly Item[]): RollupPack {
  const pack = emptyColumns(
    [day],
    items.map((i) => String(i.cluster_id)),
  );
  for (let row = 0; row < items.length; row++) putDay(pack, 0, row, parseDayRollup(String(items[row]!.m)));
  return pack;
}

// ---- storage (packing.ts) ---------------------------------------------------

/** A pack's chunks under a new pack id, which no reader finds until its head is switched to it. */
export async function writePackChunks(day: string, shard: number, builtFrom: number, pack: RollupPack): Promise<PackHead> {
  // More than MAX_CHUNKS is refused (readers refuse it too): such a shard-day stays on its items.
  const raw = encodePack(pack);
  return writePack('metrics', packPartition(day, shard), { builtFrom, clusters: pack.clusterIds.length, encoding: ENCODING, raw }, ttlOf(day));
}

/** Makes written chunks the current pack of a (day, shard), unless one of a later counter value is there (packing.ts). */
export const switchRollupPackHead = (day: string, shard: number, head: PackHead) => switchPackHead('metrics', packPartition(day, shard), head, ttlOf(day));

/** The pack a head names, or undefined when its chunks are gone (deleted after a newer switch). */
async function readPack(pk: string, head: PackHead): Promise<RollupPack | undefined> {
  const raw = await readPackBytes('metrics', pk, head);
  if (!raw) return undefined;
  const pack = decodePack(raw, { pk, packId: head.pack_id });
  if (pack.clusterIds.length !== head.clusters) throw new CorruptPack(pk, head.pack_id, `${pack.clusterIds.length} clusters, ${head.clusters} in its head`);
  return pack;
}

// ---- the per-container cache --------------------------------------------------
// A decoded pack stays valid exactly as long as its counter value: a warm
// container re-reads only counters and heads, then the packs that moved.

const cache = new Map<string, { builtFrom: number; pack: RollupPack; bytes: number }>();
let cachedBytes = 0;

// Keyed by the physical table too: a process that uses several (tests, benches: one prefix each)
// sees the same pk and counter value in each, for different packs.
const cacheKey = (pk: string) => `${tableName('metrics')}|${pk}`;

function cached(pk: string, writes: number): RollupPack | undefined {
  const key = cacheKey(pk);
  const entry = cache.get(key);
  if (!entry || entry.builtFrom !== writes) return undefined;
  cache.delete(key);
  cache.set(key, entry); // most recently used last
  return entry.pack;
}

function remember(pk: string, builtFrom: number, pack: RollupPack): void {
  const key = cacheKey(pk);
  forget(key);
  const bytes = pack.values.byteLength + pack.lastAt.byteLength + pack.clusterIds.length * 64;
  cache.set(key, { builtFrom, pack, bytes });
  cachedBytes += bytes;
  for (const [key] of cache) {
    if (cachedBytes <= CACHE_BYTES) break;
    forget(key);
  }
}

function forget(key: string): void {
  const entry = cache.get(key);
  if (!entry) return;
  cachedBytes -= entry.bytes;
  cache.delete(key);
}

/** Empties this container's cache of decoded packs (tests, benchmarks). */
export function clearPackCache(): void {
  cache.clear();
  cachedBytes = 0;
}

// ---- the read -------------------------------------------------------------------

/** Where a partition's cluster-days came from, for tests and benchmarks. */
export interface PackReadStats {
  cached: number;
  packs: number;
  items: number;
  built: number;
}

let lastStats: PackReadStats = { cached: 0, packs: 0, items: 0, built: 0 };
/** How the last readFleetRollupColumns got its partitions. */
export const lastPackReadStats = (): PackReadStats => ({ ...lastStats });

interface Partition {
  day: string;
  dayIndex: number;
  shard: number;
  pk: string;
}

/**
 * The fleet's rollups of these days (oldest first, as windowDays gives them)
 * as columns; rows: every cluster with a rollup item in them (grouped by shard).
 * Each (day, shard) comes from its pack when the pack is current, else from its
 * items, and then, if the day no longer changes by `now` and `build` is on, its
 * pack is built and written for the next read (a pack write that fails is logged,
 * not thrown). Only the refresh (the recompute worker, granted write access to the
 * metrics table) builds packs; API containers reading the fleet view read them.
 */
export async function readFleetRollupColumns(days: string[], now = new Date(), { build = true } = {}): Promise<RollupColumns> {
  const partitions: Partition[] = days.flatMap((day, dayIndex) =>
    range(METRIC_SHARDS).map((shard) => ({ day, dayIndex, shard, pk: packPartition(day, shard) })),
  );
  const stats: PackReadStats = { cached: 0, packs: 0, items: 0, built: 0 };
  const packs = new Array<RollupPack>(partitions.length);
  const settled = partitions.map((p, i) => ({ p, i })).filter(({ p }) => isPackableDay(p.day, now));
  const open = partitions.map((p, i) => ({ p, i })).filter(({ p }) => !isPackableDay(p.day, now));
  // Open days are never packed: their items are read at once, beside the counters of the settled days.
  const openReads = mapLimit(open, 32, async ({ p, i }) => {
    packs[i] = await partitionPack(p, 0, undefined, now, stats, build);
  });
  openReads.catch(() => undefined); // awaited below; a failure before then must not go unhandled
  // Fetch: every settled counter and head in consistent BatchGets; a counter read before the items a build reads.
  const keys = settled.flatMap(({ p: { pk } }) => [
    { pk, sk: PACK_COUNTER_SK },
    { pk, sk: PACK_HEAD_SK },
  ]);
  const found = (await mapLimit(slices(keys, 100), 8, (batch) => batchGet('metrics', batch, true))).flat();
  const stored = new Map(found.map((item) => [`${String(item.pk)}|${String(item.sk)}`, item]));
  await Promise.all([
    openReads,
    mapLimit(settled, 32, async ({ p, i }) => {
      const counter = stored.get(`${p.pk}|${PACK_COUNTER_SK}`);
      const head = stored.get(`${p.pk}|${PACK_HEAD_SK}`);
      // A counter a dead writer left odd is evened by a refresh once no writer can still be in flight (packing.ts).
      const healed = build ? await healWriteCounter('metrics', { pk: p.pk, sk: PACK_COUNTER_SK }, counter) : undefined;
      packs[i] = await partitionPack(p, healed ?? writesOf(counter), head, now, stats, build);
    }),
  ]);
  lastStats = stats;
  // Allocate with the rows known (grouped by shard: a shard's days mostly list the same clusters, so copies run long), then copy.
  const rowOf = new Map<string, number>();
  for (let shard = 0; shard < METRIC_SHARDS; shard++)
    for (let d = 0; d < days.length; d++) for (const id of packs[d * METRIC_SHARDS + shard]!.clusterIds) if (!rowOf.has(id)) rowOf.set(id, rowOf.size);
  const columns = emptyColumns(days, [...rowOf.keys()]);
  for (let i = 0; i < partitions.length; i++) copyInto(columns, partitions[i]!.dayIndex, packs[i]!);
  return columns;
}

async function partitionPack(p: Partition, writes: number, headItem: Item | undefined, now: Date, stats: PackReadStats, build: boolean): Promise<RollupPack> {
  const packable = isPackableDay(p.day, now) && writes % 2 === 0;
  if (packable) {
    const hit = cached(p.pk, writes);
    if (hit) {
      stats.cached++;
      return hit;
    }
    try {
      const head = headItem && packHeadOf(p.pk, headItem, ENCODING);
      const pack = head?.built_from === writes ? await readPack(p.pk, head) : undefined;
      if (pack) {
        stats.packs++;
        remember(p.pk, writes, pack);
        return pack;
      }
    } catch (error) {
      // Never data: the items are read instead, and the pack built from them replaces it.
      if (!(error instanceof CorruptPack)) throw error;
      log().error('corrupt rollup pack: read from items, rebuilt', errorFields(error));
    }
  }
  stats.items++;
  const items = await queryAll('metrics', {
    KeyConditionExpression: 'pk = :pk',
    // Only what a pack holds: not the keys, the version or the pulled marks.
    ProjectionExpression: 'cluster_id, m',
    ExpressionAttributeValues: { ':pk': rollupPartition(p.day, p.shard) },
    ConsistentRead: packable,
  });
  const pack = packFromItems(p.day, items);
  if (!packable) return pack;
  remember(p.pk, writes, pack);
  if (!build) return pack;
  try {
    const written = await writePackChunks(p.day, p.shard, writes, pack);
    if (await switchRollupPackHead(p.day, p.shard, written)) stats.built++;
  } catch (error) {
    log().warn('rollup pack not written (read from items until it is)', { pk: p.pk, ...errorFields(error) });
  }
  return pack;
}

/** A pack's cluster-days into their cells, one copy per run of consecutive rows. */
function copyInto(columns: RollupColumns, dayIndex: number, pack: RollupPack): void {
  const perCell = METRICS * SLOTS;
  const n = pack.clusterIds.length;
  const base = dayIndex * columns.clusterIds.length;
  for (let i = 0; i < n; ) {
    const row = columns.rowOf.get(pack.clusterIds[i]!)!;
    let j = i + 1;
    while (j < n && columns.rowOf.get(pack.clusterIds[j]!) === row + (j - i)) j++;
    columns.values.set(pack.values.subarray(i * perCell, j * perCell), (base + row) * perCell);
    columns.lastAt.set(pack.lastAt.subarray(i * METRICS, j * METRICS), (base + row) * METRICS);
    i = j;
  }
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const slices = <T>(list: readonly T[], size: number): T[][] => range(Math.ceil(list.length / size)).map((i) => list.slice(i * size, (i + 1) * size));
