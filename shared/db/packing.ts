// What every packed copy shares: one value too large for an item (a snapshot's
// JSON, a rollup pack, the inventory pack) stored brotli-compressed in slices
// under DynamoDB's 400 KB item limit; and packs: a copy of many items built
// from them, made current by a head and trusted by a write counter (a seqlock).
//   pk = <the value's partition>, sk = <prefix><nnnn>  → one slice (binary `data`)
// Slices are written under a prefix no reader knows yet (a new id), so a value
// is switched to by writing its header after its slices, never half seen.
// Reading checks the slice count, the compressed and the raw size against
// what the header recorded: anything else is the caller's corrupt-value error.
// A pack's partition holds:
//   sk = COUNTER                → writes: bumped by every writer of the packed items, before and after
//   sk = HEAD                   → the current pack: pack_id, built_from (a counter value), sizes, encoding
//   sk = PART#<pack_id>#<nnnn>  → its slices
// The reasoning (seqlock, switching, mending) is in README "Packed rollups".
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { promisify } from 'node:util';
import type { BrotliOptions } from 'node:zlib';
import { createLogger, errorFields, type Logger } from '../log.js';
import { ConditionFailed, deleteItem, mapLimit, putItem, queryAll, setFields, tableName, updateItem, type Item, type Key } from './client.js';
import type { TableName } from './tables.js';

/** The largest slice: DynamoDB's item limit is 400 KB (names and keys included); the rest is headroom. */
export const CHUNK_BYTES = 350 * 1024;
/** No value has more slices than this (89 MB compressed). */
const MAX_CHUNKS = 256;
/** A value whose header predates `raw_bytes` decompresses to at most this. */
const MAX_RAW_BYTES = 512 * 1024 * 1024;

/**
 * zlib, loaded by the first value compressed or decompressed: most requests of the groups that
 * import this module read no pack, and loading zlib was ≈ 5% of their cold start (issue 21 §4).
 */
const zlib = () => process.getBuiltinModule('node:zlib');
const compress = (raw: Buffer, options: BrotliOptions) => promisify(zlib().brotliCompress)(raw, options);
const decompress = (packed: Buffer, options: BrotliOptions) => promisify(zlib().brotliDecompress)(packed, options);

/** Where a value's slices live: `sk = prefix + nnnn` in partition `pk`. */
export interface ChunkPlace {
  table: TableName;
  pk: string;
  prefix: string;
}

/** What a header records of its value's slices. */
interface Chunked {
  chunks: number;
  /** Compressed, all slices together. */
  bytes: number;
  /** Before compression (absent from snapshot headers written before it was recorded). */
  raw_bytes?: number;
}

/**
 * zlib's output buffer size for an output of about `bytes`. Node's default is 16 KB: a
 * callback, a buffer and a copy per 16 KB, then a join, which cost more than brotli itself
 * on a refresh's 96 rollup packs (≈ 1.3 ms of a 0.5 MB pack's decompression); a buffer
 * sized to the output makes it one. Capped, so a header cannot make it allocate much up front.
 */
const outputChunk = (bytes: number): number => Math.min(Math.max(bytes, 64 * 1024), 64 * 1024 * 1024);

