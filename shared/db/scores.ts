// Score snapshots and the cache generation marker, in the `scores` table.
//   pk = SNAPSHOTS#<kind>,              sk = <generated_at>      → header: count, summary
//   pk = SNAPSHOT#<kind>#<generated_at>, sk = CLUSTER#<id>        → one cluster's result (JSON)
//   pk = CACHE,                          sk = GENERATION          → bumped by every refresh
// Snapshots are history (kept SNAPSHOT_RETENTION_DAYS by TTL); dashboards are
// computed live and cached, and every container drops its cache when the
// generation changes, so a refresh anywhere invalidates the cache everywhere.
import { batchPut, getItem, mapLimit, putItem, queryAll, queryPage, updateItem } from './client.js';

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
