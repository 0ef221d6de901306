// Metric rollups repository. One item per cluster per UTC day holds every
// metric key's min/max/sum/count/last. Items live in day partitions split into
// METRIC_SHARDS shards by cluster id:
//   pk = ROLLUP#<day>#<shard>, sk = CLUSTER#<cluster_id>
// so a fleet-wide window is days × shards parallel Queries (never one request
// per cluster), one cluster's window is one BatchGet, and writes spread out.
// Merges are read-modify-write guarded by a version number, so concurrent
// ingests of the same cluster-day stay exact. The day's metrics are stored as
// one binary attribute (`m`): the cluster-day's cell of the rollup columns
// (shared/fleet/rollup-columns.ts, 736 bytes), not a nested map (nothing
// queries inside it, and ~80 number attributes marshal far slower), and since
// issue 21 not a JSON string either: a refresh copies today's 10,000 cells into
// its columns instead of parsing 10,000 strings, and an item stays within one
// write unit. Items written before hold `m` as that JSON string and are read
// as such (storedDay) until they age out. Every number in either is finite:
// samples are bounded (±1e15), the encoders refuse anything else, and the
// readers drop an entry stored non-finite (null) before the bound existed.
// A write into a closed day (before today, by the writer's clock) is bracketed
// by two bumps of its (day, shard)'s pack counter, the seqlock that tells
// packed rollups (rollup-packs.ts) whether they still hold every write:
//   pk = PACK#<day>#<shard>, sk = COUNTER → writes (odd while one is in flight)
// Writes into today skip it: open days are never packed, so live ingest pays nothing.
// Each merge also keeps the ids of the last WRITE_IDS_KEPT puts (`ws`, see updateDay).
import { randomBytes } from 'node:crypto';
import type { MetricKey, MetricSample } from '../fleet/records.js';
import { decodeCell, encodeCell } from '../fleet/rollup-columns.js';
import { combineRollup, dayOf, mergeSample, parseDayRollup, type DayRollup } from '../fleet/rollup.js';
import { createLogger, type Logger } from '../log.js';
import { isThrottling } from '../aws/json-call.js';
import { batchGet, batchPut, ConditionFailed, conflictBackoff, getItem, mapLimit, putItem, queryAll, Throttled } from './client.js';
import { bumpWriteCounter, PACK_COUNTER_SK } from './packing.js';

export const METRIC_SHARDS = 16;
/** Rollups older than this are dropped by TTL (and samples older are refused). */
export const METRICS_RETENTION_DAYS = 90;
/** Attempts of one merge (a read, then a write conditional on the version read) before its samples are refused. */
export const MAX_MERGE_ATTEMPTS = 8;
/**
 * Write ids an item keeps (`ws`: 8 random bytes each, newest first, one per version). A put whose
 * answer was lost is found again only while its id is among them, i.e. while fewer than this many
 * other merges of the cluster-day landed between it and its writer's next read. Each such merge is a
 * whole other call writing that cluster-day (a call writes each of its cluster-days once); the puller
 * runs one at a time under its lock and a cluster's samples come from its own pipeline, so a few
 * land in the worst window (a 20 s idle timeout, then the retry). 8 ids keep the item within one
 * write unit (≈ 950 bytes); a read that finds the ids no longer reach back is logged (updateDay).
 */
const WRITE_IDS_KEPT = 8;
const WRITE_ID_BYTES = 8;

let logger: Logger | undefined;
const log = () => (logger ??= createLogger('metrics'));

/** FNV-1a: a stable, cheap spread of keys (cluster ids; alerts' fingerprints) over `shards` partitions. */
export function shardOf(key: string, shards = METRIC_SHARDS): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** The partition of a (day, shard)'s rollup items. */
export const rollupPartition = (day: string, shard: number) => `ROLLUP#${day}#${shard}`;
const rollupKey = (clusterId: string, day: string) => ({ pk: rollupPartition(day, shardOf(clusterId)), sk: `CLUSTER#${clusterId}` });

export interface StoredRollup {
  cluster_id: string;
  day: string;
  metrics: DayRollup;
}

export const ttlOf = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) + (METRICS_RETENTION_DAYS + 1) * 86_400;

