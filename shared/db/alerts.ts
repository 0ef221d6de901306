// Alerts repository. One item per alert occurrence, identified as Alertmanager
// identifies it: fingerprint + startsAt. Stored under the cluster (its history
// is one Query) and indexed by when it started (fleet windows). Each item
// also keeps `notified_at`, the receipt time (epoch ms) of the notification it
// reflects, so a late delivery never overwrites a later one (recordAlerts).
//   pk = CLUSTER#<cluster_id>, sk = ALERT#<starts_at>#<fingerprint>
//   gsi1pk = ALERTS#<shard of the fingerprint>, gsi1sk = <starts_at>#<fingerprint>
// (ALERTS#<day> for items written before the shards: still read, see queryFleetAlerts).
// gsi3 is the same index (the same keys) copying only an alert's facts (ALERT_FACTS_INDEX): what the views read.
// While an alert fires it is also in a sparse index of what still fires, so an
// alert firing for longer than a view's window still counts in it:
//   gsi2pk = FIRING#<shard of the fingerprint>, gsi2sk = <starts_at>#<fingerprint>
import {
  batchGet,
  ConditionFailed,
  mapLimit,
  projection,
  putItem,
  queryAll,
  queryCount,
  queryPage,
  tableName,
  transactWrite,
  updateItem,
  WriteConflict,
  type Item,
  type Key,
} from './client.js';
import { AwsError } from '../aws/json-call.js';
import { itemReader, mapOf, nullable, oneOf, pickFields, string, type Fields } from './items.js';
import { windowDays } from './days.js';
import { shardOf } from './metrics.js';
import { ALERT_FACTS_INDEX } from './tables.js';