const sliceKey = (place: ChunkPlace, index: number): Key => ({ pk: place.pk, sk: `${place.prefix}${String(index).padStart(4, '0')}` });
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * Brotli quality 1 (writeChunks says why), for about `bytes` of input (0: unknown, brotli's own
 * default), with brotli's default window (2^22) unless `windowBits` says less. A reader's decoder
 * writes all it decodes through a ring buffer of the window's size, whose pages a fresh process
 * touches for the first time; a value that repeats itself only nearby packs as well in less
 * (clusters.ts' inventory), one that repeats across megabytes does not (snapshots, rollup cells).
 */
const brotliOptions = (bytes = 0, windowBits?: number) => ({
  chunkSize: outputChunk(bytes >> 1),
  params: {
    [zlib().constants.BROTLI_PARAM_QUALITY]: 1,
    [zlib().constants.BROTLI_PARAM_SIZE_HINT]: bytes,
    ...(windowBits === undefined ? {} : { [zlib().constants.BROTLI_PARAM_LGWIN]: windowBits }),
  },
});

/**
 * A value made in pieces as it is written, for one too large to hold whole cheaply (a snapshot's
 * JSON): `write` resolves once the compressor has taken a piece, whose buffer may then be reused.
 */
export type PieceWriter = (write: (piece: Buffer) => Promise<void>) => Promise<void>;

/** One brotli stream of what `produce` writes, compressed while it makes the next piece. */
async function compressPieces(produce: PieceWriter, windowBits?: number): Promise<{ packed: Buffer; rawBytes: number }> {
  const stream = zlib().createBrotliCompress(brotliOptions(0, windowBits));
  const out: Buffer[] = [];
  let [packedBytes, rawBytes] = [0, 0];
  stream.on('data', (chunk: Buffer) => {
    out.push(chunk);
    packedBytes += chunk.length;
  });
  // Listening from the start: a compressor's error must not go unheard while pieces are made.
  const ended = once(stream, 'end');
  ended.catch(() => undefined); // awaited below; an error before then reaches the writes' callbacks too
  try {
    await produce(
      (piece) =>
        new Promise((resolve, reject) => {
          rawBytes += piece.length;
          stream.write(piece, (error) => (error ? reject(error) : resolve()));
        }),
    );
    stream.end();
    await ended;
  } catch (error) {
    stream.destroy();
    throw error;
  }
  return { packed: Buffer.concat(out, packedBytes), rawBytes };
}

/**
 * Brotli quality 1: on 10,000-cluster snapshots (16, 20 and 7 MB of JSON) it was the cheapest
 * compress + decompress of gzip 1/3/6 and brotli 1/3/4/5/6 and about half gzip -1's size;
 * on rollup packs it pays in bytes, not in read time (shared/db/README.md). `raw` may be made
 * as it is written (PieceWriter), compressed as one value.
 */
export async function writeChunks(place: ChunkPlace, raw: Buffer | PieceWriter, ttl?: number, windowBits?: number): Promise<Required<Chunked>> {
  const { packed, rawBytes } = Buffer.isBuffer(raw)
    ? { packed: await compress(raw, brotliOptions(raw.length, windowBits)), rawBytes: raw.length }
    : await compressPieces(raw, windowBits);
  const chunks = Math.max(1, Math.ceil(packed.length / CHUNK_BYTES));
  if (chunks > MAX_CHUNKS) throw new RangeError(`${place.pk}: ${chunks} chunks, at most ${MAX_CHUNKS}`);
  await mapLimit(range(chunks), 4, (i) =>
    putItem(place.table, { ...sliceKey(place, i), data: packed.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES), ...(ttl ? { ttl } : {}) }),
  );
  return { chunks, bytes: packed.length, raw_bytes: rawBytes };
}

/**
 * A value's raw bytes, or undefined when slices are missing (deleted after a newer value
 * replaced it, or a write that died). `corrupt(reason)` is thrown for anything that does
 * not match the header: never data.
 */
export async function readChunks(place: ChunkPlace, header: Chunked, corrupt: (reason: string) => Error): Promise<Buffer | undefined> {
  if (!Number.isSafeInteger(header.chunks) || header.chunks < 1 || header.chunks > MAX_CHUNKS) throw corrupt(`${String(header.chunks)} chunks`);
  const parts = await queryAll(place.table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': place.pk, ':prefix': place.prefix },
    ConsistentRead: true,
  });
  if (parts.length < header.chunks) return undefined;
  if (parts.length > header.chunks) throw corrupt(`${parts.length} chunks stored, ${header.chunks} in its header`);
  const slices = parts.map((part, i) => {
    if (part.sk !== sliceKey(place, i).sk || !(part.data instanceof Uint8Array)) throw corrupt(`chunk ${i + 1} of ${header.chunks} is not one`);
    return part.data;
  });
  const packed = Buffer.concat(slices);
  if (packed.length !== header.bytes) throw corrupt(`${packed.length} bytes read, ${header.bytes} written`);
  const known = header.raw_bytes;
  if (known !== undefined && (!Number.isSafeInteger(known) || known < 0 || known > MAX_RAW_BYTES)) throw corrupt(`${String(known)} raw bytes`);
  const limit = known ?? MAX_RAW_BYTES;
  let raw: Buffer;
  try {
    // The size known: one output buffer one byte larger, so zlib ends in one pass (no slices to join).
    raw = await decompress(packed, { maxOutputLength: Math.max(1, limit), ...(known === undefined ? {} : { chunkSize: outputChunk(known + 1) }) });
  } catch (error) {
    throw corrupt(`does not decompress within ${limit} bytes (${(error as Error).message})`);
  }
  if (header.raw_bytes !== undefined && raw.length !== header.raw_bytes) throw corrupt(`${raw.length} bytes decompressed, ${header.raw_bytes} written`);
  return raw;
}