/** The partition of a (day, shard)'s packed rollups and of its write counter. */
export const packPartition = (day: string, shard: number) => `PACK#${day}#${shard}`;

/** A day before today by this clock: its writes move the pack counter. */
const isClosedDay = (day: string, now = new Date()) => day < now.toISOString().slice(0, 10);

/** One ADD on a (day, shard)'s write counter; the counter ages out with the day's rollups. */
const bumpPackCounter = (day: string, shard: number) => bumpWriteCounter('metrics', { pk: packPartition(day, shard), sk: PACK_COUNTER_SK }, ttlOf(day));

/**
 * Runs `write` inside the seqlock of these (day, shard)s: `open()` (call it
 * right before a put; every caller awaits the same bumps) bumps each closed
 * one's counter to odd, and once `write` is over, succeeded or not, they are
 * bumped back to even. A batch is bracketed once per shard-day it touches,
 * not once per cluster-day. A writer that dies in between leaves a counter
 * odd: that shard-day is then read from its items until a refresh heals the
 * counter, 15 minutes after its last bump (packing.ts healWriteCounter).
 */
async function withPackCounters<T>(partitions: Iterable<{ day: string; shard: number }>, write: (open: () => Promise<void>) => Promise<T>): Promise<T> {
  const unique = new Map<string, { day: string; shard: number }>();
  for (const p of partitions) if (isClosedDay(p.day)) unique.set(`${p.day}#${p.shard}`, p);
  const closed = [...unique.values()];
  let opening: Promise<unknown> | undefined;
  // Concurrent writers of a batch share one promise: none may put before every counter is odd.
  const open = async () => {
    if (closed.length > 0) await (opening ??= mapLimit(closed, 16, (p) => bumpPackCounter(p.day, p.shard)));
  };
  try {
    return await write(open);
  } finally {
    if (opening) await mapLimit(closed, 16, (p) => bumpPackCounter(p.day, p.shard));
  }
}

/** Bulk load of complete day rollups (history backfill, benchmarks): replaces what is stored for those days. */
export async function putRollups(rollups: StoredRollup[]): Promise<void> {
  const items = rollups.map((r) => ({
    ...rollupKey(r.cluster_id, r.day),
    cluster_id: r.cluster_id,
    day: r.day,
    m: encodeCell(r.metrics),
    version: 1,
    ttl: ttlOf(r.day),
  }));
  const chunks: (typeof items)[] = [];
  for (let i = 0; i < items.length; i += 500) chunks.push(items.slice(i, i + 500));
  await withPackCounters(
    rollups.map((r) => ({ day: r.day, shard: shardOf(r.cluster_id) })),
    async (open) => {
      await open();
      await mapLimit(chunks, 8, (chunk) => batchPut('metrics', chunk));
    },
  );
}

/** Per metric, the end of the last pulled window a day holds (`p`; see mergePulledRollups). */
type PulledMarks = Partial<Record<MetricKey, string>>;

/**
 * The guarded read-modify-write of one cluster-day, shared by HTTP ingest and
 * the puller: `change` edits the day's rollups and pulled marks as read and
 * says whether anything changed (nothing is written otherwise); a concurrent
 * write makes it start again from a fresh read. `open` is the batch's
 * seqlock (withPackCounters), awaited before the put.
 */