const ALERT_STATUSES = ['Firing', 'Resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

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

/**
 * The views read alerts 14 days back at least (CRITICAL_ALERT_DAYS), the chat's snapshot 30: an alert
 * that started within that is read by its start. One firing longer is read from the firing index while
 * it has been heard firing within the window (queryStillFiring), so a repeat of it (Alertmanager's
 * `repeat_interval`, 4 h by default), which changes nothing and is otherwise not written, is written
 * again once a day once the alert is a week old: `notified_at` then says it still fires, and an alert
 * stored before the index joins it. Younger alerts' repeats write nothing (a 3,000-alert group would
 * be 3,000 conditional puts). An alert whose resolution never arrived stops counting once a window has
 * passed without a repeat; a firing one stays in while its group's renewals (FIRING_RENEWALS_PER_CALL a
 * repeat) fit the window.
 */
export const FIRING_RENEWAL_MS = 86_400_000;
/** How old a firing alert is before its repeats renew it (FIRING_RENEWAL_MS). */
export const FIRING_RENEWAL_AGE_MS = 7 * 86_400_000;
/**
 * At most this many renewals per notification, the longest unheard first: a group's alerts, first written
 * together, fall due together, and 3,000 conditional puts at once is the per-alert cost ingest avoids. The
 * rest wait for the group's next repeat (a 3,000-alert group is renewed over 15 repeats, 60 h at 4 h).
 */
export const FIRING_RENEWALS_PER_CALL = 200;
/**
 * The partitions of the start index (gsi1) and of the firing index (gsi2): a storm of thousands of alerts
 * is spread over them, not written to one. A partition takes 1,000 write units a second, and an alert item
 * (labels, annotations, texts) is one to several units in every index that copies it: one partition per
 * day capped the whole fleet's alert writes near 500 a second, and a throttled index throttles the table.
 */
export const ALERT_SHARDS = 8;
const shardOfAlert = (fingerprint: string) => shardOf(fingerprint, ALERT_SHARDS);
/** Every shard's number, for the reads that fan out over them. */
const EVERY_SHARD = Array.from({ length: ALERT_SHARDS }, (_, shard) => shard);

const alertKey = (clusterId: string, startsAt: string, fingerprint: string) => ({
  pk: `CLUSTER#${clusterId}`,
  sk: `ALERT#${startsAt}#${fingerprint}`,
});

export type UpsertOutcome = 'new' | 'updated' | 'duplicate';

/** An item to put, and the notices (their indexes in the call) whose outcome follows it. */
type Write = { item: Key & Record<string, unknown>; indexes: number[] };

/**
 * One notification of an alert occurrence, as ingest derives it from the webhook. `ends_at_received`: a resolution
 * that carried no usable endsAt, whose `ends_at` is the receipt time (not stored).
 */
export type AlertNotice = Omit<AlertRecord, 'received_at' | 'updated_at'> & { ends_at_received?: boolean };

/** How an alert is stored: the record, the stamp of the notification it reflects, and whether the firing index holds it. */
type StoredAlert = AlertRecord & { notified_at?: number; indexed: boolean };

const CONTENT_FIELDS = ['alert_id', 'alert_name', 'severity', 'status', 'ends_at', 'summary', 'detail', 'dashboard_url'] as const;
/** A map's entries in key order: DynamoDB does not keep a map's order. */
const canonical = (map: Record<string, string>) => JSON.stringify(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const sameContent = (a: AlertNotice, b: AlertNotice) =>
  CONTENT_FIELDS.every((f) => a[f] === b[f]) && canonical(a.labels) === canonical(b.labels) && canonical(a.annotations) === canonical(b.annotations);

/**
 * Applies one notice to what is known of its occurrence: the latest notification
 * wins (a firing after a resolved reopens it), except that a resolution older
 * than the one stored (an earlier endsAt) is a late redelivery and changes nothing.
 * A copy of a resolution received after a firing that reopened it resolves it again:
 * the same notices come of a late firing copy followed by its resolution (an HA peer's),
 * and an alert wrongly resolved is reopened by its next repeat, where one wrongly kept
 * firing would never hear of it again.
 */
function apply(state: AlertNotice | undefined, received: AlertNotice): { next: AlertNotice; outcome: UpsertOutcome } {
  if (!state) return { next: received, outcome: 'new' };
  // A notice with no annotations at all (a resolution a relay or a script made from the labels) says nothing of the
  // text: the stored summary, description and dashboard link stay, rather than become the alert's name and no link.
  const notice: AlertNotice =
    Object.keys(received.annotations).length === 0
      ? { ...received, annotations: state.annotations, summary: state.summary, detail: state.detail, dashboard_url: state.dashboard_url }
      : received;
  if (notice.status !== state.status) return { next: notice, outcome: 'updated' };
  // A resolution resent without an endsAt of its own says nothing new: taking each receipt as a later end would
  // count every resend as an update and keep moving the end (and its issue's quiet period) forward.
  if (notice.status === 'Resolved' && notice.ends_at_received) return { next: state, outcome: 'duplicate' };
  if (notice.status === 'Resolved' && (notice.ends_at ?? '') !== (state.ends_at ?? '')) {
    return (notice.ends_at ?? '') > (state.ends_at ?? '') ? { next: notice, outcome: 'updated' } : { next: state, outcome: 'duplicate' };
  }
  return { next: notice, outcome: 'duplicate' }; // a redelivery; its annotations may be fresher
}

const occurrenceOf = (a: { cluster_id: string; starts_at: string; fingerprint: string }) => `${a.cluster_id}|${a.starts_at}|${a.fingerprint}`;

function chunked<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Records notifications (in notification order) received at `now`, and answers
 * each one's outcome. The latest notification of an occurrence wins: each item
 * keeps the receipt time of the notification it reflects (`notified_at`, epoch
 * ms) and no write replaces a later one. Notices of one occurrence in the same
 * call are applied in order. Round trips per call, not per alert:
 *  - one consistent BatchGet per 100 occurrences reads what is stored;
 *  - occurrences seen for the first time are written in transactions of up to
 *    100 puts (putFresh), each under the condition below: a BatchWrite takes none;
 *  - stored ones whose state or text changed get a put conditioned on
 *    `notified_at` not being later than this notification's (a loss means a
 *    later notification is stored: this one is late, and counts as a duplicate);
 *  - redeliveries that change nothing are not written at all.
 */
export async function recordAlerts(notices: readonly AlertNotice[], now = new Date()): Promise<UpsertOutcome[]> {
  const stamp = now.getTime();
  const occurrences = new Map<string, number[]>();
  notices.forEach((n, i) => {
    const key = occurrenceOf(n);
    const list = occurrences.get(key);
    if (list) list.push(i);
    else occurrences.set(key, [i]);
  });
  const firsts = [...occurrences.values()].map((indexes) => notices[indexes[0]!]!);
  const read = await mapLimit(chunked(firsts, 100), 4, (chunk) =>
    batchGet(
      'alerts',
      chunk.map((n) => alertKey(n.cluster_id, n.starts_at, n.fingerprint)),
      true,
    ),
  );
  const stored = new Map<string, StoredAlert>();
  for (const item of read.flat()) {
    const record: StoredAlert = {
      ...readAlert(item),
      notified_at: typeof item.notified_at === 'number' ? item.notified_at : undefined,
      indexed: typeof item.gsi2pk === 'string',
    };
    stored.set(occurrenceOf(record), record);
  }

  const outcomes = new Array<UpsertOutcome>(notices.length);
  const fresh: Write[] = [];
  const changed: Write[] = [];
  const renewals: (Write & { heard: number })[] = [];
  for (const [key, indexes] of occurrences) {
    const before = stored.get(key);
    if (before?.notified_at !== undefined && before.notified_at > stamp) {
      for (const i of indexes) outcomes[i] = 'duplicate'; // a later notification is already stored
      continue;
    }
    let state: AlertNotice | undefined = before ? withoutBookkeeping(before) : undefined;
    for (const i of indexes) {
      const { next, outcome } = apply(state, notices[i]!);
      outcomes[i] = outcome;
      state = next;
    }
    const same = before !== undefined && sameContent(before, state!);
    if (same) {
      // A renewal changes nothing of the record: its updated_at stays.
      if (firingRenewal(before, stamp))
        renewals.push({ item: toItem(state!, before.received_at, stamp, before.updated_at), indexes, heard: before.notified_at ?? 0 });
      continue;
    }
    const item = toItem(state!, before?.received_at ?? now.toISOString(), stamp, now.toISOString());
    (before ? changed : fresh).push({ item, indexes });
  }
  changed.push(...renewals.sort((a, b) => a.heard - b.heard).slice(0, FIRING_RENEWALS_PER_CALL));

  await mapLimit(transactionsOf(fresh), 4, (chunk) => putFresh(chunk, stamp, outcomes));
  await mapLimit(changed, 16, (write) => putUnlessLater(write, stamp, outcomes));
  return outcomes;
}

/** A write of a notification stamped `:stamp` holds only where no later notification of its occurrence is stored. */
const NOT_LATER = 'attribute_not_exists(notified_at) OR notified_at <= :stamp';
/**
 * A first sighting's: nor one of the same millisecond, which another delivery wrote first (its firing, or a copy).
 * A transaction can afford the strict test: a resend of one whose answer was lost carries its token, and DynamoDB
 * answers it as the first, conditions unread; a lone put resent so would lose to itself (NOT_LATER).
 */
const NOT_SAME_OR_LATER = 'attribute_not_exists(notified_at) OR notified_at < :stamp';

/** A transaction's limits: 100 actions and 4 MB of items; an item is sized by its JSON's bytes, more than DynamoDB counts for it. */
const TRANSACTION_ACTIONS = 100;
const TRANSACTION_JSON_BYTES = 3_000_000;

function transactionsOf<T extends { item: Record<string, unknown> }>(writes: readonly T[]): T[][] {
  const out: T[][] = [];
  let bytes = 0;
  for (const write of writes) {
    const size = Buffer.byteLength(JSON.stringify(write.item)); // UTF-8, as DynamoDB counts (an annotation in CJK is 3 bytes a character)
    const last = out.at(-1);
    if (last && last.length < TRANSACTION_ACTIONS && bytes + size <= TRANSACTION_JSON_BYTES) {
      last.push(write);
      bytes += size;
    } else {
      out.push([write]);
      bytes = size;
    }
  }
  return out;
}

/**
 * Occurrences this call saw first, written under NOT_SAME_OR_LATER. Two deliveries of a new occurrence a few
 * milliseconds apart (its firing and its resolution) both read nothing stored; written without a condition, the
 * older one written last stayed, and the alert fired on. A put that loses counts as a duplicate (a later
 * notification is stored), and the rest of its transaction is written again without it.
 */
async function putFresh(writes: Write[], stamp: number, outcomes: UpsertOutcome[]) {
  let pending = writes;
  while (pending.length > 0) {
    const actions = pending.map(({ item }) => ({
      Put: { TableName: tableName('alerts'), Item: item, ConditionExpression: NOT_SAME_OR_LATER, ExpressionAttributeValues: { ':stamp': stamp } },
    }));
    try {
      await transactWrite(actions);
      return;
    } catch (error) {
      // Still meeting another transaction after transactWrite's retries (an HA pair delivering the group at once): one
      // by one, as changed alerts are. A 409 would lose the group: Alertmanager does not resend on a 4xx.
      if (error instanceof WriteConflict) return void (await mapLimit(pending, 16, (write) => putUnlessLater(write, stamp, outcomes)));
      if (!(error instanceof ConditionFailed) || error.failed.length === 0) throw error;
      const lost = new Set(error.failed);
      for (const i of lost) for (const n of pending[i]!.indexes) outcomes[n] = 'duplicate';
      pending = pending.filter((_, i) => !lost.has(i));
    }
  }
}

/** One put under NOT_LATER: one that loses (a later notification stored meanwhile) counts as a duplicate. */
async function putUnlessLater({ item, indexes }: Write, stamp: number, outcomes: UpsertOutcome[]) {
  try {
    await putItem('alerts', item, { ConditionExpression: NOT_LATER, ExpressionAttributeValues: { ':stamp': stamp } });
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    for (const i of indexes) outcomes[i] = 'duplicate'; // a later notification was stored meanwhile
  }
}

/** One notification of one alert (tests, tools): recordAlerts of a single notice. */
export async function upsertAlert(alert: AlertNotice, now = new Date()): Promise<UpsertOutcome> {
  return (await recordAlerts([alert], now))[0]!;
}

/**
 * A firing alert a week old, repeated unchanged, is written again when its last write is FIRING_RENEWAL_MS
 * old, or when the firing index lacks it (stored before the index).
 */
const firingRenewal = (stored: StoredAlert, stamp: number): boolean =>
  stored.status === 'Firing' &&
  Date.parse(stored.starts_at) <= stamp - FIRING_RENEWAL_AGE_MS &&
  (!stored.indexed || stored.notified_at === undefined || stamp - stored.notified_at >= FIRING_RENEWAL_MS);

function withoutBookkeeping(r: StoredAlert): AlertNotice {
  const { received_at: _r, updated_at: _u, notified_at: _n, indexed: _i, ...notice } = r;
  return notice;
}

function toItem(alert: AlertNotice, receivedAt: string, stamp: number, updatedAt: string): Key & Record<string, unknown> {
  const { ends_at_received: _received, ...stored } = alert;
  const { cluster_id, starts_at, fingerprint } = stored;
  return {
    ...alertKey(cluster_id, starts_at, fingerprint),
    ...stored,
    received_at: receivedAt,
    updated_at: updatedAt,
    notified_at: stamp,
    gsi1pk: `ALERTS#${shardOfAlert(fingerprint)}`,
    gsi1sk: `${starts_at}#${fingerprint}`,
    // A put replaces the item whole: a resolution leaves the firing index.
    ...(stored.status === 'Firing' && { gsi2pk: `FIRING#${shardOfAlert(fingerprint)}`, gsi2sk: `${starts_at}#${fingerprint}` }),
    // Kept ALERT_RETENTION_DAYS after it was last heard: its end, or while it fires this notification (renewals,
    // daily once it is a week old, move it on). From its start, one firing 400 days was deleted while it fired.
    ttl: Math.floor((stored.ends_at === null ? stamp : Date.parse(stored.ends_at)) / 1000) + ALERT_RETENTION_DAYS * 86_400,
  };
}

/** The record of an item (its keys, ttl and notified_at left behind). */
const alertFields: Fields<AlertRecord> = {
  alert_id: string,
  cluster_id: string,
  alert_name: string,
  severity: string,
  status: oneOf(ALERT_STATUSES),
  starts_at: string,
  ends_at: nullable(string),
  fingerprint: string,
  labels: mapOf(string),
  annotations: mapOf(string),
  summary: string,
  detail: string,
  dashboard_url: string,
  received_at: string,
  updated_at: string,
};
const readAlert = itemReader(alertFields);

/** The query of one cluster's alerts that started at or after `since` (and up to `until`); a consistent read. */
const clusterAlertsQuery = (clusterId: string, since: Date, until?: Date) => ({
  KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
  ExpressionAttributeValues: {
    ':pk': `CLUSTER#${clusterId}`,
    ':from': `ALERT#${since.toISOString()}`,
    ':to': until ? `ALERT#${until.toISOString()}#~` : 'ALERT#~',
  },
  ConsistentRead: true,
});

/** One cluster's alerts that started at or after `since` (and up to `until`), oldest first; a consistent read. */
export async function listClusterAlerts(clusterId: string, since: Date, until?: Date): Promise<AlertRecord[]> {
  return (await queryAll('alerts', clusterAlertsQuery(clusterId, since, until))).map(readAlert);
}

/** listClusterAlerts with `fields` only (alerts carry annotations of up to 64 KB): for reads that only compare or count. */
export async function listClusterAlertFields<K extends keyof AlertRecord>(
  clusterId: string,
  since: Date,
  fields: readonly K[],
): Promise<Pick<AlertRecord, K>[]> {
  const items = await queryAll('alerts', { ...clusterAlertsQuery(clusterId, since), ...projection(fields) });
  return items.map(itemReader(pickFields(alertFields, fields)));
}

/** What picking a cluster's alerts reads of each (newestClusterAlerts): its key, and what its group is told by. */
const PICK_FIELDS = ['starts_at', 'fingerprint', 'cluster_id', 'alert_name', 'labels'] as const;
export type AlertPickFacts = Pick<AlertRecord, (typeof PICK_FIELDS)[number]>;
const readPickFacts = itemReader(pickFields(alertFields, PICK_FIELDS));

/**
 * How many pages of a cluster's alerts picking reads at most (each up to 1,000 alerts, and up to 1 MB of
 * whole items, which DynamoDB reads and charges before it projects): a long issue on a noisy cluster spans
 * months of other groups' alerts (one kept open by an alert whose resolution never came, say). 20 pages
 * are at most 20 MB of consistent reads, a few seconds within the route's 29. Past them, the newest found
 * are answered, and the answer's count (`alerts_total`) says more exist.
 */
export const NEWEST_PAGES_MAX = 20;

/**
 * The newest `max` alerts of a cluster that started in [since, until] and that `keep` keeps, newest
 * first: picked from the newest a page at a time by their keys and labels (at most `pages` pages),
 * then only those read whole (an alert's annotations run to 64 KB; a noisy cluster's span holds
 * thousands of other groups' alerts). What an issue's detail, its evidence and a ticket show of them.
 */
export async function newestClusterAlerts(
  clusterId: string,
  since: Date,
  until: Date | undefined,
  max: number,
  keep: (alert: AlertPickFacts) => boolean = () => true,
  pages = NEWEST_PAGES_MAX,
): Promise<AlertRecord[]> {
  const kept: string[] = [];
  let read = 0;
  let start: Record<string, unknown> | undefined;
  do {
    // The first page sized for `max`; once `keep` has passed over most of it, whole pages.
    const limit = read ? 1_000 : Math.min(1_000, max * 2);
    const page = await queryPage(
      'alerts',
      { ...clusterAlertsQuery(clusterId, since, until), ...projection(PICK_FIELDS), ScanIndexForward: false, Limit: limit },
      start,
    );
    read++;
    for (const item of page.items) {
      const alert = readPickFacts(item);
      if (keep(alert)) kept.push(`${alert.starts_at}#${alert.fingerprint}`);
      if (kept.length >= max) return getClusterAlerts(clusterId, kept);
    }
    start = page.next;
  } while (start && read < pages);
  return getClusterAlerts(clusterId, kept);
}

/** How many alerts of a cluster started at or after `since`: DynamoDB counts them and sends no alert back. */
export function countClusterAlerts(clusterId: string, since: Date): Promise<number> {
  return queryCount('alerts', clusterAlertsQuery(clusterId, since));
}

/** A cluster's alerts by their keys (`<starts_at>#<fingerprint>`, as AI issues link them), newest first; ones gone (retention) are left out. */
export async function getClusterAlerts(clusterId: string, keys: readonly string[]): Promise<AlertRecord[]> {
  const items = await batchGet<{ sk: string }>(
    'alerts',
    keys.map((k) => ({ pk: `CLUSTER#${clusterId}`, sk: `ALERT#${k}` })),
    true, // consistent, as the queries that name them
  );
  return items.sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0)).map(readAlert);
}

