// Score snapshots and the cache generation marker, in the `scores` table.
//   pk = SNAPSHOTS#<kind>,               sk = <generated_at>       → header: count, summary, where its chunks are
//   pk = SNAPSHOT#<kind>#<snapshot_id>,  sk = CHUNK#<nnnn>         → one slice of the snapshot's compressed JSON (binary)
//   pk = CACHE,                          sk = GENERATION           → bumped by every refresh, and in the transaction of
//                                                                    every rule write, approval and general-settings save
// A snapshot of N clusters is one JSON array, brotli-compressed and cut into
// chunks under DynamoDB's 400 KB item limit (the bench's 10,000 clusters: ≈ 0.4 MB,
// 2 chunks per kind), not N items: marshalling N strings was most of a refresh (issue 21 §1).
// The JSON is never held whole: it is serialised a few clusters at a time into two
// reused buffers, which brotli takes in turn (jsonArrayWriter).
// The chunks go under a snapshot id of their own first, then the header: the
// current snapshot of a kind is its newest header (by generated_at, so a slow
// refresh finishing after a newer one never becomes current). Readers read a
// header, then its chunks, which never change once written: a reader sees the
// old snapshot or the new one, never a mix, and chunks of a write that died are
// never read. (A separate current pointer, moved by a transaction with every
// header, was dropped: it said nothing the newest header does not.)
// Snapshots are history (kept SNAPSHOT_RETENTION_DAYS by TTL, chunks too);
// dashboards are computed live and cached, and every container drops its cache
// when the generation changes, so a refresh anywhere invalidates the cache everywhere.
import { randomUUID } from 'node:crypto';
import { ConditionFailed, conditionalWrite, generationMarker, getItem, putItem, queryAll, queryPage, setFields, updateItem } from './client.js';
import { readChunks, writeChunks, type ChunkPlace, type PieceWriter } from './packing.js';

export const SNAPSHOT_KINDS = ['fleet', 'health', 'risk'] as const;
export type SnapshotKind = (typeof SNAPSHOT_KINDS)[number];
export const SNAPSHOT_RETENTION_DAYS = 90;
/**
 * JSON, brotli quality 1 (packing.ts): on the 10,000-cluster snapshots ≈ 380 KB against gzip -1's
 * 710–910 KB; brotli 5 saves another ~25% for 10–40× the compression time.
 */
const ENCODING = 'json+br1';

const generation = generationMarker('scores');
export const currentGeneration = generation.current;
export const bumpGeneration = generation.bump;
/**
 * The generation's move as a transaction action, for a change the fleet view depends on (a rule set, the
 * general settings): written with it, so its acknowledgement means every container's next read recomputes.
 */
export const generationAction = generation.action;

export interface SnapshotHeader {
  generated_at: string;
  count: number;
  summary: Record<string, unknown>;
}

/** A snapshot whose chunks are written: where they are. Not readable until committed. */
export interface SnapshotChunks {
  kind: SnapshotKind;
  generated_at: string;
  count: number;
  /** Unique per write, so two writes of the same `generated_at` never share chunks. */
  snapshot_id: string;
  chunks: number;
  /** Compressed size, all chunks together. */
  bytes: number;
  /** The JSON's size: what decompressing may produce. */
  raw_bytes: number;
  encoding: string;
  ttl: number;
}

const historyKey = (kind: SnapshotKind, generatedAt: string) => ({ pk: `SNAPSHOTS#${kind}`, sk: generatedAt });
const chunksOf = (kind: SnapshotKind, snapshotId: string): ChunkPlace => ({ table: 'scores', pk: `SNAPSHOT#${kind}#${snapshotId}`, prefix: 'CHUNK#' });
const expired = (item: Record<string, unknown>) => typeof item.ttl === 'number' && item.ttl * 1000 < Date.now();

/** Persists a snapshot: its chunks first, then its header. */
export async function putSnapshot(
  kind: SnapshotKind,
  generatedAt: string,
  items: readonly { cluster_id: string }[],
  summary: Record<string, unknown>,
): Promise<void> {
  await commitSnapshot(await writeSnapshotChunks(kind, generatedAt, items), summary);
}