async function updateDay(
  clusterId: string,
  day: string,
  change: (metrics: DayRollup, pulled: PulledMarks) => boolean,
  open: () => Promise<void>,
): Promise<boolean> {
  const key = rollupKey(clusterId, day);
  // Marks this call's put: when its answer is lost (a reset) and the client's retry then fails the
  // version check, the item read again says whether that put landed, so its samples are not merged
  // twice. Not only the latest id: another writer may land in between (it read our put, and wrote).
  const writeId = randomBytes(WRITE_ID_BYTES);
  let seen: number | undefined;
  for (let attempt = 1; ; attempt++) {
    const current = await getItem('metrics', key, true).catch((error: unknown) => {
      // Throttled before any put of this merge was sent: nothing of it is stored.
      throw seen === undefined && isThrottling(error) ? new Throttled(`the rollup of ${clusterId} on ${day}`) : error;
    });
    const version = Number(current?.version ?? 0);
    const ids = writeIdsOf(current);
    if (seen !== undefined) {
      if (holdsWriteId(ids, writeId)) return true;
      // Our put, had it landed, would be version seen + 1; the ids reach back to version - count + 1.
      if (version - seen > ids.length / WRITE_ID_BYTES)
        log().warn('rollup merge: more writes than kept ids since its put, which may have landed; merged again', {
          cluster_id: clusterId,
          day,
          seen_version: seen,
          version,
        });
    }
    const metrics: DayRollup = current ? storedDay(current.m) : {};
    const pulled: PulledMarks = current?.p ? JSON.parse(String(current.p)) : {};
    if (!change(metrics, pulled)) return false;
    const marks = Object.keys(pulled).length ? { p: JSON.stringify(pulled) } : {};
    const ws = new Uint8Array(Math.min(ids.length + WRITE_ID_BYTES, WRITE_IDS_KEPT * WRITE_ID_BYTES));
    ws.set(writeId);
    ws.set(ids.subarray(0, ws.length - WRITE_ID_BYTES), WRITE_ID_BYTES);
    await open();
    seen = version;
    try {
      await putItem(
        'metrics',
        { ...key, cluster_id: clusterId, day, m: encodeCell(metrics), ...marks, version: version + 1, ws, ttl: ttlOf(day) },
        {
          ConditionExpression: current ? 'version = :seen' : 'attribute_not_exists(pk)',
          ExpressionAttributeValues: current ? { ':seen': version } : undefined,
        },
      );
      return true;
    } catch (error) {
      if (isThrottling(error)) {
        // The client's last error, not its only answer: an earlier attempt may have landed with its answer lost.
        // Asked, as after a lost race; a read that fails too leaves it unknown, and the error stands.
        if (holdsWriteId(writeIdsOf(await getItem('metrics', key, true)), writeId)) return true;
        throw new Throttled(`the rollup of ${clusterId} on ${day}`);
      }
      if (!(error instanceof ConditionFailed)) throw error;
      if (attempt >= MAX_MERGE_ATTEMPTS) {
        // The last put may have landed with its answer lost (the retry then failed against it): ask the item, as
        // the next attempt would, rather than report stored samples unstored and have them sent again.
        if (holdsWriteId(writeIdsOf(await getItem('metrics', key, true)), writeId)) return true;
        throw error;
      }
      await conflictBackoff(attempt);
    }
  }
}

/**
 * The write ids an item keeps, newest first. An item written before them (a single id string, `w`)
 * or by putRollups has none: neither holds an id of a put this code made.
 */
function writeIdsOf(item: Record<string, unknown> | undefined): Uint8Array {
  const ws = item?.ws;
  return ws instanceof Uint8Array && ws.length % WRITE_ID_BYTES === 0 ? ws.subarray(0, WRITE_IDS_KEPT * WRITE_ID_BYTES) : new Uint8Array(0);
}

function holdsWriteId(ids: Uint8Array, id: Uint8Array): boolean {
  for (let at = 0; at < ids.length; at += WRITE_ID_BYTES) if (Buffer.compare(ids.subarray(at, at + WRITE_ID_BYTES), id) === 0) return true;
  return false;
}

const mergeInto = (clusterId: string, day: string, samples: MetricSample[], open: () => Promise<void>) =>
  updateDay(
    clusterId,
    day,
    (metrics) => {
      for (const sample of samples) mergeSample(metrics, sample);
      return true;
    },
    open,
  );

/**
 * Adds samples to their cluster-day rollups: one guarded write per cluster-day. Answers the samples
 * not stored: those of a cluster-day whose write kept losing to concurrent ones (MAX_MERGE_ATTEMPTS,
 * each after a jittered pause), or that DynamoDB kept throttling past the client's retries (and whose
 * put, updateDay made sure, did not land). The others are stored, so a sender resends only these: the
 * whole batch again would count the stored ones twice.
 */
