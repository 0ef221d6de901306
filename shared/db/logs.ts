// Log events repository: per cluster, time ordered, kept LOG_RETENTION_DAYS by
// TTL. An event's key includes a hash of its content, so a resent batch does
// not duplicate events.
//   pk = CLUSTER#<cluster_id>, sk = LOG#<at>#<content hash>
import { createHash } from 'node:crypto';
import type { LogEventInput } from '../fleet/records.js';
import { batchPut, queryAll } from './client.js';

export const LOG_RETENTION_DAYS = 7;

export interface LogRecord {
  cluster_id: string;
  at: string;
  level: string;
  message: string;
  source: string;
}

export async function putLogs(events: LogEventInput[]): Promise<void> {
  const items = new Map<string, { pk: string; sk: string } & Record<string, unknown>>();
  for (const e of events) {
    const at = new Date(e.at).toISOString();
    const hash = createHash('sha1').update(`${e.level}\u0000${e.source}\u0000${e.message}`).digest('hex').slice(0, 16);
    const sk = `LOG#${at}#${hash}`;
    // identical events in one batch collapse into one item (BatchWrite refuses duplicate keys)
    items.set(`${e.cluster_id}|${sk}`, {
      pk: `CLUSTER#${e.cluster_id}`,
      sk,
      cluster_id: e.cluster_id,
      at,
      level: e.level,
      message: e.message,
      source: e.source,
      ttl: Math.floor(Date.parse(at) / 1000) + LOG_RETENTION_DAYS * 86_400,
    });
  }
  await batchPut('logs', [...items.values()]);
}

/** One cluster's log events at or after `since`, oldest first, at most `limit`. */
export async function listClusterLogs(clusterId: string, since: Date, limit = 5000, newestFirst = false, level?: string): Promise<LogRecord[]> {
  const items = await queryAll(
    'logs',
    {
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      // One level: filtered by DynamoDB before `limit` counts, so a flood of other levels cannot crowd its events out.
      ...(level ? { FilterExpression: '#level = :level', ExpressionAttributeNames: { '#level': 'level' } } : {}),
      ExpressionAttributeValues: {
        ':pk': `CLUSTER#${clusterId}`,
        ':from': `LOG#${since.toISOString()}`,
        ':to': 'LOG#~',
        ...(level ? { ':level': level } : {}),
      },
      ScanIndexForward: !newestFirst,
    },
    limit,
  );
  return items.map(({ cluster_id, at, level, message, source }) => ({ cluster_id, at, level, message, source }) as LogRecord);
}
