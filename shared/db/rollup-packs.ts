// Packed rollups (issue 21 §1): per (day, shard), that shard's cluster-days of
// the day as one binary pack in the cell layout of RollupColumns, so a full
// refresh reads ~100 packs instead of ~70,000 rollup items and decodes them by
// typed-array copies, not JSON parses. In the `metrics` table, beside the rollups:
//   pk = PACK#<day>#<shard>, sk = COUNTER                → writes: the seqlock counter (metrics.ts bumps it)
//   pk = PACK#<day>#<shard>, sk = HEAD                   → the current pack: pack_id, built_from, chunks, bytes, encoding
//   pk = PACK#<day>#<shard>, sk = PART#<pack_id>#<nnnn>  → one slice of that pack's bytes (binary)
//   pk = WINDOW#<first>#<last>#<shard>, sk = HEAD | PART#…  → the refresh's window pack: those settled days' cells
//                                                           folded into one per cluster (foldDays), current while
//                                                           every day's counter holds what it was built from
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
// items are read and its pack rebuilt. The reading through a pack (heal, cache,
// build) is packing.ts' readThroughPack, shared with the inventory pack.
// README "Packed rollups" has the reasoning.
import { CELL_BYTES, doublesAt, emptyColumns, foldDays, METRICS, putCell, putDay, SLOTS, type RollupColumns } from '../fleet/rollup-columns.js';
import { base64Decoder, batchGet, mapLimit, queryAllWire, type Item, type WireItem } from './client.js';
import { METRIC_SHARDS, packPartition, rollupPartition, storedDay, ttlOf } from './metrics.js';
import { CorruptPack, PACK_COUNTER_SK, PACK_HEAD_SK, packableCounter, readThroughPack, writesOf, type PackBuilder, type PackSource } from './packing.js';

/** Format of the bytes before compression (the layout below); a pack of any other is refused. */
const FORMAT_VERSION = 1;
const MAGIC = 0x50524846; // 'FHRP' little-endian
const HEADER_BYTES = 24;
/** The layout below, brotli quality 1 (packing.ts; README: it pays in bytes, not in read time through DynamoDB Local). */
const ENCODING = 'cells-v1+br1';
/** Yesterday is packed from this hour (UTC) of today on. */
const GRACE_HOURS = 2;

/** One (day, shard)'s cluster-days: one-day columns (row = the pack's cluster order, by cluster id). */
export type RollupPack = Pick<RollupColumns, 'clusterIds' | 'values' | 'lastAt'>;

/** A day that no longer changes by `now`: its day ended GRACE_HOURS or more ago. */
export function isPackableDay(day: string, now: Date): boolean {
  return now.getTime() >= Date.parse(`${day}T00:00:00Z`) + (24 + GRACE_HOURS) * 3_600_000;
}

// ---- the binary form --------------------------------------------------------
// Little-endian, 8-byte aligned doubles so decoding views them (doublesAt):
//   u32 magic, u32 format, u32 clusters n, u32 METRICS, u32 SLOTS, u32 id bytes
//   u16 × n   each cluster id's length in UTF-16 code units
//   the ids, UTF-8, one after the other; zero padding to a multiple of 8
//   f64 × n × METRICS × SLOTS   values, as RollupColumns.values of one day
//   f64 × n × METRICS           lastAt, as RollupColumns.lastAt of one day

// (rollup-columns.ts checks on import that this platform is little-endian.)

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
  // Views of the decompressed bytes where they sit 8-aligned (zlib's output is a buffer of its
  // own, so they do): a decoded pack is read-only, copied into the columns that own theirs.
  // A copy only for bytes at an odd offset (a pooled buffer).
  return { clusterIds, values: doublesAt(raw, valuesAt, (lastAtAt - valuesAt) / 8), lastAt: doublesAt(raw, lastAtAt, (end - lastAtAt) / 8) };
}

/**
 * A pack of rollup items as a Query sends them (sorted by cluster id, read by queryAllWire):
 * each cell decoded from its base64 and copied in, or an item written before cells parsed.
 */