/**
 * Where the start index holds alerts of `days`: its shards, and the day partitions the code before
 * the shards wrote (`ALERTS#<day>`). Those are read for every day of every window, whenever that code
 * wrote them (before this release, or after a rollback to it and a deployment again): an item leaves
 * its day partition only when rewritten (a resolution, a renewal) or expired (ALERT_RETENTION_DAYS).
 * An empty one costs one small query (half a read unit).
 */
const startIndexPartitions = (days: readonly string[]) => [...EVERY_SHARD.map((shard) => `ALERTS#${shard}`), ...days.map((day) => `ALERTS#${day}`)];

/** The order of the base table's sort key, `ALERT#<starts_at>#<fingerprint>`: by start. */
const byStart = (a: Item, b: Item) => (String(a.sk) < String(b.sk) ? -1 : 1);

/**
 * The start index's twin that copies only the facts (ALERT_FACTS_INDEX) is not there to read: being built
 * (a deployment that adds it fills it from the table first) or not made (a rollback, a DATA_DIR from before).
 */
const factsIndexMissing = (error: unknown) =>
  error instanceof AwsError && error.name === 'ValidationException' && /specified index|backfilling/i.test(error.message);

/** The fleet's alerts that started at or after `since` (up to the end of `now`'s day), oldest first, as stored or only `fields`. */
async function queryFleetAlerts(since: Date, now: Date, fields?: readonly string[]): Promise<Item[]> {
  const from = since.toISOString();
  const days = windowDays(Math.ceil((now.getTime() - since.getTime()) / 86_400_000) + 1, now).filter((d) => d >= from.slice(0, 10));
  // Facts only: from the index that copies no more, billed by their size rather than the whole alert's.
  const factsOnly = fields?.every((field) => (ALERT_FACTS_INDEX.include as readonly string[]).includes(field)) ?? false;
  const query = (partition: string, index: string) =>
    queryAll('alerts', {
      IndexName: index,
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
      ...(fields && projection(fields)),
      ExpressionAttributeValues: { ':pk': partition, ':from': from, ':to': `${now.toISOString().slice(0, 10)}~` },
    });
  const pages = await mapLimit(startIndexPartitions(days), 16, (partition) =>
    factsOnly
      ? query(partition, ALERT_FACTS_INDEX.name).catch((error: unknown) => {
          if (!factsIndexMissing(error)) throw error;
          return query(partition, 'gsi1');
        })
      : query(partition, 'gsi1'),
  );
  // Each partition holds its alerts in start order: merged.
  return pages.flat().sort(byStart);
}

