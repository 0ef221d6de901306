// Reading issues (spec §4 Issues): the filtered, paged list with its filter
// options, KPIs, one issue with its alert timeline, the cluster's history and
// the evidence. Every list read goes through the activity index for the
// window (one Query), never a table scan, and the list and KPIs through this
// container's cache of it (list-cache.ts): one marker read when nothing changed.
import type { AlertRecord } from '../db/alerts.js';
import { clusterAlertsStillFiring, countClusterAlerts, newestClusterAlerts } from '../db/alerts.js';
import { getCluster, type ClusterRecord } from '../db/clusters.js';
import { getIssue, getIssues, listClusterIssueSummaries, liveSuccessor, type IssueRecord, type IssueSummary } from '../db/issues.js';
import { windowDays } from '../db/days.js';
import { readClusterRollups } from '../db/metrics.js';
import { listUsers } from '../db/users.js';
import type { Principal } from '../auth/principal.js';
import { LABEL_VALUE_MAX, METRIC_KEYS, type MetricKey } from '../fleet/records.js';
import { meanWithin } from '../fleet/rollup.js';
import { NotFound } from '../http/errors.js';
import { escapedBytes } from '../http/lambda-payload.js';
import { HttpLink, type IssueListQuery, type IssueSortKey } from '../routes/common.js';
import { byName, round2 } from '../scoring/inputs.js';
import { cutText, displayTime } from '../text.js';
import * as z from '../zod.js';
import { activeUsernames, assigneeMatch, type AssigneeMatch } from './assignee.js';
import { groupKeyOf, keysOfGroupKey } from './grouping.js';
import { issueWindow, type IssueWindow } from './list-cache.js';
import { withTriageEtag } from './triage-etag.js';
import type { IssueView } from './schemas.js';

export const SOURCE = 'live' as const; // spec §1: data computed from live data
const DAY_MS = 86_400_000;

/** The list window: `days` back from now; 0 means since midnight UTC today (0.25: the last six hours). */
export function windowStart(days: number, now: Date): Date {
  if (days === 0) return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return new Date(now.getTime() - days * DAY_MS);
}

/** Minutes from the first alert to resolution, or to now while Ongoing. */
export function durationMinutes(issue: Pick<IssueSummary, 'first_seen' | 'resolved_at' | 'status'>, now: Date): number {
  const end = issue.status === 'Resolved' && issue.resolved_at ? Date.parse(issue.resolved_at) : now.getTime();
  return Math.max(0, Math.round((end - Date.parse(issue.first_seen)) / 60_000));
}

/** An issue as the API shows it (DESIGN §7), internal bookkeeping left out. */
export function issueView(issue: IssueRecord, now: Date): IssueView {
  return {
    issue_id: issue.issue_id,
    issue_name: issue.issue_name,
    severity: issue.severity,
    status: issue.status,
    cluster_id: issue.cluster_id,
    cluster_name: issue.cluster_name,
    customer_name: issue.customer_name,
    alert_count: issue.alert_count,
    alert_names: issue.alert_names,
    first_seen: issue.first_seen,
    last_seen: issue.last_seen,
    resolved_at: issue.resolved_at,
    duration_minutes: durationMinutes(issue, now),
    triage_status: issue.triage_status,
    disposition_status: issue.disposition_status,
    assignee: issue.assignee,
    notes: issue.notes,
    ticket_key: issue.ticket_key,
    ticket_url: issue.ticket_url,
    ...(issue.ticket_unconfirmed_at && !issue.ticket_key ? { ticket_unconfirmed_at: issue.ticket_unconfirmed_at } : {}),
    updated_at: issue.updated_at,
    updated_by: issue.updated_by,
  };
}

/** What lists filter and sort on: rule issues and AI issues alike. */
export type Listable = Pick<
  IssueSummary,
  | 'issue_id'
  | 'issue_name'
  | 'cluster_id'
  | 'cluster_name'
  | 'customer_name'
  | 'severity'
  | 'status'
  | 'triage_status'
  | 'disposition_status'
  | 'assignee'
  | 'last_seen'
  | 'first_seen'
  | 'resolved_at'
  | 'alert_count'
