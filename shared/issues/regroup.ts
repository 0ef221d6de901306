// Regrouping: applies groupAlerts to what is stored. Incremental (the clusters
// an alert batch touched, right after ingest) and scheduled (every cluster
// with recent alerts or open issues, from the recompute Lambda). Writes only
// what changed, so running it twice changes nothing.
import { listAlertsSince, listClusterAlerts } from '../db/alerts.js';
import { ConditionFailed, mapLimit, transactWrite } from '../db/client.js';
import { listClusters, type ClusterRecord } from '../db/clusters.js';
import { deleteGroupingAction, listClusterIssues, listIssuesActiveSince, markSuperseded, writeGrouping, type IssueRecord } from '../db/issues.js';
import { loadIssueRules } from '../rules/load.js';
import type { IssueRules } from '../rules/schemas.js';
import { groupAlerts, type IssueGrouping } from './grouping.js';

/** How far back a regrouping reads a cluster's alerts (further for issues still open before that). */
export const REGROUP_HORIZON_DAYS = 30;
const DAY_MS = 86_400_000;
const ATTEMPTS = 3;

export interface RegroupResult {
  clusters: number;
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
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

async function regroupClusterOnce(clusterId: string, cluster: ClusterRecord | undefined, rules: IssueRules, now: Date): Promise<Omit<RegroupResult, 'clusters'>> {
  const stored = await listClusterIssues(clusterId);
  // Read back to the start of any issue that could still take alerts: open ones, and
  // those that ended less than a join window before the horizon.
  const horizon = now.getTime() - REGROUP_HORIZON_DAYS * DAY_MS;
  const reach = horizon - rules.grouping.join_window_minutes * 60_000;
  const relevant = stored.filter((i) => i.status === 'Ongoing' || Date.parse(i.resolved_at ?? i.last_seen) >= reach);
  const since = Math.min(horizon, ...relevant.map((i) => Date.parse(i.first_seen)));
  const alerts = await listClusterAlerts(clusterId, new Date(since));
  const groupings = groupAlerts(alerts, rules, now);
  const names = displayNames(cluster, clusterId, stored.at(-1), alerts[0]?.labels);
  const byId = new Map(stored.map((i) => [i.issue_id, i]));
  const result = { created: 0, updated: 0, unchanged: 0, removed: 0 };
  for (const next of groupings) {
    const current = byId.get(next.issue_id);
    if (current && sameGrouping(current, next, names)) {
      result.unchanged++;
      continue;
    }
    await writeGrouping(next, names, current ? current.grouping_version : null, now);
    result[current ? 'updated' : 'created']++;
  }
  // Issues read back but no longer produced: their alerts now belong to another issue.
  const produced = new Set(groupings.map((g) => g.issue_id));
  for (const gone of relevant.filter((i) => !produced.has(i.issue_id))) {
    if (gone.superseded_by) continue;
    const successor = groupings.find((g) => g.group_key === gone.group_key && g.first_seen <= gone.first_seen && gone.first_seen <= g.last_seen);
    if (gone.triage_version === 0 && !gone.ticket_key) await transactWrite([deleteGroupingAction(gone)]);
    else await markSuperseded(gone, successor?.issue_id ?? '', now);
    result.removed++;
  }
  return result;
}

/** Regroups one cluster's alerts; retried from a fresh read when a concurrent run wrote first. */
async function regroupCluster(clusterId: string, cluster: ClusterRecord | undefined, rules: IssueRules, now: Date) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await regroupClusterOnce(clusterId, cluster, rules, now);
    } catch (error) {
      if (!(error instanceof ConditionFailed) || attempt >= ATTEMPTS) throw error;
    }
  }
}

/** Regroups these clusters (after an ingest): the live issue rules, the inventory read once. */
export async function regroupClusters(clusterIds: Iterable<string>, now = new Date()): Promise<RegroupResult> {
  const ids = [...new Set(clusterIds)];
  const total: RegroupResult = { clusters: ids.length, created: 0, updated: 0, unchanged: 0, removed: 0 };
  if (ids.length === 0) return total;
  const [{ rules }, clusters] = await Promise.all([loadIssueRules(), listClusters()]);
  const inventory = new Map(clusters.map((c) => [c.cluster_id, c]));
  const results = await mapLimit(ids, 8, (id) => regroupCluster(id, inventory.get(id), rules, now));
  for (const r of results) for (const k of ['created', 'updated', 'unchanged', 'removed'] as const) total[k] += r[k];
  return total;
}

/**
 * The scheduled pass: every cluster with alerts in the horizon or an open
 * issue. Moves issues to Resolved once their quiet period is over, and applies
 * edited issue rules to recent history.
 */
export async function regroupRecent(now = new Date()): Promise<RegroupResult> {
  const [alerts, open] = await Promise.all([
    listAlertsSince(new Date(now.getTime() - REGROUP_HORIZON_DAYS * DAY_MS), now),
    listIssuesActiveSince(now), // Ongoing ones sort after every timestamp
  ]);
  return regroupClusters([...alerts.map((a) => a.cluster_id), ...open.map((i) => i.cluster_id)], now);
}