/**
 * The fleet's alerts that started before `since` and still fire: in the firing index, and heard
 * firing at or after `since` (a repeat renews that: FIRING_RENEWAL_MS). One whose resolution was lost
 * (Alertmanager gave up delivering it) is heard of no more, and so leaves a window as one that
 * started in it would. Oldest first, as stored or only `fields`.
 */
async function queryStillFiring(since: Date, fields?: readonly string[], clusterId?: string): Promise<Item[]> {
  const pages = await mapLimit(EVERY_SHARD, ALERT_SHARDS, (shard) =>
    queryAll('alerts', {
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :from',
      FilterExpression: clusterId === undefined ? 'notified_at >= :heard' : 'notified_at >= :heard AND cluster_id = :cluster',
      ...(fields && projection(fields)),
      ExpressionAttributeValues: {
        ':pk': `FIRING#${shard}`,
        ':from': since.toISOString(),
        ':heard': since.getTime(),
        ...(clusterId !== undefined && { ':cluster': clusterId }),
      },
    }),
  );
  return pages.flat().sort(byStart);
}

/**
 * One cluster's alerts that started before `since` and still fire (heard firing at or after it), oldest first:
 * what a window of the cluster's alerts holds besides those that started in it, as the fleet's views count
 * them (queryAlertsFiredSince). Read from the firing index (the fleet's still-firing alerts, a cluster's
 * picked by a filter), not the cluster's history before `since`, which runs to 400 days.
 */