>;

/** Newest activity first: latest alert, then id. */
export const newestFirst = (a: Listable, b: Listable) => (a.last_seen > b.last_seen ? -1 : a.last_seen < b.last_seen ? 1 : byName(a.issue_id, b.issue_id));

/** Whether `issue` is in the list `q` asks for; `assigned`: q.assignee as resolved for the caller (assigneeMatch). */
export function matches(issue: Listable, q: IssueListQuery, assigned?: AssigneeMatch): boolean {
  if (q.search) {
    const needle = q.search.toLowerCase();
    if (![issue.issue_name, issue.cluster_name, issue.customer_name].some((s) => s.toLowerCase().includes(needle))) return false;
  }
  if (q.severities.length && !q.severities.includes(issue.severity)) return false;
  if (q.status && issue.status !== q.status) return false;
  if (q.customer && issue.customer_name !== q.customer) return false;
  if (q.cluster && issue.cluster_name !== q.cluster) return false;
  if (q.cluster_id && issue.cluster_id !== q.cluster_id) return false;
  if (!sameText(issue.triage_status, q.triage)) return false;
  if (!sameText(issue.disposition_status, q.disposition)) return false;
  if (assigned && !assigned(issue.assignee)) return false;
  return true;
}

/**
 * A triage or disposition filter: free text that different people typed, so matched whole but trimmed and in any case
 * (`investigating` finds `Investigating`; an exact match answered "no issue matches" and hid them). Blank matches all.
 */
function sameText(stored: string, wanted: string): boolean {
  const w = wanted.trim().toLowerCase();
  return !w || stored.trim().toLowerCase() === w;
}

/** Higher ranks last in ascending order: Critical after Warning, Ongoing after Resolved. */
const SEVERITY_RANK: Record<string, number> = { Warning: 1, Critical: 2 };
const STATUS_RANK: Record<string, number> = { Resolved: 1, Ongoing: 2 };

/**
 * The order `sort` asks for (IssueListQuery's, beyond the contract), ties newest activity first: a total order,
 * so pages never overlap or skip. Undefined for the default, newest activity first, which the window is in already.
 */
function issueOrder(sort: IssueListQuery['sort'], now: Date): ((a: Listable, b: Listable) => number) | undefined {
  if (sort === '-last_seen') return undefined;
  const desc = sort.startsWith('-');
  const key = (desc ? sort.slice(1) : sort) as IssueSortKey;
  const value = (i: Listable): string | number => {
    if (key === 'severity') return SEVERITY_RANK[i.severity] ?? 0;
    if (key === 'status') return STATUS_RANK[i.status] ?? 0;
    if (key === 'duration_minutes') return durationMinutes(i, now);
    return i[key];
  };
  return (a, b) => {
    const [x, y] = [value(a), value(b)];
    const by = typeof x === 'number' && typeof y === 'number' ? x - y : byName(String(x), String(y));
    return (desc ? -by : by) || newestFirst(a, b);
  };
}

export const distinct = (values: string[]) => [...new Set(values.filter(Boolean))].sort(byName);

/** What every list of a window starts from: the window newest first, and its filter options. */
interface Ordered<S> {
  sorted: S[];
  customers: string[];
  clusters: string[];
}

/** Once per window read: a list cache hands the same summaries to every read of a window it holds. */
const ordered = new WeakMap<readonly object[], Ordered<object>>();

/** The window newest first with its filter options (rule and AI issues alike), derived once per window read. */
export function orderedWindow<S extends Listable>(inWindow: readonly S[]): Ordered<S> {
  let done = ordered.get(inWindow) as Ordered<S> | undefined;
  if (!done) {
    done = {
      sorted: [...inWindow].sort(newestFirst),
      // Filter options: what the window holds, whatever the other filters say.
      customers: distinct(inWindow.map((i) => i.customer_name)),
      clusters: distinct(inWindow.map((i) => i.cluster_name)),
    };
    ordered.set(inWindow, done);
  }
  return done;
}