function packFromItems(day: string, items: readonly WireItem[]): RollupPack {
  const pack = emptyColumns(
    [day],
    items.map((i) => String(i.cluster_id?.S)),
  );
  // Each cell is decoded into the same bytes (8-aligned: its own buffer), which putCell copies out.
  const scratch = Buffer.allocUnsafeSlow(CELL_BYTES);
  for (let row = 0; row < items.length; row++) {
    const m = items[row]!.m;
    if (m?.B !== undefined) putCell(pack, 0, row, base64Decoder(m.B, scratch));
    else putDay(pack, 0, row, storedDay(String(m?.S)));
  }
  return pack;
}

// ---- the read -------------------------------------------------------------------

/** Where a partition's cluster-days came from, for tests and benchmarks. */
export interface PackReadStats {
  cached: number;
  packs: number;
  items: number;
  built: number;
}

/** Where a window's folded cells came from: cached, its pack, or folded from the days' here (and then built). */
export interface WindowReadStats {
  cached: number;
  packs: number;
  folded: number;
  built: number;
}

type ReadStats = PackReadStats & { windows: WindowReadStats };
const noStats = (): ReadStats => ({ cached: 0, packs: 0, items: 0, built: 0, windows: { cached: 0, packs: 0, folded: 0, built: 0 } });
let lastStats = noStats();
/** How the last readFleetRollupColumns got its partitions. */
export const lastPackReadStats = (): PackReadStats => dayStats(lastStats);
/** The day packs' part of a read's stats. */
function dayStats({ windows: _, ...days }: ReadStats): PackReadStats {
  return days;
}
/** How the last readFleetRollupColumns got its window packs (none without `window`). */
export const lastWindowReadStats = (): WindowReadStats => ({ ...lastStats.windows });

interface Partition {
  day: string;
  dayIndex: number;
  shard: number;
  pk: string;
}

/** A shard's settled days of the lookback, read as one window pack (their cells folded). */
interface WindowPartition {
  days: readonly string[];
  shard: number;
  pk: string;
}

/** The partition of a window pack: a shard's cells of these consecutive days, folded. */
const windowPartition = (days: readonly string[], shard: number) => `WINDOW#${days[0]}#${days.at(-1)}#${shard}`;
/** Window packs serve the lookbacks that start on their first day: a day or two; then TTL takes them. */
const WINDOW_TTL_SECONDS = 3 * 86_400;
const WINDOW_ENCODING = 'window-cells-v1+br1';

/**
 * The fleet's rollups of these days (oldest first, as windowDays gives them)
 * as columns; rows: every cluster with a rollup item in them (grouped by shard).
 * With `window` (the refresh), the settled days, when they are at least two and
 * begin the list, come folded into the columns' first day (RollupColumns.window),
 * one window pack per shard, read, cached and built like the day packs below.
 * Each (day, shard) comes from its pack when the pack is current, else from its
 * items, and then, if the day no longer changes by `now` and `build` is given, its
 * pack is built and written for the next read (a pack write that fails is logged,
 * not thrown). Only the refresh (the recompute worker, granted write access to the
 * metrics table) builds packs; API containers reading the fleet view read them.
 * With `shared`, the columns' arrays are SharedArrayBuffers (emptyColumns).
 */