/** Deletes a replaced value's slices; what fails to go is left to TTL, or to the next build where there is none (`onError` says so). */
async function deleteChunks(place: ChunkPlace, chunks: number, onError: (error: unknown) => void): Promise<void> {
  await mapLimit(range(Math.min(chunks, MAX_CHUNKS)), 4, (i) => deleteItem(place.table, sliceKey(place, i))).catch(onError);
}

/** A writer runs at most this long (Lambda's 15-minute limit): a counter odd for longer has a writer that died between its bumps. */
export const WRITER_MAX_MS = 15 * 60_000;

/**
 * One `ADD writes 1` on a write counter, stamping when. A writer bumps it before its first
 * put and after its last, so it is odd while a write is in flight; a pack built from items
 * read after an even value, and recording it, holds every write as long as the counter
 * still has it.
 */
export async function bumpWriteCounter(table: TableName, key: Key, ttl?: number): Promise<void> {
  await updateItem(table, key, {
    UpdateExpression: `ADD writes :one SET bumped_at = :now${ttl ? ', #ttl = :ttl' : ''}`,
    ...(ttl ? { ExpressionAttributeNames: { '#ttl': 'ttl' } } : {}),
    ExpressionAttributeValues: { ':one': 1, ':now': Date.now(), ...(ttl ? { ':ttl': ttl } : {}) },
    ReturnValues: 'NONE',
  });
}

/**
 * Evens a counter a dead writer left odd (every later writer adds 2, so it would stay odd and
 * its items be read forever): only when it still holds the value read and was last bumped
 * WRITER_MAX_MS or more ago, so no writer can still be between its bumps. Answers the even
 * value, or undefined when the counter is even already, too recent, or moved meanwhile.
 */
export async function healWriteCounter(table: TableName, key: Key, item: Item | undefined, now = Date.now()): Promise<number | undefined> {
  const writes = writesOf(item);
  if (writes < 0 || writes % 2 === 0 || !leftByDeadWriter(item, now)) return undefined;
  try {
    await updateItem(table, key, {
      UpdateExpression: 'ADD writes :one SET bumped_at = :now',
      ConditionExpression: 'writes = :writes',
      ExpressionAttributeValues: { ':one': 1, ':now': now, ':writes': writes },
      ReturnValues: 'NONE',
    });
    return writes + 1;
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    return undefined;
  }
}

/** Whether a counter was last bumped WRITER_MAX_MS or more ago, so no writer can still be between its bumps (one bumped before bumped_at was stamped counts as long ago). */
const leftByDeadWriter = (item: Item | undefined, now: number) => now - (typeof item?.bumped_at === 'number' ? item.bumped_at : 0) >= WRITER_MAX_MS;

/** Whether a pack may be built from this counter now: even, or odd and left by a dead writer (healWriteCounter evens it); not while a write is in flight, nor from a counter that is not a count. */
export function packableCounter(item: Item | undefined, now = Date.now()): boolean {
  const writes = writesOf(item);
  return writes >= 0 && (writes % 2 === 0 || leftByDeadWriter(item, now));
}

