// Ingestion of fleet data (DESIGN §9). Each record is checked on its own: the
// good ones are stored, the bad ones are named with their index and reason,
// nothing is dropped silently. Used by the ingest route group, by direct
// Lambda invocation (CLI) and by the demo-fleet loader alike.
import { createHash } from 'node:crypto';
import { ingestSettings } from '../config/ingest.js';
import { ALERT_RETENTION_DAYS, recordAlerts, type AlertNotice } from '../db/alerts.js';
import { knownClusterIds, upsertClusters } from '../db/clusters.js';
import { countRefused, type IngestKind } from '../db/ingest-refusals.js';
import { LOG_RETENTION_DAYS, putLogs } from '../db/logs.js';
import { addSamples, METRICS_RETENTION_DAYS } from '../db/metrics.js';
import { regroupClusters } from '../issues/regroup.js';
import { renameIssuesOf } from '../issues/renames.js';
import { createLogger, errorFields } from '../log.js';
import { cutText } from '../text.js';
import { namedSeverity } from './severity.js';
import type { AlertIngestResult } from '../routes/ingest.js';
import { HttpLink } from '../routes/common.js';
import * as z from '../zod.js';
import { AlertmanagerAlert, ClusterId, ClusterInput, clusterIdOf, fitAlertText, LogEventInput, MetricSample, reasonOf, type IngestResult } from './records.js';

export type { AlertIngestResult };

/** Clock skew tolerated for timestamps from the future. */
const FUTURE_SLACK_MS = 5 * 60_000;

interface Checked<T> {
  valid: { index: number; record: T }[];
  rejected: IngestResult['rejected'];
}

function check<T>(
  records: readonly unknown[],
  parse: (r: unknown) => { success: true; data: T } | { success: false; error: import('../zod.js').core.$ZodError },
): Checked<T> {
  const out: Checked<T> = { valid: [], rejected: [] };
  records.forEach((record, index) => {
    const parsed = parse(record);
    if (parsed.success) out.valid.push({ index, record: parsed.data });
    else out.rejected.push({ index, reason: reasonOf(parsed.error) });
  });
  return out;
}

/** Distinct reasons named in one warn line, most frequent first. */
const LOGGED_REASONS = 10;

/** The longest text of a sender's that a log line quotes (an alert's name, a group key). */
const LOGGED_TEXT_MAX = 256;

/** The text among `fields` as a log line quotes a sender's: strings only, each cut short. */
const loggedText = (fields: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.entries(fields).flatMap(([name, value]) => (typeof value === 'string' ? [[name, cutText(value, LOGGED_TEXT_MAX)]] : [])));

/**
 * What names a record in the log, from what was sent (any shape): its cluster, metric, alert name and
 * fingerprint, where it has them as text, each cut short. "unknown cluster: 1" alone told no one which alert was lost.
 */
function identityOf(record: unknown, clusterLabelName: string): Record<string, string> {
  if (!record || typeof record !== 'object') return {};
  const r = record as Record<string, unknown>;
  const labels = r.labels && typeof r.labels === 'object' ? (r.labels as Record<string, unknown>) : {};
  return loggedText({ cluster: r.cluster_id ?? labels[clusterLabelName], metric_key: r.metric_key, alertname: labels.alertname, fingerprint: r.fingerprint });
}

/** Where a notification came from (Alertmanager's receiver and group key), for the log lines about it. */
export interface NotificationSource {
  receiver?: string;
  groupKey?: string;
}

/**
 * The answer; and, when records were refused, ONE warn line for the request with the counts per reason
 * (unknown cluster ids folded into one reason) and the first refused records named (identityOf), and their number
 * added to the refusal counter GET /api/metrics exposes. Alertmanager ignores a 200's body, so the log and the
 * counter are where a drop shows.
 */
async function finish(kind: IngestKind, checked: Checked<unknown>, records: readonly unknown[], source: NotificationSource = {}): Promise<IngestResult> {
  const rejected = checked.rejected.sort((a, b) => a.index - b.index);
  if (rejected.length > 0) {
    // Never in the answer's way: the records stored are stored, and the refused ones are named in the log below.
    await countRefused(kind, rejected.length).catch((error: unknown) =>
      createLogger('ingest').warn('refused records not counted', { kind, rejected: rejected.length, ...errorFields(error) }),
    );
    const counts = new Map<string, number>();
    for (const r of rejected) {
      const reason = r.reason.replace(/unknown cluster \S+/, 'unknown cluster');
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
    const reasons = Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).slice(0, LOGGED_REASONS));
    const label = kind === 'alerts' ? clusterLabel() : 'cluster_id';
    const refused = rejected
      .slice(0, LOGGED_REASONS)
      .map((r) => ({ index: r.index, reason: cutText(r.reason, LOGGED_TEXT_MAX), ...identityOf(records[r.index], label) }));
    createLogger('ingest').warn('ingest refused records', {
      kind,
      ...loggedText({ ...source }),
      accepted: checked.valid.length,
      rejected: rejected.length,
      reasons,
      refused,
    });
  }
  return { accepted: checked.valid.length, rejected };
}

