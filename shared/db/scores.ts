// Score snapshots and the cache generation marker, in the `scores` table.
//   pk = SNAPSHOTS#<kind>,              sk = <generated_at>      → header: count, summary
//   pk = SNAPSHOT#<kind>#<generated_at>, sk = CLUSTER#<id>        → one cluster's result (JSON)
//   pk = CACHE,                          sk = GENERATION          → bumped by every refresh
// Snapshots are history (kept SNAPSHOT_RETENTION_DAYS by TTL); dashboards are
// computed live and cached, and every container drops its cache when the
// generation changes, so a refresh anywhere invalidates the cache everywhere.
import { batchPut, ConditionFailed, deleteItem, getItem, mapLimit, putItem, queryAll, queryPage, updateItem } from './client.js';

export type SnapshotKind = 'fleet' | 'health' | 'risk';
export const SNAPSHOT_RETENTION_DAYS = 90;
const GENERATION_KEY = { pk: 'CACHE', sk: 'GENERATION' };

export async function currentGeneration(): Promise<number> {
  return Number((await getItem('scores', GENERATION_KEY, true))?.generation ?? 0);
}

export async function bumpGeneration(): Promise<number> {
  const out = await updateItem('scores', GENERATION_KEY, { UpdateExpression: 'ADD generation :one', ExpressionAttributeValues: { ':one': 1 } });
  return Number(out?.generation);
}

export async function putSnapshot(kind: SnapshotKind, generatedAt: string, items: { cluster_id: string }[], summary: Record<string, unknown>): Promise<void> {
  const ttl = Math.floor(Date.parse(generatedAt) / 1000) + SNAPSHOT_RETENTION_DAYS * 86_400;
  const rows = items.map((item) => ({ pk: `SNAPSHOT#${kind}#${generatedAt}`, sk: `CLUSTER#${item.cluster_id}`, data: JSON.stringify(item), ttl }));
  const chunks: (typeof rows)[] = [];
  for (let i = 0; i < rows.length; i += 500) chunks.push(rows.slice(i, i + 500));
  await mapLimit(chunks, 8, (chunk) => batchPut('scores', chunk));
  // The header last: a snapshot with a header is complete.
  await putItem('scores', { pk: `SNAPSHOTS#${kind}`, sk: generatedAt, count: items.length, summary, ttl });
}

export interface SnapshotHeader {
  generated_at: string;
  count: number;
  summary: Record<string, unknown>;
}

/** The newest complete snapshots of a kind, newest first. */
export async function listSnapshots(kind: SnapshotKind, limit = 20): Promise<SnapshotHeader[]> {
  const page = await queryPage('scores', {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': `SNAPSHOTS#${kind}` },
    ScanIndexForward: false,
    Limit: limit,
  });
  return page.items.map((i) => ({ generated_at: String(i.sk), count: Number(i.count), summary: i.summary as Record<string, unknown> }));
}

export async function readSnapshot<T>(kind: SnapshotKind, generatedAt: string): Promise<T[]> {
  const items = await queryAll('scores', { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `SNAPSHOT#${kind}#${generatedAt}` } });
  return items.map((i) => JSON.parse(String(i.data)) as T);
}

// Refresh runs (issue 21 §2): a route starts the recompute worker and follows the run here.
//   pk = REFRESH#<refresh_id>,          sk = RUN                 → status, kinds, the answer's figures when done
//   pk = REFRESH#CURRENT,               sk = <kinds, sorted>     → the running refresh of those kinds (joined by later requests)
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

export interface RefreshRecord {
  refresh_id: string;
  status: RefreshStatus;
  kinds: SnapshotKind[];
  started_at: string;
  finished_at?: string;
  figures?: RefreshFigures;
  error?: string;
}

const refreshKey = (id: string) => ({ pk: `REFRESH#${id}`, sk: 'RUN' });
const currentKey = (kinds: readonly SnapshotKind[]) => ({ pk: 'REFRESH#CURRENT', sk: [...kinds].sort().join(',') });
const ttlIn = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

export async function createRefresh(id: string, kinds: readonly SnapshotKind[]): Promise<void> {
  await putItem('scores', {
    ...refreshKey(id),
    refresh_id: id,
    status: 'running',
    kinds: [...kinds],
    started_at: new Date().toISOString(),
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
    ...(item.finished_at ? { finished_at: String(item.finished_at) } : {}),
    ...(item.figures ? { figures: item.figures as RefreshFigures } : {}),
    ...(item.error ? { error: String(item.error) } : {}),
  };
}

/** The worker's last word on a run: done with its figures, or failed with a sentence (never a stack). */
export async function finishRefresh(id: string, outcome: { status: 'done'; figures: RefreshFigures } | { status: 'failed'; error: string }): Promise<void> {
  const fields: Record<string, unknown> = { status: outcome.status, finished_at: new Date().toISOString() };
  if (outcome.status === 'done') fields.figures = outcome.figures;
  else fields.error = outcome.error;
  const names = Object.keys(fields);
  await updateItem('scores', refreshKey(id), {
    UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')}`,
    ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
    ExpressionAttributeValues: Object.fromEntries(names.map((n) => [`:${n}`, fields[n]])),
  });
}

/**
 * Claims "the running refresh of these kinds" for `id` until `leaseMs` from now.
 * Answers the id of the refresh already running (and holding the claim) instead, if any.
 */
export async function claimCurrentRefresh(id: string, kinds: readonly SnapshotKind[], leaseMs: number): Promise<string | undefined> {
  const now = Date.now();
  const item = { ...currentKey(kinds), refresh_id: id, expires_at: now + leaseMs, ttl: ttlIn(Math.ceil(leaseMs / 1000) + 60) };
  try {
    await putItem('scores', item, {
      ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now',
      ExpressionAttributeValues: { ':now': now },
    });
    return undefined;
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
  }
  const holder = await getItem('scores', currentKey(kinds), true);
  const running = holder && (await getRefresh(String(holder.refresh_id)));
  if (running?.status === 'running') return running.refresh_id;
  // Its run has finished but the claim was not let go yet: take it over.
  await putItem('scores', item);
  return undefined;
}

/** Lets go of the claim, if `id` still holds it. */
export async function releaseCurrentRefresh(id: string, kinds: readonly SnapshotKind[]): Promise<void> {
  try {
    await deleteItem('scores', currentKey(kinds), { ConditionExpression: 'refresh_id = :id', ExpressionAttributeValues: { ':id': id } });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
  }
}