/** The first half of `putSnapshot`: the compressed chunks under a new snapshot id, which no reader finds yet. */
export async function writeSnapshotChunks(kind: SnapshotKind, generatedAt: string, items: readonly unknown[]): Promise<SnapshotChunks> {
  const ttl = Math.floor(Date.parse(generatedAt) / 1000) + SNAPSHOT_RETENTION_DAYS * 86_400;
  const snapshotId = `${generatedAt}#${randomUUID().slice(0, 8)}`;
  const written = await writeChunks(chunksOf(kind, snapshotId), jsonArrayWriter(items), ttl);
  return { kind, generated_at: generatedAt, count: items.length, snapshot_id: snapshotId, ...written, encoding: ENCODING, ttl };
}

/** Items serialised at a time by jsonArrayWriter: ≈ 50 KB of JSON, a string V8 makes in its young generation. */
const ITEMS_AT_ONCE = 32;
/** jsonArrayWriter's pieces: few enough for the compressor to take in few calls. */
const PIECE_BYTES = 1 << 20;

/**
 * `JSON.stringify(items)` as UTF-8, the same bytes, written in pieces of about a MB: a few items
 * serialised at a time, straight into two buffers taken in turn (one is filled while the compressor
 * takes the other). No string or buffer of the whole (16–20 MB for 10,000 clusters), whose
 * allocation, page faults and collection cost a 10,000-cluster refresh more than the serialising.
 */
export function jsonArrayWriter(items: readonly unknown[]): PieceWriter {
  return async (write) => {
    let [piece, spare] = [Buffer.allocUnsafe(PIECE_BYTES), Buffer.allocUnsafe(PIECE_BYTES)];
    let used = 0;
    let taken = Promise.resolve();
    const flush = async () => {
      await taken;
      taken = write(piece.subarray(0, used));
      taken.catch(() => undefined); // awaited at the next flush or the end: a failure is thrown there
      [piece, spare] = [spare, piece];
      used = 0;
    };
    const put = async (json: string) => {
      // At most 3 bytes of UTF-8 per UTF-16 unit: room for that, so a write never cuts a character.
      if (used + 3 * json.length > piece.length) {
        if (used > 0) await flush();
        if (3 * json.length > piece.length) piece = Buffer.allocUnsafe(3 * json.length);
      }
      used += piece.write(json, used);
    };
    await put('[');
    for (let at = 0; at < items.length; at += ITEMS_AT_ONCE) {
      // `[a,b]` without its brackets, after a comma unless first.
      if (at > 0) await put(',');
      await put(JSON.stringify(items.slice(at, at + ITEMS_AT_ONCE)).slice(1, -1));
    }
    await put(']');
    await flush();
    await taken;
  };
}

/** The second half: the header, which makes the snapshot readable (and current, unless a newer one is there). */
export async function commitSnapshot(written: SnapshotChunks, summary: Record<string, unknown>): Promise<void> {
  const { kind, ...header } = written;
  await putItem('scores', { ...historyKey(kind, written.generated_at), ...header, summary });
}

/** The newest complete snapshots of a kind, newest first. */
export async function listSnapshots(kind: SnapshotKind, limit = 20): Promise<SnapshotHeader[]> {
  const page = await queryPage('scores', {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': `SNAPSHOTS#${kind}` },
    ScanIndexForward: false,
    Limit: limit,
  });
  return page.items.map(headerOf);
}

function headerOf(item: Record<string, unknown>): SnapshotHeader {
  // History headers written before chunks have their time only as sk.
  return { generated_at: String(item.generated_at ?? item.sk), count: Number(item.count), summary: item.summary as Record<string, unknown> };
}

/** The items of the complete snapshot of `kind` generated at `generatedAt`; none if there is no such snapshot (or not yet). */
export async function readSnapshot<T>(kind: SnapshotKind, generatedAt: string): Promise<T[]> {
  const header = await getItem('scores', historyKey(kind, generatedAt), true);
  if (!header || expired(header)) return [];
  return itemsOf<T>(kind, generatedAt, header);
}

/** The current snapshot of `kind` (the newest committed), with its items; undefined when there is none. */
export async function readCurrentSnapshot<T>(kind: SnapshotKind): Promise<(SnapshotHeader & { items: T[] }) | undefined> {
  const newest = await queryPage('scores', {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': `SNAPSHOTS#${kind}` },
    ScanIndexForward: false,
    Limit: 1,
    ConsistentRead: true,
  });
  const item = newest.items[0];
  if (!item || expired(item)) return undefined;
  const header = headerOf(item);
  return { ...header, items: await itemsOf<T>(kind, header.generated_at, item) };
}