export async function clusterAlertsStillFiring(clusterId: string, since: Date): Promise<AlertRecord[]> {
  return (await queryStillFiring(since, undefined, clusterId)).map(readAlert);
}

/**
 * How long a firing alert goes unheard before it leaves the firing index: longer than the longest window
 * that reads the index (the chat's snapshot, 30 days), so no window still counting it loses it.
 */
export const FIRING_UNHEARD_MS = 35 * 86_400_000;
/** Retired at most this many a pass (one conditional update each); the rest at the next. */
export const FIRING_RETIRED_PER_PASS = 1_000;

/**
 * Takes firing alerts heard of no more for FIRING_UNHEARD_MS out of the firing index (their resolution
 * never arrived: Alertmanager gave up delivering it, or cut it off by `max_alerts`). No window counts
 * them, but every read of the index read them again until their item expired (ALERT_RETENTION_DAYS).
 * Each is a conditional update on the `notified_at` read: an alert heard meanwhile keeps its place, and
 * one heard later rejoins at its next renewal (recordAlerts). Answers how many left.
 */
export async function retireUnheardFiring(now = new Date(), max = FIRING_RETIRED_PER_PASS): Promise<number> {
  const cutoff = now.getTime() - FIRING_UNHEARD_MS;
  const unheard = await mapLimit(EVERY_SHARD, ALERT_SHARDS, (shard) =>
    queryAll(
      'alerts',
      {
        IndexName: 'gsi2',
        // Heard last before the cutoff, so started before it too.
        KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :before',
        FilterExpression: 'notified_at < :cutoff',
        ...projection(['notified_at']),
        ExpressionAttributeValues: { ':pk': `FIRING#${shard}`, ':before': new Date(cutoff).toISOString(), ':cutoff': cutoff },
      },
      max, // a backlog of thousands (a storm's lost resolutions) is read a pass's worth at a time
    ),
  );
  const retired = await mapLimit(unheard.flat().slice(0, max), 16, async (item) => {
    try {
      await updateItem(
        'alerts',
        { pk: String(item.pk), sk: String(item.sk) },
        {
          UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
          ConditionExpression: 'notified_at = :heard',
          ExpressionAttributeValues: { ':heard': item.notified_at },
          ReturnValues: 'NONE',
        },
      );
      return 1;
    } catch (error) {
      if (error instanceof ConditionFailed) return 0; // heard meanwhile
      throw error;
    }
  });
  return retired.reduce((n: number, r) => n + r, 0);
}