/** A write counter's value as read: 0 when it was never bumped, -1 (odd: no pack is current) when it is not a count. */
export function writesOf(item: Record<string, unknown> | undefined): number {
  if (item?.writes === undefined) return 0;
  const writes = item.writes;
  return typeof writes === 'number' && Number.isSafeInteger(writes) && writes >= 0 ? writes : -1;
}

// ---- packs ------------------------------------------------------------------

export const PACK_COUNTER_SK = 'COUNTER';
export const PACK_HEAD_SK = 'HEAD';

let logger: Logger | undefined;
const log = () => (logger ??= createLogger('packs'));

/** A stored pack that does not decode or does not match its head: never used as data. */
export class CorruptPack extends Error {
  constructor(pk: string, packId: string, reason: string) {
    super(`pack ${pk} ${packId}: ${reason}`);
    this.name = 'CorruptPack';
  }
}

/** A pack's head: which slices, built from which counter value, holding how many clusters. */
interface PackHead extends Required<Chunked> {
  pack_id: string;
  built_from: number;
  clusters: number;
  encoding: string;
}

const partsOf = (table: TableName, pk: string, packId: string): ChunkPlace => ({ table, pk, prefix: `PART#${packId}#` });

/** A pack's bytes under a new pack id, which no reader finds until its head is switched to it. */
export async function writePack(
  table: TableName,
  pk: string,
  pack: { builtFrom: number; clusters: number; encoding: string; raw: Buffer; windowBits?: number },
  ttl?: number,
): Promise<PackHead> {
  const packId = `${pack.builtFrom}-${randomUUID().slice(0, 8)}`;
  const written = await writeChunks(partsOf(table, pk, packId), pack.raw, ttl, pack.windowBits);
  return { pack_id: packId, built_from: pack.builtFrom, clusters: pack.clusters, ...written, encoding: pack.encoding };
}

/**
 * Makes a written pack current, unless a pack of a later counter value is there
 * already (a concurrent build): then its slices are deleted. A pack of the same
 * value may be replaced (it holds the same writes): that is how a head whose
 * slices are gone or corrupt is mended. The replaced pack's slices are deleted
 * best effort (TTL gets the rest; without TTL, the next switch: dropOlderPacks); a reader still fetching them finds them gone
 * and reads the items instead.
 */
export async function switchPackHead(table: TableName, pk: string, head: PackHead, ttl?: number): Promise<boolean> {
  const { set, names, values } = setFields({ ...head, ...(ttl ? { ttl } : {}) });
  let replaced: Item | undefined;
  try {
    replaced = await updateItem(
      table,
      { pk, sk: PACK_HEAD_SK },
      {
        UpdateExpression: set,
        ConditionExpression: 'attribute_not_exists(pk) OR #from <= :from',
        ExpressionAttributeNames: { ...names, '#from': 'built_from' },
        ExpressionAttributeValues: { ...values, ':from': head.built_from },
        ReturnValues: 'ALL_OLD',
      },
    );
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    await dropPack(table, pk, head.pack_id, head.chunks);
    return false;
  }
  const chunks = Number(replaced?.chunks);
  if (typeof replaced?.pack_id === 'string' && Number.isSafeInteger(chunks)) await dropPack(table, pk, replaced.pack_id, chunks);
  if (!ttl) await dropOlderPacks(table, pk, head.built_from);
  return true;
}

/**
 * Deletes the slices of packs built from counter values older than `builtFrom` (best effort), for a partition
 * without TTL (the inventory's): a build that died between its slices and its head, or a deletion that failed,
 * would keep them for good. Older only: a concurrent build of this value or a later one may be writing its slices
 * now, and one of an older value can never switch to its head again (switchPackHead's condition).
 */
async function dropOlderPacks(table: TableName, pk: string, builtFrom: number): Promise<void> {
  try {
    const parts = await queryAll(table, {
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :part)',
      ExpressionAttributeValues: { ':pk': pk, ':part': 'PART#' },
      ProjectionExpression: 'pk, sk',
    });
    const older = parts.filter((part) => {
      const from = /^PART#(\d+)-/.exec(String(part.sk))?.[1];
      return from !== undefined && Number(from) < builtFrom;
    });
    await mapLimit(older, 4, (part) => deleteItem(table, { pk, sk: String(part.sk) }));
  } catch (error) {
    log().warn('older pack chunks not deleted (the next build tries again)', { pk, ...errorFields(error) });
  }
}