/** The page of rule issues `q` asks for; `principal`: whose issues `assignee=me` lists. */
export async function listIssues(principal: Pick<Principal, 'username'>, q: IssueListQuery, now = new Date()) {
  const [window, assigned] = await Promise.all([issueWindow(q.days, windowStart(q.days, now)), assigneeMatch(q.assignee, principal)]);
  return { ...(await listPage(window, q, (i) => issueView(i, now), { assigned, now })), source: SOURCE };
}

/**
 * The page `q` asks for of a window's matching issues (rule and AI issues alike) in its order, with the list's counts
 * and filter options; `assigned`: q.assignee resolved for the caller (assigneeMatch); `now`: the durations' end.
 */
export async function listPage<S extends Listable, R extends { issue_id: string }, V>(
  window: IssueWindow<S, R>,
  q: IssueListQuery,
  view: (record: R) => V,
  { assigned, now }: { assigned?: AssigneeMatch; now: Date },
) {
  const { sorted, customers, clusters } = orderedWindow(window.summaries);
  // Filtering keeps the order: the same as sorting the matches (newestFirst is a total order).
  const found = sorted.filter((i) => matches(i, q, assigned));
  const order = issueOrder(q.sort, now);
  if (order) found.sort(order);
  const start = (q.page - 1) * q.page_size;
  const page = await window.records(found.slice(start, start + q.page_size).map((i) => i.issue_id));
  return {
    issues: page.map(view),
    total: found.length,
    page: q.page,
    page_size: q.page_size,
    total_pages: Math.ceil(found.length / q.page_size),
    customers,
    clusters,
  };
}

/**
 * The issue KPIs of a window (spec §2): counts by status, unassigned, mean duration. Rule and AI issues alike.
 * Unassigned: no assignee, or one whose account is deleted or deactivated (`active`: activeUsernames), as the
 * console's triage form marks it: nobody can act on such an issue.
 */
export function kpiCounts(issues: readonly Pick<IssueSummary, 'status' | 'assignee' | 'first_seen' | 'resolved_at'>[], now: Date, active: ReadonlySet<string>) {
  const durations = issues.map((i) => durationMinutes(i, now));
  return {
    total: issues.length,
    ongoing: issues.filter((i) => i.status === 'Ongoing').length,
    resolved: issues.filter((i) => i.status === 'Resolved').length,
    unassigned: issues.filter((i) => !i.assignee || !active.has(i.assignee)).length,
    avg_duration_minutes: durations.length ? round2(durations.reduce((a, b) => a + b, 0) / durations.length) : 0,
  };
}

export async function issueKpis(days: number, now = new Date()) {
  const [window, active] = await Promise.all([issueWindow(days, windowStart(days, now)), activeUsernames()]);
  return { ...kpiCounts(window.summaries, now, active), source: SOURCE };
}

/** Active accounts an issue can be assigned to (PATCH accepts their usernames). */
export async function assignableUsers() {
  const users = (await listUsers())
    .filter((u) => u.is_active)
    .sort((a, b) => byName(a.name.toLowerCase(), b.name.toLowerCase()) || byName(a.username, b.username));
  return { users: users.map((u) => ({ username: u.username, name: u.name, email: u.email, role: u.role })) };
}

export async function requireIssue(issueId: string): Promise<IssueRecord> {
  const issue = await getIssue(issueId);
  if (!issue) throw new NotFound(`No issue ${issueId}.`);
  return issue;
}

/**
 * The alerts an issue's detail, its evidence and a ticket show: the newest; `alert_count` counts them
 * all. A noisy issue's thousands would not fit one answer (6 MB on Lambda), nor memory.
 */
export const ALERTS_SHOWN = 200;

/**
 * What an answer shows of one alert's text (summary, description): an alert may carry 64 KB of
 * annotations, and 200 such alerts are 13 MB, over Lambda's 6 MB even gzipped when the text is not
 * repetitive. Label values (alert name, severity) are cut to what ingest takes today (1,024):
 * alerts stored before that bound may hold more.
 */
export const ALERT_TEXT_SHOWN = 4_000;