async function itemsOf<T>(kind: SnapshotKind, generatedAt: string, header: Record<string, unknown>): Promise<T[]> {
  if (header.snapshot_id === undefined) {
    // Written before chunks (one item per cluster): such snapshots age out within SNAPSHOT_RETENTION_DAYS.
    const rows = await queryAll('scores', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `SNAPSHOT#${kind}#${generatedAt}` } });
    return rows.map((i) => JSON.parse(String(i.data)) as T);
  }
  const corrupt = (reason: string) => new Error(`snapshot ${kind} ${generatedAt}: ${reason}`);
  if (header.encoding !== ENCODING) throw corrupt(`unknown encoding ${String(header.encoding)}`);
  const sizes = {
    chunks: Number(header.chunks),
    bytes: Number(header.bytes),
    ...(typeof header.raw_bytes === 'number' ? { raw_bytes: header.raw_bytes } : {}),
  };
  const raw = await readChunks(chunksOf(kind, String(header.snapshot_id)), sizes, corrupt);
  if (!raw) throw corrupt(`chunks are missing (${sizes.chunks} written)`);
  return JSON.parse(raw.toString('utf8')) as T[];
}

// Refresh runs (issue 21 §2): a route starts the recompute worker and follows the run here.
//   pk = REFRESH#<refresh_id>,          sk = RUN                 → status, kinds, the answer's figures when done,
//                                                                  the rule versions it loads at least, the run queued after it
// A run's outcome is final: only a `running` run is started (once), finished or expired, each a conditional write.
// The claim joining concurrent requests of the same kinds is a lease lock (shared/db/locks.ts): shared/scoring/refresh-claim.ts.
export type RefreshStatus = 'running' | 'done' | 'failed';
/** Refresh records are kept a day: long enough to follow any run. */
export const REFRESH_RETENTION_SECONDS = 86_400;

/** What the worker records when a refresh is done: every figure the refresh routes answer. */
export interface RefreshFigures {
  generated_at: string;
  /** Unified scores: clusters scored, Critical and Warning. */
  total_clusters: number;
  critical: number;
  warning: number;
  /** Risk snapshots: total, Critical and Warning. */
  risk_total: number;
  risk_critical: number;
  risk_warning: number;
}

/** The versions of the rule sets a run computes with (0: the shipped default). */
export interface RuleVersions {
  health: number;
  risk: number;
}

export interface RefreshRecord {
  refresh_id: string;
  status: RefreshStatus;
  kinds: SnapshotKind[];
  started_at: string;
  /** The rule versions current when the run was recorded: its worker loads these or newer. Absent on runs recorded before. */
  rules?: RuleVersions;
  /** A run queued after this one (its rules were older than a request's): it starts once this one ends. */
  after?: string;
  /** The run queued after this one, and when it was linked (queueRefreshAfter). */
  next_refresh_id?: string;
  next_at?: string;
  /** When a worker took the run up (startRefreshRun); absent while its event waits in Lambda's queue. */
  worker_started_at?: string;
  finished_at?: string;
  figures?: RefreshFigures;
  error?: string;
}

const refreshKey = (id: string) => ({ pk: `REFRESH#${id}`, sk: 'RUN' });
const ttlIn = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

/** Records run `id`, `running`: with the rule versions current now (`rules`), and the run it waits for (`after`), if any. */
export async function createRefresh(
  id: string,
  kinds: readonly SnapshotKind[],
  { rules, after }: { rules?: RuleVersions; after?: string } = {},
): Promise<void> {
  await putItem('scores', {
    ...refreshKey(id),
    refresh_id: id,
    status: 'running',
    kinds: [...kinds],
    started_at: new Date().toISOString(),
    ...(rules ? { rules } : {}),
    ...(after ? { after } : {}),
    ttl: ttlIn(REFRESH_RETENTION_SECONDS),
  });
}

export async function getRefresh(id: string): Promise<RefreshRecord | undefined> {
  const item = await getItem('scores', refreshKey(id), true);
  if (!item) return undefined;
  return {
    refresh_id: String(item.refresh_id),
    status: item.status as RefreshStatus,
    kinds: item.kinds as SnapshotKind[],
    started_at: String(item.started_at),
    ...(item.rules ? { rules: item.rules as RuleVersions } : {}),
    ...(item.after ? { after: String(item.after) } : {}),
    ...(item.next_refresh_id ? { next_refresh_id: String(item.next_refresh_id), next_at: String(item.next_at) } : {}),
    ...(item.worker_started_at ? { worker_started_at: String(item.worker_started_at) } : {}),
    ...(item.finished_at ? { finished_at: String(item.finished_at) } : {}),
    ...(item.figures ? { figures: item.figures as RefreshFigures } : {}),
    ...(item.error ? { error: String(item.error) } : {}),
  };
}

