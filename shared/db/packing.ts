// What every packed copy shares: one value too large for an item (a snapshot's
// JSON, a rollup pack, the inventory pack) stored brotli-compressed in slices
// under DynamoDB's 400 KB item limit, and the write counter (a seqlock) that
// tells a reader whether a pack built from items still holds every write.
//   pk = <the value's partition>, sk = <prefix><nnnn>  → one slice (binary `data`)
// Slices are written under a prefix no reader knows yet (a new id), so a value
// is switched to by writing its header after its slices, never half seen.
// Reading checks the slice count, the compressed and the raw size against
// what the header recorded: anything else is the caller's corrupt-value error.
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants as zlib } from 'node:zlib';
import { deleteItem, mapLimit, putItem, queryAll, updateItem, type Key } from './client.js';
import type { TableName } from './tables.js';

/** The largest slice: DynamoDB's item limit is 400 KB (names and keys included); the rest is headroom. */
export const CHUNK_BYTES = 350 * 1024;
/** No value has more slices than this (89 MB compressed). */
export const MAX_CHUNKS = 256;
/** A value whose header predates `raw_bytes` decompresses to at most this. */
const MAX_RAW_BYTES = 512 * 1024 * 1024;

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/** Where a value's slices live: `sk = prefix + nnnn` in partition `pk`. */
export interface ChunkPlace {
  table: TableName;
  pk: string;
  prefix: string;
}

/** What a header records of its value's slices. */
export interface Chunked {
  chunks: number;
  /** Compressed, all slices together. */
  bytes: number;
  /** Before compression (absent from snapshot headers written before it was recorded). */
  raw_bytes?: number;
}

const sliceKey = (place: ChunkPlace, index: number): Key => ({ pk: place.pk, sk: `${place.prefix}${String(index).padStart(4, '0')}` });
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * Brotli quality 1: on 10,000-cluster snapshots (16, 20 and 7 MB of JSON) it was the cheapest
 * compress + decompress of gzip 1/3/6 and brotli 1/3/4/5/6 and about half gzip -1's size;
 * on rollup packs it pays in bytes, not in read time (shared/db/README.md).
 */
export async function writeChunks(place: ChunkPlace, raw: Buffer, ttl?: number): Promise<Required<Chunked>> {
  const packed = await compress(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 1, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } });
  const chunks = Math.max(1, Math.ceil(packed.length / CHUNK_BYTES));
  if (chunks > MAX_CHUNKS) throw new RangeError(`${place.pk}: ${chunks} chunks, at most ${MAX_CHUNKS}`);
  await mapLimit(range(chunks), 4, (i) =>
    putItem(place.table, { ...sliceKey(place, i), data: packed.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES), ...(ttl ? { ttl } : {}) }),
  );
  return { chunks, bytes: packed.length, raw_bytes: raw.length };
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
  const limit = header.raw_bytes ?? MAX_RAW_BYTES;
  let raw: Buffer;
  try {
    raw = await decompress(packed, { maxOutputLength: Math.max(1, limit) });
  } catch (error) {
    throw corrupt(`does not decompress within ${limit} bytes (${(error as Error).message})`);
  }
  if (header.raw_bytes !== undefined && raw.length !== header.raw_bytes) throw corrupt(`${raw.length} bytes decompressed, ${header.raw_bytes} written`);
  return raw;
}

/** Deletes a replaced value's slices; what fails to go is left to TTL (`onError` says so). */
export async function deleteChunks(place: ChunkPlace, chunks: number, onError: (error: unknown) => void): Promise<void> {
  await mapLimit(range(Math.min(chunks, MAX_CHUNKS)), 4, (i) => deleteItem(place.table, sliceKey(place, i))).catch(onError);
}

/**
 * One `ADD writes 1` on a write counter. A writer bumps it before its first put and after
 * its last, so it is odd while a write is in flight; a pack built from items read after an
 * even value, and recording it, holds every write as long as the counter still has it.
 */
export async function bumpWriteCounter(table: TableName, key: Key, ttl?: number): Promise<void> {
  await updateItem(table, key, {
    UpdateExpression: ttl ? 'ADD writes :one SET #ttl = :ttl' : 'ADD writes :one',
    ...(ttl ? { ExpressionAttributeNames: { '#ttl': 'ttl' } } : {}),
    ExpressionAttributeValues: { ':one': 1, ...(ttl ? { ':ttl': ttl } : {}) },
    ReturnValues: 'NONE',
  });
}

/** A write counter's value as read: 0 when it was never bumped, -1 (odd: no pack is current) when it is not a count. */
export function writesOf(item: Record<string, unknown> | undefined): number {
  if (item?.writes === undefined) return 0;
  const writes = item.writes;
  return typeof writes === 'number' && Number.isSafeInteger(writes) && writes >= 0 ? writes : -1;
}