/** Drops records whose timestamp is outside [now - retentionDays, now + slack]: every stored time is a bounded, real instant. */
function withinRetention<T>(
  checked: Checked<T>,
  at: (r: T) => string,
  retentionDays: number,
  now: Date,
  field = 'at',
  tooOld = `older than the ${retentionDays}-day retention`,
): void {
  const oldest = now.getTime() - retentionDays * 86_400_000;
  const newest = now.getTime() + FUTURE_SLACK_MS;
  checked.valid = checked.valid.filter(({ index, record }) => {
    const t = Date.parse(at(record));
    if (!Number.isFinite(t)) checked.rejected.push({ index, reason: `${field}: not a time` });
    else if (t < oldest) checked.rejected.push({ index, reason: `${field}: ${tooOld}` });
    else if (t > newest) checked.rejected.push({ index, reason: `${field}: in the future` });
    else return true;
    return false;
  });
}

/** Drops records about clusters that are not in the inventory. */
async function knownClustersOnly<T>(checked: Checked<T>, clusterOf: (r: T) => string): Promise<void> {
  const known = await knownClusterIds(checked.valid.map((v) => clusterOf(v.record)));
  checked.valid = checked.valid.filter(({ index, record }) => {
    if (known.has(clusterOf(record))) return true;
    checked.rejected.push({ index, reason: `cluster_id: unknown cluster ${clusterOf(record)}` });
    return false;
  });
}

export async function ingestClusters(records: readonly unknown[], now = new Date()): Promise<IngestResult> {
  const checked = check(records, (r) => ClusterInput.safeParse(r));
  const seen = new Set<string>();
  checked.valid = checked.valid.filter(({ index, record }) => {
    if (!seen.has(record.cluster_id)) return seen.add(record.cluster_id);
    checked.rejected.push({ index, reason: `cluster_id: ${record.cluster_id} appears earlier in this batch` });
    return false;
  });
  const { renamed } = await upsertClusters(
    checked.valid.map((v) => v.record),
    now,
  );
  await renameIssuesOf(renamed);
  return finish('clusters', checked, records);
}

/** Time-stamped records about clusters: validated, inside the retention, about known clusters, then stored. */
async function ingestTimed<T extends { cluster_id: string; at: string }>(
  kind: IngestKind,
  records: readonly unknown[],
  parse: Parameters<typeof check<T>>[1],
  retentionDays: number,
  /** Stores the records; answers those it could not store (refused by index, to be sent again). */
  store: (valid: T[]) => Promise<readonly T[]>,
  now: Date,
): Promise<IngestResult> {
  const checked = check(records, parse);
  withinRetention(checked, (r) => r.at, retentionDays, now);
  await knownClustersOnly(checked, (r) => r.cluster_id);
  const unstored = new Set(await store(checked.valid.map((v) => v.record)));
  if (unstored.size > 0) {
    checked.valid = checked.valid.filter(({ index, record }) => {
      if (!unstored.has(record)) return true;
      checked.rejected.push({
        index,
        reason:
          'not stored: concurrent writes to its cluster-day kept winning, or the database was over its capacity; send this record again (the others are stored)',
      });
      return false;
    });
  }
  return finish(kind, checked, records);
}

export const ingestMetrics = (records: readonly unknown[], now = new Date()): Promise<IngestResult> =>
  ingestTimed('metrics', records, (r) => MetricSample.safeParse(r), METRICS_RETENTION_DAYS, addSamples, now);

export const ingestLogs = (records: readonly unknown[], now = new Date()): Promise<IngestResult> =>
  ingestTimed(
    'logs',
    records,
    (r) => LogEventInput.safeParse(r),
    LOG_RETENTION_DAYS,
    async (events) => {
      await putLogs(events);
      return [];
    },
    now,
  );

/** The label that names an alert's cluster (ALERT_CLUSTER_LABEL, default cluster_id). */
export const clusterLabel = () => ingestSettings().ALERT_CLUSTER_LABEL;