export async function readFleetRollupColumns(
  days: string[],
  now = new Date(),
  { build, window = false, shared = false }: { build?: PackBuilder; window?: boolean; shared?: boolean } = {},
): Promise<RollupColumns> {
  const stats = noStats();
  // `window`: the settled days (a prefix of `days`, at least two) are read folded, one window pack per shard.
  const folded = window ? days.filter((day) => isPackableDay(day, now)) : [];
  const windowed = folded.length >= 2 && folded.every((day, i) => day === days[i]);
  const perDay = windowed ? days.slice(folded.length) : days;
  const columnDays = windowed ? [folded[0]!, ...perDay] : perDay;
  const first = windowed ? 1 : 0;
  const partitions: Partition[] = perDay.flatMap((day, d) =>
    range(METRIC_SHARDS).map((shard) => ({ day, dayIndex: first + d, shard, pk: packPartition(day, shard) })),
  );
  const windows: WindowPartition[] = windowed ? range(METRIC_SHARDS).map((shard) => ({ days: folded, shard, pk: windowPartition(folded, shard) })) : [];
  // Per column day and shard, the cells read (a window's in column day 0).
  const packs = new Array<RollupPack>(columnDays.length * METRIC_SHARDS);
  const settled = partitions.filter((p) => isPackableDay(p.day, now));
  const open = partitions.filter((p) => !isPackableDay(p.day, now));
  // Open days are never packed: their items are read at once, beside the counters of the settled days.
  const openReads = mapLimit(open, 32, async (p) => {
    packs[p.dayIndex * METRIC_SHARDS + p.shard] = await partitionPack(p, new Map(), now, stats, build);
  });
  openReads.catch(() => undefined); // awaited below; a failure before then must not go unhandled
  // Fetch: every settled counter and head (a window's days' too) and every window head in consistent
  // BatchGets; a counter read before the items a build reads.
  const settledPks = [...settled.map((p) => p.pk), ...windows.flatMap((w) => w.days.map((day) => packPartition(day, w.shard)))];
  const keys = [
    ...settledPks.flatMap((pk) => [
      { pk, sk: PACK_COUNTER_SK },
      { pk, sk: PACK_HEAD_SK },
    ]),
    ...windows.map((w) => ({ pk: w.pk, sk: PACK_HEAD_SK })),
  ];
  const stored = await readKeys(keys);
  await Promise.all([
    openReads,
    mapLimit(settled, 32, async (p) => {
      packs[p.dayIndex * METRIC_SHARDS + p.shard] = await partitionPack(p, stored, now, stats, build);
    }),
    mapLimit(windows, 16, async (w) => {
      packs[w.shard] = await windowPack(w, stored, now, stats, build);
    }),
  ]);
  lastStats = stats;
  // Allocate with the rows known (grouped by shard: a shard's days mostly list the same clusters, so copies run long), then copy.
  const rowOf = new Map<string, number>();
  for (let shard = 0; shard < METRIC_SHARDS; shard++)
    for (let d = 0; d < columnDays.length; d++) for (const id of packs[d * METRIC_SHARDS + shard]!.clusterIds) if (!rowOf.has(id)) rowOf.set(id, rowOf.size);
  const columns: RollupColumns = { ...emptyColumns(columnDays, [...rowOf.keys()], shared), ...(windowed ? { window: folded } : {}) };
  for (let i = 0; i < packs.length; i++) copyInto(columns, Math.floor(i / METRIC_SHARDS), packs[i]!);
  return columns;
}

/**
 * Builds the packs that `days`' settled shards lack (none, or one of an older counter value), so
 * that the next reader of those days (the chat's SQL snapshot reads 14) reads packs, not items. A
 * refresh packs only the days its lookback reads: one of a day alone packs none, and rollups a
 * backfill writes for past days leave their packs stale. A current pack costs its counter and head
 * in a BatchGet, nothing more; so does a shard with a write in flight (the next call packs it). The
 * rest go through readThroughPack, which heals a counter a dead writer left odd. Answers how each
 * shard it read was read (none read: all current) and how many it built.
 */
export async function packSettledDays(days: readonly string[], now: Date, build: PackBuilder): Promise<PackReadStats> {
  const partitions: Partition[] = days
    .filter((day) => isPackableDay(day, now))
    .flatMap((day) => range(METRIC_SHARDS).map((shard) => ({ day, dayIndex: 0, shard, pk: packPartition(day, shard) })));
  const keys = partitions.flatMap(({ pk }) => [
    { pk, sk: PACK_COUNTER_SK },
    { pk, sk: PACK_HEAD_SK },
  ]);
  const stored = await readKeys(keys);
  const lacking = partitions.filter((p) => {
    const counter = stored.get(`${p.pk}|${PACK_COUNTER_SK}`);
    return stored.get(`${p.pk}|${PACK_HEAD_SK}`)?.built_from !== writesOf(counter) && packableCounter(counter);
  });
  const stats = noStats();
  // A few at a time: each holds its shard's items while it packs them.
  await mapLimit(lacking, 4, async (p) => {
    await partitionPack(p, stored, now, stats, build);
  });
  return dayStats(stats);
}