export async function addSamples(samples: MetricSample[]): Promise<MetricSample[]> {
  const groups = new Map<string, { clusterId: string; day: string; samples: MetricSample[] }>();
  for (const sample of samples) {
    const day = dayOf(sample.at);
    const id = `${sample.cluster_id}|${day}`;
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { clusterId: sample.cluster_id, day, samples: [] }));
    group.samples.push(sample);
  }
  const list = [...groups.values()];
  const lost = await withPackCounters(
    list.map((g) => ({ day: g.day, shard: shardOf(g.clusterId) })),
    (open) =>
      mapLimit(list, 16, (g) =>
        mergeInto(g.clusterId, g.day, g.samples, open).then(
          () => [],
          (error: unknown) => {
            // Throttled: updateDay knows nothing of this merge is stored (any other throttling error fails the batch).
            if (!(error instanceof ConditionFailed || error instanceof Throttled)) throw error;
            return g.samples;
          },
        ),
      ),
  );
  return lost.flat();
}

/** A window of pulled points: from its first step to its last (ISO). */
export interface PulledWindow {
  from: string;
  to: string;
}

/** The rollup of one cluster-day's points of a pull, per metric, with the window each came from. */
export interface PulledRollup {
  cluster_id: string;
  day: string;
  metrics: DayRollup;
  windows: Partial<Record<MetricKey, PulledWindow>>;
}

/**
 * Adds pulled rollups into the stored days, exactly once per window: each item
 * remembers, per metric, the end of the last window added (`p`), and a window
 * that does not start after it was added already (a pull retried after a
 * crash replays the same window) and is skipped. Same guarded read-modify-write
 * as addSamples, one write per cluster-day.
 */
export async function mergePulledRollups(rollups: readonly PulledRollup[]): Promise<{ written: number; skipped: number }> {
  const partitions = rollups.map((r) => ({ day: r.day, shard: shardOf(r.cluster_id) }));
  const outcomes = await withPackCounters(partitions, (open) =>
    mapLimit(rollups, 16, async ({ cluster_id: clusterId, day, metrics: parts, windows }) => {
      let skipped = 0;
      const written = await updateDay(
        clusterId,
        day,
        (metrics, pulled) => {
          skipped = 0; // counted afresh when a concurrent write makes it read again
          let added = 0;
          for (const [metric, part] of Object.entries(parts) as [MetricKey, NonNullable<DayRollup[MetricKey]>][]) {
            const window = windows[metric];
            if (!window) throw new Error(`pulled rollup of ${metric} without its window`);
            if (pulled[metric] !== undefined && pulled[metric]! >= window.from) {
              skipped++;
              continue;
            }
            combineRollup(metrics, metric, part);
            pulled[metric] = window.to;
            added++;
          }
          return added > 0;
        },
        open,
      );
      return { written: written ? 1 : 0, skipped };
    }),
  );
  return { written: outcomes.reduce((n, o) => n + o.written, 0), skipped: outcomes.reduce((n, o) => n + o.skipped, 0) };
}

/** A stored `m` as rollups: a cell, or the JSON string of an item written before cells (issue 21). */
export function storedDay(m: unknown): DayRollup {
  return m instanceof Uint8Array ? decodeCell(m) : parseDayRollup(String(m));
}

function toStored(item: Record<string, unknown>): StoredRollup {
  return { cluster_id: String(item.cluster_id), day: String(item.day), metrics: storedDay(item.m) };
}

/** Every cluster's rollups for these days, grouped by cluster id, each oldest first. */
export async function readFleetRollups(days: string[]): Promise<Map<string, StoredRollup[]>> {
  const partitions = days.flatMap((day) => Array.from({ length: METRIC_SHARDS }, (_, shard) => rollupPartition(day, shard)));
  const pages = await mapLimit(partitions, 32, (pk) => queryAll('metrics', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } }));
  const byCluster = new Map<string, StoredRollup[]>();
  for (const item of pages.flat()) {
    const rollup = toStored(item);
    const list = byCluster.get(rollup.cluster_id) ?? [];
    list.push(rollup);
    byCluster.set(rollup.cluster_id, list);
  }
  for (const list of byCluster.values()) list.sort((a, b) => a.day.localeCompare(b.day));
  return byCluster;
}

/** One cluster's rollups for these days, oldest first. */
export async function readClusterRollups(clusterId: string, days: string[]): Promise<StoredRollup[]> {
  const items = await batchGet(
    'metrics',
    days.map((day) => rollupKey(clusterId, day)),
  );
  return items.map(toStored).sort((a, b) => a.day.localeCompare(b.day));
}