const dropPack = (table: TableName, pk: string, packId: string, chunks: number) =>
  deleteChunks(partsOf(table, pk, packId), chunks, (error) =>
    log().warn('pack chunks not deleted (TTL or the next build removes them)', { pk, pack_id: packId, ...errorFields(error) }),
  );

/** A head item's fields, checked: a head that does not fit (or of another encoding) is a corrupt pack. */
function packHeadOf(pk: string, item: Item, encoding: string): PackHead {
  const packId = typeof item.pack_id === 'string' ? item.pack_id : '?';
  const whole = (field: string, max: number): number => {
    const value = item[field];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max)
      throw new CorruptPack(pk, packId, `head ${field} ${String(value)}`);
    return value;
  };
  const head: PackHead = {
    pack_id: packId,
    built_from: whole('built_from', Number.MAX_SAFE_INTEGER),
    clusters: whole('clusters', 0xffffffff),
    chunks: whole('chunks', MAX_CHUNKS),
    bytes: whole('bytes', MAX_CHUNKS * CHUNK_BYTES),
    raw_bytes: whole('raw_bytes', 0xffffffff),
    encoding: String(item.encoding),
  };
  if (packId === '?') throw new CorruptPack(pk, packId, 'head without a pack id');
  if (head.encoding !== encoding) throw new CorruptPack(pk, packId, `unknown encoding ${head.encoding}`);
  if (head.bytes > head.chunks * CHUNK_BYTES || head.bytes <= (head.chunks - 1) * CHUNK_BYTES)
    throw new CorruptPack(pk, packId, `${head.bytes} bytes in ${head.chunks} chunks`);
  return head;
}

/** The raw bytes of the pack a head names, or undefined when its slices are gone (deleted after a newer switch). */
const readPackBytes = (table: TableName, pk: string, head: PackHead): Promise<Buffer | undefined> =>
  readChunks(partsOf(table, pk, head.pack_id), head, (reason) => new CorruptPack(pk, head.pack_id, reason));

// ---- reading through a pack ---------------------------------------------------
// One value (a rollup shard-day, the inventory) read from its pack when the pack
// is current, else from its items; a refresh (`build`) then writes the pack for
// the next read, after healing a counter a dead writer left odd. Each container
// keeps decoded values while their counter stands still, least recently used
// dropped first past CACHE_BYTES.

/** How a packed value is read from its items and carried in its pack. */
export interface PackSource<T> {
  table: TableName;
  /** The partition of its counter, head and slices. */
  pk: string;
  encoding: string;
  /** Of the head and slices (they age out with what they copy); none: kept. */
  ttl?: number;
  /** The value from its items; `consistent` when read after an even counter (the seqlock needs it). */
  fromItems(consistent: boolean): Promise<T>;
  encode(value: T): Buffer;
  /** Brotli's window for `encode`'s bytes (log2 of its size); none: brotli's default (brotliOptions). */
  windowBits?: number;
  /** Throws CorruptPack (or anything, which is made one) for bytes that are not such a value. */
  decode(raw: Buffer, head: PackHead): T;
  /** Clusters in a value: recorded in the head and checked on decode. */
  count(value: T): number;
  /** Bytes a decoded value holds, for the container's cache. */
  bytes(value: T): number;
}

/**
 * What a reader needs to write packs. Only the refresh (the recompute worker, whose role may
 * write the packed tables) passes one: API bundles, which never build, then carry none of the
 * writing code (esbuild drops what nothing they import references).
 */
export interface PackBuilder {
  heal: typeof healWriteCounter;
  write: typeof writePack;
  switchHead: typeof switchPackHead;
}
export const PACK_BUILDER: PackBuilder = { heal: healWriteCounter, write: writePack, switchHead: switchPackHead };

/** Where a value came from, and whether this read wrote its pack. */
export interface PackRead<T> {
  value: T;
  from: 'cached' | 'pack' | 'items';
  built: boolean;
}