/**
 * A shard's settled lookback days folded (foldDays), through its window pack. The pack is
 * current while every day's write counter still holds the value it was built from: counters
 * only grow, so their sum, recorded as the pack's `built_from`, is equal only then, and a
 * pack is built only while every counter is even (no write in flight), from day cells read
 * through their own packs by the seqlock above. A day whose counter is odd (a write in
 * flight, or a writer that died) makes this read take the days one by one, folded here,
 * which heals the counter for the next read.
 */
async function windowPack(w: WindowPartition, stored: Map<string, Item>, now: Date, stats: ReadStats, build: PackBuilder | undefined): Promise<RollupPack> {
  const dayParts = w.days.map((day, dayIndex) => ({ day, dayIndex, shard: w.shard, pk: packPartition(day, w.shard) }));
  const foldDaysRead = async () => foldDays(await Promise.all(dayParts.map((p) => partitionPack(p, stored, now, stats, build))));
  const writes = dayParts.map((p) => writesOf(stored.get(`${p.pk}|${PACK_COUNTER_SK}`)));
  if (writes.some((n) => n < 0 || n % 2 !== 0)) {
    stats.windows.folded++;
    return foldDaysRead();
  }
  const read = await readThroughPack<RollupPack>(
    {
      table: 'metrics',
      pk: w.pk,
      encoding: WINDOW_ENCODING,
      ttl: Math.floor(now.getTime() / 1000) + WINDOW_TTL_SECONDS,
      fromItems: foldDaysRead,
      ...packCodec(w.pk),
    },
    { counter: { writes: writes.reduce((a, b) => a + b, 0) }, head: stored.get(`${w.pk}|${PACK_HEAD_SK}`), build },
  );
  stats.windows[read.from === 'items' ? 'folded' : read.from === 'pack' ? 'packs' : 'cached']++;
  if (read.built) stats.windows.built++;
  return read.value;
}

/** A (day, shard)'s rollups as packing.ts reads and packs them. */
function rollupSource(p: Partition): PackSource<RollupPack> {
  return {
    table: 'metrics',
    pk: p.pk,
    encoding: ENCODING,
    ttl: ttlOf(p.day),
    fromItems: async (consistent) =>
      packFromItems(
        p.day,
        await queryAllWire('metrics', {
          KeyConditionExpression: 'pk = :pk',
          // Only what a pack holds: not the keys, the version or the pulled marks.
          ProjectionExpression: 'cluster_id, m',
          ExpressionAttributeValues: { ':pk': rollupPartition(p.day, p.shard) },
          ConsistentRead: consistent,
        }),
      ),
    ...packCodec(p.pk),
  };
}

/** How day packs and window packs (the same cell layout) are encoded, decoded and counted. */
const packCodec = (pk: string): Pick<PackSource<RollupPack>, 'encode' | 'decode' | 'count' | 'bytes'> => ({
  encode: encodePack,
  decode: (raw, head) => decodePack(raw, { pk, packId: head.pack_id }),
  count: (pack) => pack.clusterIds.length,
  bytes: (pack) => pack.values.byteLength + pack.lastAt.byteLength + pack.clusterIds.length * 64,
});

async function partitionPack(p: Partition, found: Map<string, Item>, now: Date, stats: PackReadStats, build: PackBuilder | undefined): Promise<RollupPack> {
  const read = await readThroughPack(rollupSource(p), {
    counter: found.get(`${p.pk}|${PACK_COUNTER_SK}`),
    head: found.get(`${p.pk}|${PACK_HEAD_SK}`),
    settled: isPackableDay(p.day, now),
    build,
  });
  stats[read.from === 'pack' ? 'packs' : read.from]++;
  if (read.built) stats.built++;
  return read.value;
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

/** These items of `metrics` (counters and heads), read consistently in BatchGets, by `pk|sk`. */
async function readKeys(keys: readonly { pk: string; sk: string }[]): Promise<Map<string, Item>> {
  const found = (await mapLimit(slices(keys, 100), 8, (batch) => batchGet('metrics', batch, true))).flat();
  return new Map(found.map((item) => [`${String(item.pk)}|${String(item.sk)}`, item]));
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const slices = <T>(list: readonly T[], size: number): T[][] => range(Math.ceil(list.length / size)).map((i) => list.slice(i * size, (i + 1) * size));