/**
 * The most the alerts of one answer weigh, escaped as Lambda's result carries the body
 * (shared/http/lambda-payload.ts; a quote weighs 4 bytes there, a control character 7): whatever
 * is stored, the answer stays well under 6 MB, gzipped or not. A timeline of 200 alerts with every
 * field at its cut in plain text weighs ≈ 1.5 MB; the bound binds for heavily escaped text, or
 * evidence whose summaries and descriptions are all at their cut (≈ 160 of 200 shown).
 */
export const ALERTS_ANSWER_BYTES = 2 * 1024 * 1024;

/**
 * The alerts an answer lists, newest first, and out of how many: as many of `entries` as fit
 * ALERTS_ANSWER_BYTES (the oldest are left out), and whether the list leaves any of `total` out.
 */
export function shownAlerts<T>(entries: readonly T[], total: number): { alerts: T[]; alerts_total: number; alerts_truncated: boolean } {
  let bytes = 0;
  let shown = 0;
  for (; shown < entries.length; shown++) {
    bytes += escapedBytes(JSON.stringify(entries[shown])) + 1; // and its comma
    if (bytes > ALERTS_ANSWER_BYTES) break;
  }
  const alertsTotal = Math.max(total, entries.length); // a count read apart may lag an alert behind
  return { alerts: entries.slice(0, shown), alerts_total: alertsTotal, alerts_truncated: shown < alertsTotal };
}

const dashboardLink = z.lazy(HttpLink);
/**
 * A stored dashboard link as the console may show it: an http(s) URL, else ''. Ingest stores
 * only those, but alerts stored before it checked may hold a `javascript:` link, run on a click.
 */
export function shownLink(url: string): string {
  const link = dashboardLink.safeParse(url);
  return link.success ? link.data : '';
}

/** One alert of a detail's timeline (rule and AI issues alike): its text cut, its link only when http(s). */
export function timelineEntry(a: AlertRecord) {
  return {
    alert_id: a.alert_id,
    time: displayTime(a.starts_at),
    status: a.status,
    alert_name: cutText(a.alert_name, LABEL_VALUE_MAX),
    detail: cutText(a.detail || a.summary, ALERT_TEXT_SHOWN),
    dashboard_url: shownLink(a.dashboard_url),
    starts_at: a.starts_at,
    ends_at: a.ends_at,
  };
}

/**
 * The issue's alerts, newest first (ALERTS_SHOWN at most): the cluster's alerts of its group between
 * its first and last alert. Its group is its key's, built with the grouping keys it was formed by, not
 * the rules' now: after an edit of the keys, its alerts stay in view until a pass regroups them.
 */
export async function issueAlerts(issue: IssueRecord): Promise<AlertRecord[]> {
  const keys = keysOfGroupKey(issue.group_key);
  return newestClusterAlerts(
    issue.cluster_id,
    new Date(issue.first_seen),
    new Date(issue.last_seen),
    ALERTS_SHOWN,
    (a) => a.starts_at <= issue.last_seen && groupKeyOf(a, keys) === issue.group_key,
  );
}

export async function issueDetail(issueId: string, now = new Date()) {
  const issue = await requireIssue(issueId);
  const alerts = await issueAlerts(issue);
  const answer = {
    issue: issueView(issue, now),
    ...shownAlerts(alerts.map(timelineEntry), issue.alert_count),
    regrouped: issue.superseded_by
      ? { into: (await liveSuccessor(issue, getIssue))?.issue_id ?? null, at: issue.grouped_at ?? issue.resolved_at ?? issue.updated_at }
      : null,
    cluster_info: null,
    source: SOURCE,
  };
  // The triage version a PATCH may name as If-Match (triage-etag.ts).
  return withTriageEtag(answer, issue.triage_version);
}

export const CLUSTER_HISTORY_LIMIT = 50;

