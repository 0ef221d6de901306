// Records ingest refused, counted by kind since the service began: one item in the `metrics` table,
//   pk = INGEST#refused, sk = TOTALS → { clusters, metrics, logs, alerts } (numbers; no ttl)
// It only grows, so GET /api/metrics exposes it as a Prometheus counter (fleet_health_ingest_refused_records_total):
// Alertmanager ignores a 200's body, and a refused alert showed only in the ingest group's log.
// Counted by one ADD per request that refused any record, after its answer is settled, and never in its way: a
// count that cannot be written is logged and left. A retried ADD whose first answer was lost counts its records
// twice: the counter says that refusals happen and about how many, not an exact tally.
import { getItem, updateItem } from './client.js';

const KEY = { pk: 'INGEST#refused', sk: 'TOTALS' };

export const INGEST_KINDS = ['clusters', 'metrics', 'logs', 'alerts'] as const;
export type IngestKind = (typeof INGEST_KINDS)[number];

/** Adds `count` refused records of `kind`. */
export async function countRefused(kind: IngestKind, count: number): Promise<void> {
  await updateItem('metrics', KEY, {
    UpdateExpression: 'ADD #kind :count',
    ExpressionAttributeNames: { '#kind': kind },
    ExpressionAttributeValues: { ':count': count },
    ReturnValues: 'NONE',
  });
}

/** The records refused so far, by kind (0 for a kind never refused). */
export async function refusedTotals(): Promise<Record<IngestKind, number>> {
  const item = await getItem('metrics', KEY);
  return Object.fromEntries(INGEST_KINDS.map((kind) => [kind, typeof item?.[kind] === 'number' ? item[kind] : 0])) as Record<IngestKind, number>;
}
