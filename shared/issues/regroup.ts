// Regrouping: applies groupAlerts to what is stored. Incremental (the clusters
// an alert batch touched, right after ingest) and scheduled (the recompute
// Lambda). Writes only what changed, so running it twice changes nothing.
//
// An issue keeps its id, and so its triage and ticket, when its alerts change:
// a produced issue that overlaps a stored one of the same group takes the
// stored id (an earlier alert arrived late, or an alert bridged two issues).
//
// A cluster's regrouping that wrote anything moves the issues' generation
// marker once, right after its writes (also when it then fails), so every
// container's list cache (list-cache.ts) reads the window again. Not inside
// each write's transaction: up to 8 clusters regroup at once, and a marker in
// all their writes would make them conflict with each other.
import { listAlertingClustersSince, listClusterAlertFields } from '../db/alerts.js';
import { ConditionFailed, mapLimit, retryOnConflict, transactWrite } from '../db/client.js';
import { getCluster, type ClusterRecord } from '../db/clusters.js';
import {
  NO_SUCCESSOR,
  deleteGroupingAction,
  getGroupingState,
  getIssues,
  afterIssueWrites,
  latestClusterIssue,
  listClusterIssuesActiveSince,
  listIssueSummariesSince,
  markSuperseded,
  putGroupingState,
  rekeyClusterIssues,
  writeGrouping,
  type IssueRecord,
} from '../db/issues.js';
import { createLogger } from '../log.js';
import { loadIssueRules } from '../rules/load.js';
import type { IssueRules } from '../rules/schemas.js';
import { GROUPED_FIELDS, groupAlerts, groupKeyOf, keysOfGroupKey, type GroupedAlert, type IssueGrouping } from './grouping.js';

/** How far back a full regrouping reads a cluster's alerts (further for issues still open before that). */
export const REGROUP_HORIZON_DAYS = 30;
const DAY_MS = 86_400_000;
const ATTEMPTS = 4;
const log = createLogger('issue-grouping');

export interface RegroupResult {
  clusters: number;
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
  /** Clusters whose regrouping failed (logged; the next pass retries them). */
  failed: number;
}

const GROUPING_FIELDS = ['group_key', 'issue_name', 'severity', 'status', 'cluster_id', 'alert_count', 'first_seen', 'last_seen', 'resolved_at'] as const;

function sameGrouping(stored: IssueRecord, next: IssueGrouping, names: { cluster_name: string; customer_name: string }): boolean {
  return (
    GROUPING_FIELDS.every((f) => stored[f] === next[f]) &&
    stored.alert_names.join('\n') === next.alert_names.join('\n') &&
    stored.cluster_name === names.cluster_name &&
    stored.customer_name === names.customer_name &&
    !stored.superseded_by
  );
}

/**
 * Names shown on the issue: the inventory's; for a cluster no longer in the
 * inventory, the names its issues had, else what its alerts' labels say.
 */
function displayNames(cluster: ClusterRecord | undefined, clusterId: string, stored: IssueRecord | undefined, labels: Record<string, string> | undefined) {
  if (cluster) return { cluster_name: cluster.cluster_name, customer_name: cluster.customer_name };
  if (stored) return { cluster_name: stored.cluster_name, customer_name: stored.customer_name };
  return {
    cluster_name: labels?.cluster_name ?? labels?.cluster ?? clusterId,
    customer_name: labels?.customer_name ?? labels?.customer ?? '',
  };
}

/** The start of an issue that may still take alerts at `now`: a join window before the horizon. */
const reachAt = (now: number, rules: IssueRules) => now - REGROUP_HORIZON_DAYS * DAY_MS - rules.grouping.join_window_minutes * 60_000;

/** The issue that started last: its names stand in for a cluster missing from the inventory. */
const newestStarted = (issues: readonly IssueRecord[]) =>
  issues.reduce<IssueRecord | undefined>((newest, i) => (!newest || i.first_seen > newest.first_seen ? i : newest), undefined);