/** The cluster's other issues, newest first: counted and ordered as summaries, the ones shown read whole. */
export async function clusterHistory(issueId: string, now = new Date()) {
  const issue = await requireIssue(issueId);
  const others = (await listClusterIssueSummaries(issue.cluster_id)).filter((i) => i.issue_id !== issue.issue_id && !i.superseded_by).sort(newestFirst);
  const shown = await getIssues(others.slice(0, CLUSTER_HISTORY_LIMIT).map((i) => i.issue_id));
  return {
    cluster_name: issue.cluster_name,
    issues: shown.map((i) => issueView(i, now)),
    total: others.length,
    source: SOURCE,
  };
}

export const EVIDENCE_ALERT_DAYS = 7;

export interface MetricEvidence {
  metric_key: MetricKey;
  min: number;
  max: number;
  avg: number;
  latest: number;
  latest_at: string;
  samples: number;
}

/**
 * Alerts of the cluster's last 7 days (started in them, or before and still firing), its key metrics, its inventory. Metrics
 * are kept as daily rollups, so "the last 24 hours" is answered from the
 * rollups of the two UTC days those hours fall on, and the answer says so.
 */
export async function issueEvidence(issueId: string, now = new Date()) {
  const issue = await requireIssue(issueId);
  const since = new Date(now.getTime() - EVIDENCE_ALERT_DAYS * DAY_MS);
  const [started, startedTotal, stillFiring, rollups, cluster] = await Promise.all([
    newestClusterAlerts(issue.cluster_id, since, undefined, ALERTS_SHOWN),
    countClusterAlerts(issue.cluster_id, since),
    clusterAlertsStillFiring(issue.cluster_id, since),
    readClusterRollups(issue.cluster_id, windowDays(2, now)),
    getCluster(issue.cluster_id),
  ]);
  // The window's alerts as every window counts them: started in it, or before it and still firing (newest first:
  // those started in it come first). An issue whose alert has fired for 8 days listed no alert here.
  const alerts = [...started, ...stillFiring.reverse()].slice(0, ALERTS_SHOWN);
  const alertsTotal = startedTotal + stillFiring.length;
  const metrics: MetricEvidence[] = [];
  for (const key of METRIC_KEYS) {
    const parts = rollups.map((r) => r.metrics[key]).filter((p) => p !== undefined);
    if (!parts.length) continue;
    const latest = parts.reduce((a, b) => (b.last_at >= a.last_at ? b : a));
    const count = parts.reduce((n, p) => n + p.count, 0);
    const min = Math.min(...parts.map((p) => p.min));
    const max = Math.max(...parts.map((p) => p.max));
    metrics.push({
      metric_key: key,
      min: round2(min),
      max: round2(max),
      avg: round2(
        meanWithin(
          parts.reduce((s, p) => s + p.sum, 0),
          count,
          min,
          max,
        ),
      ),
      latest: round2(latest.last),
      latest_at: latest.last_at,
      samples: count,
    });
  }
  return {
    ...shownAlerts(
      alerts.map((a) => ({
        alert_id: a.alert_id,
        alert_name: cutText(a.alert_name, LABEL_VALUE_MAX),
        severity: cutText(a.severity, LABEL_VALUE_MAX),
        status: a.status,
        starts_at: a.starts_at,
        ends_at: a.ends_at,
        time: displayTime(a.starts_at),
        summary: cutText(a.summary, ALERT_TEXT_SHOWN),
        detail: cutText(a.detail, ALERT_TEXT_SHOWN),
        dashboard_url: shownLink(a.dashboard_url),
      })),
      alertsTotal,
    ),
    metrics,
    metrics_window: { from: `${windowDays(2, now)[0]}T00:00:00.000Z`, to: now.toISOString(), basis: 'daily rollups of the UTC days the last 24 hours fall on' },
    cluster: cluster ? inventoryView(cluster) : null,
    source: SOURCE,
  };
}

function inventoryView(c: ClusterRecord) {
  const {
    cluster_id,
    cluster_name,
    customer_name,
    account_id,
    account_name,
    email,
    customer_tier,
    cluster_type,
    region,
    engine_version,
    resource_state,
    node_count,
  } = c;
  return {
    cluster_id,
    cluster_name,
    customer_name,
    account_id,
    account_name,
    email,
    customer_tier,
    cluster_type,
    region,
    engine_version,
    resource_state,
    node_count,
  };
}