/** Decoded values kept per container (all packs together). */
const CACHE_BYTES = 256 * 1024 * 1024;
/** Keyed by the physical table too: a process using several (tests, benches: one prefix each) sees the same pk and counter in each. */
const cache = new Map<string, { writes: number; value: unknown; packed: boolean; bytes: number }>();
let cachedBytes = 0;

/** Empties this container's cache of decoded packs (tests, benchmarks). */
export function clearPackCache(): void {
  cache.clear();
  cachedBytes = 0;
}

function forget(key: string): void {
  const entry = cache.get(key);
  if (!entry) return;
  cachedBytes -= entry.bytes;
  cache.delete(key);
}

function remember(key: string, entry: { writes: number; value: unknown; packed: boolean; bytes: number }): void {
  forget(key);
  cache.set(key, entry);
  cachedBytes += entry.bytes;
  for (const [oldest] of cache) {
    if (cachedBytes <= CACHE_BYTES) break;
    forget(oldest);
  }
}

/**
 * A value through its pack. `counter` and `head`: its COUNTER and HEAD items as read
 * (consistently, before anything else); `settled`: whether it may be packed at all
 * (rollups: only days that no longer change); `build`: given when this reader may
 * write the table (the refresh). A pack that does not decode is logged, never data:
 * the items are read and, with `build`, the pack rebuilt.
 */
export async function readThroughPack<T>(
  source: PackSource<T>,
  { counter, head, settled = true, build }: { counter: Item | undefined; head: Item | undefined; settled?: boolean; build?: PackBuilder },
): Promise<PackRead<T>> {
  const { table, pk } = source;
  const healed = settled && build ? await build.heal(table, { pk, sk: PACK_COUNTER_SK }, counter) : undefined;
  const writes = healed ?? writesOf(counter);
  const packable = settled && writes % 2 === 0;
  if (!packable) return { value: await source.fromItems(false), from: 'items', built: false };

  const key = `${tableName(table)}|${pk}`;
  let value: T | undefined;
  let from: PackRead<T>['from'] = 'items';
  let packed = false;
  const hit = cache.get(key);
  if (hit?.writes === writes) {
    cache.delete(key);
    cache.set(key, hit); // most recently used last
    ({ packed } = hit);
    value = hit.value as T;
    from = 'cached';
    if (packed || !build) return { value, from, built: false };
  } else if (head) {
    try {
      value = await readPack(source, head, writes);
      if (value !== undefined) [packed, from] = [true, 'pack'];
    } catch (error) {
      if (!(error instanceof CorruptPack)) throw error;
      log().error('corrupt pack: read from items, rebuilt', errorFields(error));
    }
  }
  value ??= await source.fromItems(true);
  let built = false;
  if (build && !packed) {
    try {
      const written = await build.write(
        table,
        pk,
        { builtFrom: writes, clusters: source.count(value), encoding: source.encoding, raw: source.encode(value), windowBits: source.windowBits },
        source.ttl,
      );
      packed = built = await build.switchHead(table, pk, written, source.ttl);
    } catch (error) {
      log().warn('pack not written (read from items until it is)', { pk, ...errorFields(error) });
    }
  }
  remember(key, { writes, value, packed, bytes: source.bytes(value) });
  return { value, from, built };
}

/** The value of the pack a head names, if that head was built from `writes` and its slices are all there. */
async function readPack<T>(source: PackSource<T>, headItem: Item, writes: number): Promise<T | undefined> {
  const head = packHeadOf(source.pk, headItem, source.encoding);
  if (head.built_from !== writes) return undefined;
  const raw = await readPackBytes(source.table, source.pk, head);
  if (!raw) return undefined;
  let value: T;
  try {
    value = source.decode(raw, head);
  } catch (error) {
    throw error instanceof CorruptPack ? error : new CorruptPack(source.pk, head.pack_id, (error as Error).message);
  }
  const count = source.count(value);
  if (count !== head.clusters) throw new CorruptPack(source.pk, head.pack_id, `${count} clusters, ${head.clusters} in its head`);
  return value;
}