/** Alertmanager's own fingerprint when sent; otherwise a hash of the sorted labels, as Alertmanager computes identity. */
function fingerprintOf(alert: AlertmanagerAlert): string {
  if (alert.fingerprint) return alert.fingerprint;
  const labels = Object.entries(alert.labels).sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify(labels)).digest('hex').slice(0, 16);
}

/** An alert's stored severity: Critical or Warning as its label names them (severity.ts), else the label capitalised, else Warning; spaces around it ignored either way. */
export function severityOf(label: string | undefined): string {
  const s = (label ?? '').trim().toLowerCase();
  return namedSeverity(s) ?? (s ? s[0]!.toUpperCase() + s.slice(1) : 'Warning');
}

/**
 * The alert's dashboard link (its dashboard_url annotation, else generatorURL) when it is an absolute
 * http(s) URL, else '': the timeline renders it as a link, so a `javascript:` one would run on a click.
 * The alert itself is kept; only the link is dropped.
 */
const dashboardLink = z.lazy(HttpLink);
const clusterIdShape = z.lazy(ClusterId);
function dashboardUrl(alert: AlertmanagerAlert): string {
  const link = dashboardLink.safeParse(alert.annotations.dashboard_url ?? alert.generatorURL);
  return link.success ? link.data : '';
}

/** Go's zero time, which Alertmanager writes as `endsAt` for no end: as an instant, so any spelling of it is one. */
const NEVER_MS = Date.parse('0001-01-01T00:00:00Z');

/**
 * Whether a resolved alert carries no usable end: no endsAt (the zero time, spelled any way: `.000Z` and `+00:00`
 * were taken as a real end, clamped to the start, so the alert lasted 0 s), or one after its receipt (a sender's clock ahead).
 */
function endsUnknown(a: AlertmanagerAlert, now: Date): boolean {
  const ends = Date.parse(a.endsAt);
  return !Number.isFinite(ends) || ends <= NEVER_MS || ends > now.getTime();
}

/** When a resolved alert with a usable end stopped: its endsAt, not before its startsAt. */
const endedAt = (a: AlertmanagerAlert, startsAt: string): string => new Date(Math.max(Date.parse(a.endsAt), Date.parse(startsAt))).toISOString();

/** How far back a firing alert's start may lie (ten years): past the retention, which counts from its last notice. */
const ALERT_START_MAX_AGE_DAYS = 3_653;

/** The latest instant a notice says the alert was active: its receipt while it fires (or its end is unknown), else its end. */
const lastHeard = (a: AlertmanagerAlert, now: Date): string =>
  a.status !== 'resolved' || endsUnknown(a, now) ? now.toISOString() : endedAt(a, new Date(a.startsAt).toISOString());

/** What shows nothing: spaces, control and format characters (zero-width space, soft hyphen, direction marks and overrides). */
const INVISIBLE = /[\p{Z}\p{Cc}\p{Cf}]/gu;
/**
 * Bidirectional embeddings, overrides and isolates: kept in a name, one reverses or reorders every name and time
 * written after it where names are joined (an AI issue's title and summary). Direction marks (U+200E/F), which
 * right-to-left names need for their punctuation, and the other format characters stay.
 */
const DIRECTION_OVERRIDES = /[\u202A-\u202E\u2066-\u2069]/g;
/** An alert's name as stored and shown; its labels keep what was sent. */
const shownAlertName = (name: string) => name.replace(DIRECTION_OVERRIDES, '');

/** An Alertmanager webhook body's alerts stored (ingestAlerts); one cut short by the webhook's `max_alerts` never delivers the rest, so the log says so. */
export function ingestNotification(
  body: { alerts: readonly unknown[]; truncatedAlerts?: number } & { [field: string]: unknown },
  now = new Date(),
): Promise<AlertIngestResult> {
  const source = { receiver: body.receiver, groupKey: body.groupKey } as NotificationSource;
  if (body.truncatedAlerts) {
    createLogger('ingest').warn('Alertmanager left alerts out of this notification (webhook max_alerts)', {
      ...loggedText({ ...source }),
      truncated: body.truncatedAlerts,
      sent: body.alerts.length,
    });
  }
  return ingestAlerts(body.alerts, now, source);
}

/**
 * Stores an Alertmanager notification's alerts. The latest notification of an
 * occurrence (fingerprint + startsAt) wins, by receipt time `now`, and within
 * one payload by position: a firing after a resolved reopens the alert, a
 * redelivery changes nothing and is counted as a duplicate (shared/fleet/README.md).
 */