/** Issues keyed the earlier way that one regrouping moves (each is one conditional update, on an ingest's path). */
const REKEY_PER_PASS = 25;

const overlaps = (a: { first_seen: string; last_seen: string }, b: { first_seen: string; last_seen: string }) =>
  a.first_seen <= b.last_seen && b.first_seen <= a.last_seen;
const triaged = (i: IssueRecord) => i.triage_version > 0 || Boolean(i.ticket_key);
/**
 * Has a ticket: the issue to keep first, so create-ticket on what its alerts form is a 409 naming it, not a second
 * ticket. A create under way or without a definite answer passes to the issue kept instead (markSuperseded).
 */
const ticketed = (i: IssueRecord) => Boolean(i.ticket_key);

/** Of spans sorted by start that do not overlap (one group's issues), the one holding `at`, by binary search. */
function spanAt<T extends { first_seen: string; last_seen: string }>(sorted: readonly T[] | undefined, at: string): T | undefined {
  if (!sorted) return undefined;
  let lo = 0;
  let hi = sorted.length - 1;
  let found: T | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.first_seen <= at) {
      found = sorted[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found && at <= found.last_seen ? found : undefined;
}

/**
 * After an edit of the grouping keys, the produced issue each stored issue of the old keys goes on as: the one holding
 * most of its alerts (its alerts: those its own key, read back, names within its span), the earliest on a tie. None
 * when none holds any. No issue of the rules' keys is in the map: its group decides, as before. Linear in the alerts
 * per old key set (a pass reads up to 30 days of a cluster's alerts: thousands for a flapping one), each alert's
 * old and new issue found by binary search among its group's.
 */
export function heirsAcrossKeys(stored: readonly IssueRecord[], groupings: readonly IssueGrouping[], alerts: readonly GroupedAlert[], rules: IssueRules) {
  const heirs = new Map<string, IssueGrouping>();
  const keysNow = rules.grouping.keys.join('|');
  // The old issues by key set, then by group key (an old group's issues are a few spans that do not overlap).
  const old = new Map<string, { keys: string[]; groups: Map<string, IssueRecord[]> }>();
  for (const issue of stored) {
    const keys = keysOfGroupKey(issue.group_key);
    const joined = keys.join('|');
    if (keys.length === 0 || joined === keysNow) continue;
    const set = old.get(joined) ?? { keys, groups: new Map<string, IssueRecord[]>() };
    old.set(joined, set);
    const group = set.groups.get(issue.group_key);
    if (group) group.push(issue);
    else set.groups.set(issue.group_key, [issue]);
  }
  if (old.size === 0) return heirs;
  for (const { groups } of old.values()) for (const issues of groups.values()) issues.sort((a, b) => (a.first_seen < b.first_seen ? -1 : 1));
  // Produced issues by group, in start order (groupAlerts sorts them).
  const spans = new Map<string, IssueGrouping[]>();
  for (const g of groupings) {
    const list = spans.get(g.group_key);
    if (list) list.push(g);
    else spans.set(g.group_key, [g]);
  }
  const holders = new Map<GroupedAlert, IssueGrouping | undefined>();
  const holder = (alert: GroupedAlert) => {
    if (!holders.has(alert)) holders.set(alert, spanAt(spans.get(groupKeyOf(alert, rules.grouping.keys)), alert.starts_at));
    return holders.get(alert);
  };
  const counts = new Map<IssueRecord, Map<IssueGrouping, number>>();
  for (const { keys, groups } of old.values()) {
    for (const alert of alerts) {
      const issue = spanAt(groups.get(groupKeyOf(alert, keys)), alert.starts_at);
      const g = issue && holder(alert);
      if (!issue || !g) continue;
      const held = counts.get(issue) ?? new Map<IssueGrouping, number>();
      counts.set(issue, held.set(g, (held.get(g) ?? 0) + 1));
    }
  }
  for (const [issue, held] of counts) {
    let best: IssueGrouping | undefined;
    for (const [g, n] of held) if (!best || n > held.get(best)! || (n === held.get(best)! && g.first_seen < best.first_seen)) best = g;
    if (best) heirs.set(issue.issue_id, best);
  }
  return heirs;
}

/** Regroups one cluster from a fresh read; moves the marker after it when it wrote anything. */
async function regroupClusterOnce(clusterId: string, rules: IssueRules, asOf: Date, readFrom?: number) {
  // Before the caller (an ingest) answers: the next list read anywhere sees these writes, also those of a failed run.
  return afterIssueWrites((writes) => applyGrouping(clusterId, rules, asOf, writes, readFrom), {
    report: (error) => log.error('moving the issues marker failed', { cluster_id: clusterId, error: String(error) }),
  });
}

async function applyGrouping(
  clusterId: string,
  rules: IssueRules,
  asOf: Date,
  writes: { made: boolean },
  /** The earliest start of alerts just recorded (an ingest): read back to it, be it before the horizon. */
  readFrom?: number,
) {
  // The issues that may still take alerts (below), not every issue the cluster ever had: read
  // from a day before the earliest reach this pass can have (its instant only moves later).
  const { active, legacy } = await listClusterIssuesActiveSince(clusterId, new Date(reachAt(asOf.getTime(), rules) - DAY_MS));
  const stored = [...active, ...legacy];
  // Its names read after its issues, consistently: a rename (shared/issues/renames.ts) writes the inventory before it
  // renames the issues, and moves each one's grouping_version, so names read before that were written back over it.
  const cluster = await getCluster(clusterId, true);
  const now = notBeforeGrouped(asOf, stored);
  // Read back to the start of any issue that could still take alerts: open ones, and
  // those that ended less than a join window before the horizon.
  const horizon = now.getTime() - REGROUP_HORIZON_DAYS * DAY_MS;
  const reach = reachAt(now.getTime(), rules);
  const relevant = stored.filter((i) => !i.superseded_by && (i.status === 'Ongoing' || Date.parse(i.resolved_at ?? i.last_seen) >= reach));
  // A loop, not a spread: one argument per open issue could pass what a call takes.
  let since = Math.min(horizon, readFrom ?? horizon);
  for (const issue of relevant) since = Math.min(since, Date.parse(issue.first_seen));
  const alerts = await listClusterAlertFields(clusterId, new Date(since), GROUPED_FIELDS);
  const groupings = groupAlerts(alerts, rules, now);
  // A produced issue keeps the id of a stored one with its id, also one that was not read
  // (superseded, or ended long ago and read back to by an old open issue or a late alert).
  const byId = new Map(stored.map((i) => [i.issue_id, i]));
  for (const issue of await getIssues([...new Set(groupings.map((g) => g.issue_id))].filter((id) => !byId.has(id)))) byId.set(issue.issue_id, issue);
  // A cluster missing from the inventory keeps the names its issues carry: of the newest read, else its latest.
  const named = cluster ? undefined : (newestStarted([...byId.values()]) ?? (await latestClusterIssue(clusterId)));
  const names = displayNames(cluster, clusterId, named, alerts[0]?.labels);
  const kept = new Set<string>();
  const produced: IssueGrouping[] = [];
  const result = { created: 0, updated: 0, unchanged: 0, removed: 0 };
  // A stored issue that split (a late earlier alert joined it, then resolved; a narrower join window) goes on as
  // the part with its id, whatever part comes first: taken by an earlier part, the part with its id was created
  // anew under that same id, refused, and every later pass of the cluster failed alike (its firing alerts in no
  // issue, its new alerts never grouped). Its triage then stays with the alerts it was made under. Overlapping
  // or not: an earlier split may have left it holding only another part's alerts (and a cluster the old way left
  // stuck has it so), and taken by overlap again it collided as before.
  // By id alone: an issue that went on across an edit of the grouping keys (below) holds an id of another key.
  const reservedFor = new Map<string, IssueGrouping>();
  for (const grouping of groupings) {
    const own = relevant.find((i) => i.issue_id === grouping.issue_id);
    if (own) reservedFor.set(own.issue_id, grouping);
  }
  // Issues of grouping keys since edited go on as the produced issue holding most of their alerts, so an edit of the
  // keys keeps triage and tickets in view (before, every such issue was retired with no successor, and a
  // ticketed one's alerts came back untriaged, open to a second ticket).
  const heirs = heirsAcrossKeys(relevant, groupings, alerts, rules);
  const producedAs = new Map<IssueGrouping, IssueGrouping>();

  for (const grouping of groupings) {
    // The stored issue this one continues: of the overlapping stored issues of its group not reserved for another
    // part, a ticketed one first (no second ticket for its alerts), then a triaged one (its triage stays in view),
    // then the one with its id, then the oldest.
    const free = (i: IssueRecord) => !kept.has(i.issue_id) && (reservedFor.get(i.issue_id) ?? grouping) === grouping;
    const own = kept.has(grouping.issue_id) ? undefined : byId.get(grouping.issue_id);
    let candidates = relevant.filter((i) => i.group_key === grouping.group_key && free(i) && overlaps(i, grouping));
    // Of the old keys' issues whose alerts it holds most of: when no issue of its own group, nor its own id, goes on as it.
    if (candidates.length === 0 && !own) candidates = relevant.filter((i) => heirs.get(i.issue_id) === grouping && free(i));
    const rank = (i: IssueRecord) => [ticketed(i) ? 0 : 1, triaged(i) ? 0 : 1, i.issue_id === grouping.issue_id ? 0 : 1] as const;
    candidates.sort((a, b) => {
      const [x, y] = [rank(a), rank(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || (a.first_seen < b.first_seen ? -1 : 1);
    });
    const current = candidates[0] ?? own;
    const next = current ? { ...grouping, issue_id: current.issue_id } : grouping;
    // Resolved, starting before the horizon and matching nothing stored: the tail of an old issue
    // that was not read back (alerts were read further back for another group's open issue). Not
    // ours. An Ongoing one is kept whatever its start: it holds an alert that still fires (or just
    // resolved), e.g. one an open issue of edited grouping keys read back, and dropping it would
    // leave that alert in no issue once the old issue goes below.
    if (!current && next.status === 'Resolved' && Date.parse(next.first_seen) < horizon) continue;
    if (current) kept.add(current.issue_id);
    produced.push(next);
    producedAs.set(grouping, next);
    if (current && sameGrouping(current, next, names)) {
      result.unchanged++;
      continue;
    }
    writes.made = true;
    await writeGrouping(next, names, current ? current.grouping_version : null, now);
    result[current ? 'updated' : 'created']++;
  }

  // Stored issues no longer produced: their alerts now belong to another issue, or to none.
  for (const gone of relevant.filter((i) => !kept.has(i.issue_id))) {
    writes.made = true;
    if (triaged(gone) || gone.ticket_claim) {
      const heir = heirs.get(gone.issue_id);
      const successor = produced.find((g) => g.group_key === gone.group_key && overlaps(g, gone)) ?? (heir && producedAs.get(heir));
      await markSuperseded(gone, successor?.issue_id ?? NO_SUCCESSOR, now);
    } else {
      await transactWrite([deleteGroupingAction(gone)]);
    }
    result.removed++;
  }
  // Issues keyed the earlier way move to the activity key, a few per pass, so later reads skip them.
  if (legacy.length) await rekeyClusterIssues(legacy.slice(0, REKEY_PER_PASS));
  return result;
}

/**
 * The instant a pass evaluates a cluster at: never before one a pass already grouped it at (`grouped_at`).
 * Issues resolve as time passes (the quiet period), so a pass evaluating an earlier instant, one that started
 * before another but read after its writes (a retry after losing the race, a long scheduled pass, a clock
 * behind), would move a Resolved issue back to Ongoing until the next pass.
 */
function notBeforeGrouped(asOf: Date, stored: readonly IssueRecord[]): Date {
  let latest = asOf.getTime();
  for (const issue of stored) {
    const at = Date.parse(issue.grouped_at);
    if (at > latest) latest = at;
  }
  return new Date(latest);
}

/** Regroups one cluster; from a fresh read at a fresh instant, after a backoff, when a concurrent run wrote first. */
function regroupCluster(clusterId: string, rules: IssueRules, clock: () => Date, readFrom?: number) {
  return retryOnConflict(() => regroupClusterOnce(clusterId, rules, clock(), readFrom), ATTEMPTS);
}

/**
 * Regroups these clusters with the live issue rules. A cluster that fails is
 * logged and counted, never the caller's failure: the alerts are stored, and
 * the next pass groups them. `readFrom`: per cluster, the earliest start of the
 * firing alerts an ingest just recorded, read back to even before the horizon: an
 * alert first delivered already firing for longer still forms its issue, whose
 * start then pins later passes' reads.
 */
export async function regroupClusters(clusterIds: Iterable<string>, now = new Date(), readFrom?: ReadonlyMap<string, number>): Promise<RegroupResult> {
  const ids = [...new Set(clusterIds)];
  const total: RegroupResult = { clusters: ids.length, created: 0, updated: 0, unchanged: 0, removed: 0, failed: 0 };
  if (ids.length === 0) return total;
  // Each attempt at a cluster evaluates at a fresh instant: `now` on the caller's clock, advanced by the time
  // since (a cluster late in a long pass, a retry after a lost race).
  const started = performance.now();
  const clock = () => new Date(now.getTime() + (performance.now() - started));
  const { rules } = await loadIssueRules();
  const results = await mapLimit(ids, 8, async (id) => {
    try {
      return await regroupCluster(id, rules, clock, readFrom?.get(id));
    } catch (error) {
      // Lost to other regroupings of the cluster on every attempt (an alert storm's deliveries at once): theirs
      // stand, and the next pass (15 minutes at most) reads what they did not. Not an error of ours.
      if (error instanceof ConditionFailed)
        log.warn('regrouping a cluster lost to concurrent regroupings of it; the next pass regroups it', { cluster_id: id, attempts: ATTEMPTS });
      else log.error('regrouping a cluster failed', { cluster_id: id, error: String(error) });
      return undefined;
    }
  });
  for (const r of results) {
    if (!r) total.failed++;
    else for (const k of ['created', 'updated', 'unchanged', 'removed'] as const) total[k] += r[k];
  }
  return total;
}

/** Alerts of the last day are regrouped on every scheduled pass: a safety net for an ingest whose grouping failed. */
const RECENT_MS = DAY_MS;

/**
 * The scheduled pass: clusters with open issues (their quiet periods end) and
 * with alerts of the last day. After an edit of the issue rules, once, every
 * cluster with alerts in the horizon, so the new rules reach recent history.
 */
export async function regroupRecent(now = new Date()): Promise<RegroupResult & { full: boolean }> {
  const [{ version }, state] = await Promise.all([loadIssueRules(), getGroupingState()]);
  const full = state?.rules_version !== version;
  const [alerting, open] = await Promise.all([
    listAlertingClustersSince(new Date(now.getTime() - (full ? REGROUP_HORIZON_DAYS * DAY_MS : RECENT_MS)), now),
    listIssueSummariesSince(now), // Ongoing ones sort after every timestamp
  ]);
  const result = await regroupClusters([...alerting, ...open.map((i) => i.cluster_id)], now);
  if (full && result.failed === 0) await putGroupingState(version, now);
  return { ...result, full };
}