/**
 * Sets `fields` on run `id` if `condition` holds, in which `#status` and `:running` may be used (and `values`):
 * ConditionFailed otherwise.
 */
async function updateRun(id: string, fields: Record<string, unknown>, condition: string, values: Record<string, unknown> = {}): Promise<void> {
  const set = setFields(fields);
  await updateItem('scores', refreshKey(id), {
    UpdateExpression: set.set,
    ConditionExpression: condition,
    ExpressionAttributeNames: { ...set.names, '#status': 'status' },
    ExpressionAttributeValues: { ...set.values, ':running': 'running', ...values },
    ReturnValues: 'NONE',
  });
}

/**
 * A worker's start of run `id`: whether it is this worker's to compute. Only a run still `running`, taken up
 * by no worker before (an event may be delivered twice) and recorded at most `leaseMs` ago (an event may sit
 * in Lambda's queue past that, when the run already counts as failed) is started. `token`, fresh per start,
 * makes a start whose answer was lost, and whose retry then met it, still this worker's (conditionalWrite).
 */
export async function startRefreshRun(id: string, token: string, leaseMs: number, now = Date.now()): Promise<boolean> {
  const { written } = await conditionalWrite(
    'scores',
    refreshKey(id),
    () =>
      updateRun(
        id,
        { worker_started_at: new Date(now).toISOString(), worker_token: token },
        '#status = :running AND attribute_not_exists(worker_started_at) AND started_at >= :since',
        { ':since': new Date(now - leaseMs).toISOString() },
      ),
    (item) => item.worker_token === token,
  );
  return written;
}

/**
 * Queues run `next` after run `id`: written only while `id` is `running` and has no run queued after it but
 * `replacing` (one that is gone: never recorded, or ended); false otherwise. A write whose answer was lost,
 * and whose retry then met it, is still this one's (conditionalWrite).
 */
export async function queueRefreshAfter(id: string, next: string, replacing?: string, now = new Date()): Promise<boolean> {
  const { written } = await conditionalWrite(
    'scores',
    refreshKey(id),
    () =>
      updateRun(
        id,
        { next_refresh_id: next, next_at: now.toISOString() },
        replacing === undefined ? '#status = :running AND attribute_not_exists(next_refresh_id)' : '#status = :running AND next_refresh_id = :replacing',
        replacing === undefined ? {} : { ':replacing': replacing },
      ),
    (item) => item.next_refresh_id === next,
  );
  return written;
}

/**
 * Records run `id` failed with `error` if it is still `running` past its lease: `leaseMs` after a worker took
 * it up, or after it was recorded while none has. From then that answer is final: no worker starts or finishes
 * the run. A no-op for a run in any other state (finished, or taken up meanwhile); the caller reads it again.
 */
export async function expireRefresh(id: string, error: string, leaseMs: number, now = Date.now()): Promise<void> {
  try {
    await updateRun(
      id,
      { status: 'failed', error, finished_at: new Date(now).toISOString() },
      '#status = :running AND (worker_started_at < :since OR (attribute_not_exists(worker_started_at) AND started_at < :since))',
      { ':since': new Date(now - leaseMs).toISOString() },
    );
  } catch (failed) {
    if (!(failed instanceof ConditionFailed)) throw failed;
  }
}

/**
 * The last word on a run (its worker's, or its route's when the worker could not be started): done with
 * its figures, or failed with a sentence (never a stack). Only a run recorded and still `running` is
 * finished: a record written here from nothing would have no kinds, start or expiry (the follow route
 * could not answer it), and one answered done, failed or expired keeps that answer. False otherwise.
 */
export async function finishRefresh(id: string, outcome: { status: 'done'; figures: RefreshFigures } | { status: 'failed'; error: string }): Promise<boolean> {
  const finishedAt = new Date().toISOString();
  const fields: Record<string, unknown> = { status: outcome.status, finished_at: finishedAt };
  if (outcome.status === 'done') fields.figures = outcome.figures;
  else fields.error = outcome.error;
  const { written } = await conditionalWrite(
    'scores',
    refreshKey(id),
    () => updateRun(id, fields, '#status = :running'),
    // A retry whose first attempt was applied meets this very write.
    (item) => item.status === outcome.status && item.finished_at === finishedAt,
  );
  return written;
}