export async function ingestAlerts(alerts: readonly unknown[], now = new Date(), source: NotificationSource = {}): Promise<AlertIngestResult> {
  const label = clusterLabel();
  // Text over its bounds is cut to fit, not refused (fitAlertText): Alertmanager would never send the alert again.
  const checked = check(alerts, (r) => AlertmanagerAlert.safeParse(fitAlertText(r)));
  checked.valid = checked.valid.filter(({ index, record }) => {
    if (!record.labels[label]) checked.rejected.push({ index, reason: `labels.${label}: missing (the label that names the cluster)` });
    // Not "unknown cluster": no inventory record can have it (POST /api/ingest/clusters refuses it), so the fix is the label's.
    else if (!clusterIdShape.safeParse(record.labels[label]).success)
      checked.rejected.push({ index, reason: `labels.${label}: not a cluster id (a UUID, as the inventory names clusters)` });
    else if (!record.labels.alertname) checked.rejected.push({ index, reason: 'labels.alertname: missing' });
    // It names the alert and its issues in every list: blank (spaces, zero-width characters), a link no one can see.
    else if (!record.labels.alertname.replace(INVISIBLE, '')) checked.rejected.push({ index, reason: 'labels.alertname: blank' });
    else return true;
    return false;
  });
  // Retention counts from what was last heard of an alert, not from its start: one firing (or just resolved) after
  // 400 days is news, and refusing it left its stored item to expire while it fired, and its issue to resolve.
  // A start is still bounded: one more than ten years back is a sender's zero time (Go's 0001-01-01), not an alert, and
  // taken it would make its issue's duration and the KPIs' averages centuries long.
  withinRetention(checked, (a) => a.startsAt, ALERT_START_MAX_AGE_DAYS, now, 'startsAt', 'more than ten years ago: not an alert start');
  withinRetention(checked, (a) => lastHeard(a, now), ALERT_RETENTION_DAYS, now, 'endsAt');
  // The label's value names the cluster as its id does anywhere: in any case (records.ts clusterIdOf).
  await knownClustersOnly(checked, (a) => clusterIdOf(a.labels[label]!));

  const notices: AlertNotice[] = checked.valid.map(({ record: a }) => {
    const startsAt = new Date(a.startsAt).toISOString();
    const resolved = a.status === 'resolved';
    // A resolution without a usable end ends at its receipt, and says so (a resend of it is then a duplicate).
    const receiptEnd = resolved && endsUnknown(a, now);
    return {
      alert_id: `${fingerprintOf(a)}-${Math.floor(Date.parse(a.startsAt) / 1000)}`,
      cluster_id: clusterIdOf(a.labels[label]!),
      alert_name: shownAlertName(a.labels.alertname!),
      severity: severityOf(a.labels.severity),
      status: resolved ? 'Resolved' : 'Firing',
      starts_at: startsAt,
      ends_at: !resolved ? null : receiptEnd ? now.toISOString() : endedAt(a, startsAt),
      ...(receiptEnd ? { ends_at_received: true } : {}),
      fingerprint: fingerprintOf(a),
      labels: a.labels,
      annotations: a.annotations,
      summary: a.annotations.summary ?? shownAlertName(a.labels.alertname!),
      detail: a.annotations.description ?? '',
      dashboard_url: dashboardUrl(a),
    };
  });
  const outcomes = await recordAlerts(notices, now);
  // Grouping runs right away for every cluster the notification names, so issues are current on the
  // next read. Its duplicates' clusters too: a redelivery may be the retry of one whose alerts were
  // written but whose grouping never ran (it failed half-way), and nothing else would group them.
  // A redelivery changing nothing writes nothing (regrouping is idempotent).
  // A pass reads a cluster's alerts back 30 days (and to its open issues' starts): an alert first
  // delivered already firing for longer (Alertmanager just connected) is read from its own start.
  const readFrom = new Map<string, number>();
  for (const n of notices) {
    const start = Date.parse(n.starts_at);
    if (n.status === 'Firing' && start < (readFrom.get(n.cluster_id) ?? Infinity)) readFrom.set(n.cluster_id, start);
  }
  const grouped = await regroupClusters(
    notices.map((n) => n.cluster_id),
    now,
    readFrom,
  );
  return {
    ...(await finish('alerts', checked, alerts, source)),
    duplicates: outcomes.filter((o) => o === 'duplicate').length,
    issues: { created: grouped.created, updated: grouped.updated },
  };
}