/** The alerts of [since, now]: those that started in it, after those that started before and still fire. */
async function queryAlertsFiredSince(since: Date, now: Date, fields?: readonly string[]): Promise<Item[]> {
  const [before, within] = await Promise.all([queryStillFiring(since, fields), queryFleetAlerts(since, now, fields)]);
  return before.length ? [...before, ...within] : within;
}

/** Every alert of the fleet that started in [since, now], or before it and still fires (heard firing in it). Oldest first. */
export async function listAlertsSince(since: Date, now = new Date()): Promise<AlertRecord[]> {
  return (await queryAlertsFiredSince(since, now)).map(readAlert);
}

/**
 * What the fleet's views read of an alert: counts by start and status, groups by name. An alert
 * stored whole carries its labels, annotations and texts (up to 64 KB); the views read every
 * alert of 14 days or more on every refresh and every container's first view.
 */
const FACT_FIELDS = ALERT_FACTS_INDEX.include;
export type AlertFacts = Pick<AlertRecord, (typeof FACT_FIELDS)[number]>;
const readFacts = itemReader(pickFields(alertFields, FACT_FIELDS));

/** listAlertsSince, each alert's facts only. */
export async function listAlertFactsSince(since: Date, now = new Date()): Promise<AlertFacts[]> {
  return (await queryAlertsFiredSince(since, now, FACT_FIELDS)).map(readFacts);
}

/** The clusters with an alert that started at or after `since` (up to `now`): what the grouping passes start from. */
export async function listAlertingClustersSince(since: Date, now = new Date()): Promise<string[]> {
  return [...new Set((await queryFleetAlerts(since, now, ['cluster_id'])).map((item) => String(item.cluster_id)))];
}
