// Alerts repository. One item per alert occurrence, identified as Alertmanager
// identifies it: fingerprint + startsAt. Stored under the cluster (its history
// is one Query) and indexed by the UTC day it started (fleet windows).
//   pk = CLUSTER#<cluster_id>, sk = ALERT#<starts_at>#<fingerprint>
//   gsi1pk = ALERTS#<day>, gsi1sk = <starts_at>#<fingerprint>
import { ConditionFailed, mapLimit, queryAll, updateItem } from './client.js';
import { windowDays } from './metrics.js';

export type AlertStatus = 'Firing' | 'Resolved';

export interface AlertRecord {
  alert_id: string;
  cluster_id: string;
  alert_name: string;
  severity: string;
  status: AlertStatus;
  starts_at: string;
  ends_at: string | null;
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  summary: string;
  detail: string;
  dashboard_url: string;
  received_at: string;
  updated_at: string;
}

export const ALERT_RETENTION_DAYS = 400;

const alertKey = (clusterId: string, startsAt: string, fingerprint: string) => ({
  pk: `CLUSTER#${clusterId}`,
  sk: `ALERT#${startsAt}#${fingerprint}`,
});

export type UpsertOutcome = 'new' | 'updated' | 'duplicate';

/**
 * Records one notification of an alert. A firing notification creates the alert
 * or refreshes a firing one; it never reopens a resolved one (late redelivery).
 * A resolved notification closes it (or records it resolved if it was never seen firing).
 */
export async function upsertAlert(alert: Omit<AlertRecord, 'received_at' | 'updated_at'>, now = new Date()): Promise<UpsertOutcome> {
  const { cluster_id, starts_at, fingerprint } = alert;
  const fields: Record<string, unknown> = { ...alert, updated_at: now.toISOString() };
  const names = Object.keys(fields);
  const day = starts_at.slice(0, 10);
  try {
    const out = await updateItem('alerts', alertKey(cluster_id, starts_at, fingerprint), {
      UpdateExpression:
        `SET ${names.map((_, i) => `#f${i} = :v${i}`).join(', ')}, received_at = if_not_exists(received_at, :now), ` +
        'gsi1pk = :gpk, gsi1sk = :gsk, #ttl = :ttl',
      ConditionExpression: alert.status === 'Firing' ? 'attribute_not_exists(pk) OR #status = :firing' : undefined,
      ExpressionAttributeNames: { ...Object.fromEntries(names.map((n, i) => [`#f${i}`, n])), '#ttl': 'ttl', ...(alert.status === 'Firing' ? { '#status': 'status' } : {}) },
      ExpressionAttributeValues: {
        ...Object.fromEntries(names.map((n, i) => [`:v${i}`, fields[n]])),
        ':now': now.toISOString(),
        ':gpk': `ALERTS#${day}`,
        ':gsk': `${starts_at}#${fingerprint}`,
        ':ttl': Math.floor(Date.parse(starts_at) / 1000) + ALERT_RETENTION_DAYS * 86_400,
        ...(alert.status === 'Firing' ? { ':firing': 'Firing' } : {}),
      },
      ReturnValues: 'UPDATED_OLD',
    });
    if (!out) return 'new';
    return out.status === alert.status && alert.status === 'Firing' ? 'duplicate' : 'updated';
  } catch (error) {
    if (error instanceof ConditionFailed) return 'duplicate'; // firing after resolved: keep it resolved
    throw error;
  }
}

function toRecord(item: Record<string, unknown>): AlertRecord {
  const { pk: _pk, sk: _sk, gsi1pk: _g, gsi1sk: _s, ttl: _t, ...rest } = item;
  return rest as unknown as AlertRecord;
}

/** One cluster's alerts that started at or after `since` (and up to `until`), oldest first; a consistent read. */
export async function listClusterAlerts(clusterId: string, since: Date, until?: Date): Promise<AlertRecord[]> {
  const items = await queryAll('alerts', {
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': `CLUSTER#${clusterId}`, ':from': `ALERT#${since.toISOString()}`, ':to': until ? `ALERT#${until.toISOString()}#~` : 'ALERT#~' },
    ConsistentRead: true,
  });
  return items.map(toRecord);
}

/** Every alert of the fleet that started at or after `since` (up to `now`), oldest first. */
export async function listAlertsSince(since: Date, now = new Date()): Promise<AlertRecord[]> {
  const days = windowDays(Math.ceil((now.getTime() - since.getTime()) / 86_400_000) + 1, now).filter((d) => d >= since.toISOString().slice(0, 10));
  const pages = await mapLimit(days, 8, (day) =>
    queryAll('alerts', {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk >= :from',
      ExpressionAttributeValues: { ':pk': `ALERTS#${day}`, ':from': since.toISOString() },
    }),
  );
  return pages.flat().map(toRecord);
}
