// Applying AI grouping to stored alerts: per cluster, the alerts of the last
// 7 days, regrouped only when they changed since the last grouping (the
// debounce: the scheduled recompute runs every 15 minutes, and an unchanged
// cluster costs no LLM call). Stored issues keep their ids, and so their
// triage, when a new group shares alerts with them.
import { createHash, randomUUID } from 'node:crypto';
import { getClusterAlerts, listAlertingClustersSince, listClusterAlertFields, listClusterAlerts, type AlertRecord } from '../db/alerts.js';
import { ConditionFailed, mapLimit } from '../db/client.js';
import { getClusters } from '../db/clusters.js';
import {
  afterAiIssueWrites,
  getAiGroupingState,
  retireAiIssue,
  getAiIssues,
  listAiIssueSummariesSince,
  markAiGroupingStale,
  NO_FINGERPRINT,
  NO_SUCCESSOR,
  putAiGroupingState,
  resolveAiHistory,
  writeAiGrouping,
  type AiGrouping,
  type AiIssueRecord,
} from '../db/ai-issues.js';
import { agentProvider, budgetSpentWords, type BudgetSpent } from '../llm/agent-budget.js';
import { llmProvider } from '../llm/provider.js';
import { createLogger } from '../log.js';
import { llmGroups, rulesGroups, type AlertGroup } from './grouping.js';
import { alertSeverity } from '../issues/grouping.js';
import { loadIssueRules } from '../rules/load.js';
import type { IssueRules } from '../rules/schemas.js';

export const AI_WINDOW_DAYS = 7;
const log = createLogger('ai-grouping');

export const alertKeyOf = (a: Pick<AlertRecord, 'starts_at' | 'fingerprint'>) => `${a.starts_at}#${a.fingerprint}`;

/** What the grouping saw: every alert and its state. */
const FINGERPRINT_FIELDS = ['starts_at', 'fingerprint', 'status', 'ends_at'] as const;
function fingerprintOf(alerts: readonly Pick<AlertRecord, 'starts_at' | 'fingerprint' | 'status' | 'ends_at'>[]): string {
  const lines = alerts.map((a) => `${alertKeyOf(a)}|${a.status}|${a.ends_at ?? ''}`).sort();
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/**
 * The alerts an AI issue links, newest first kept: its detail lists them and the next run matches
 * groups to issues by them; alert_count counts them all. An issue is one DynamoDB item (400 KB), and
 * a key is up to 153 characters: a burst of 5,000 alerts in one group made one DynamoDB refused.
 */
export const AI_ALERT_KEYS_KEPT = 500;

function toGrouping(group: AlertGroup, id: string, names: { cluster_name: string; customer_name: string }, groupedBy: string): AiGrouping {
  const alerts = [...group.alerts].sort((a, b) => (a.starts_at < b.starts_at ? -1 : 1));
  const firing = alerts.some((a) => a.status === 'Firing');
  const ends = alerts.map((a) => a.ends_at ?? a.starts_at).sort();
  return {
    issue_id: id,
    issue_name: group.title,
    severity: group.severity,
    status: firing ? 'Ongoing' : 'Resolved',
    cluster_id: alerts[0]!.cluster_id,
    ...names,
    alert_count: alerts.length,
    alert_keys: alerts.slice(-AI_ALERT_KEYS_KEPT).map(alertKeyOf),
    first_seen: alerts[0]!.starts_at,
    last_seen: alerts.at(-1)!.starts_at,
    resolved_at: firing ? null : ends.at(-1)!,
    ai_reasoning: group.reasoning,
    ai_summary: group.summary,
    grouped_by: groupedBy,
  };
}

const triaged = (issue: AiIssueRecord) => issue.triage_version > 0;

/**
 * The groups as issues: a group continues the stored issue it shares the most alerts with, each stored
 * issue at most once, a triaged one first (its triage stays in view, as a rule issue's: shared/issues/):
 * the largest overlaps are matched first, whatever order the groups came in.
 */
function continuing(
  clusterId: string,
  groups: readonly AlertGroup[],
  stored: readonly AiIssueRecord[],
  names: { cluster_name: string; customer_name: string },
  groupedBy: string,
): AiGrouping[] {
  const pairs = groups.flatMap((g, gi) => {
    const keys = new Set(g.alerts.map(alertKeyOf));
    return stored.map((s) => ({ gi, s, shared: s.alert_keys.filter((k) => keys.has(k)).length })).filter((p) => p.shared > 0);
  });
  pairs.sort((a, b) => Number(triaged(b.s)) - Number(triaged(a.s)) || b.shared - a.shared || a.gi - b.gi || (a.s.issue_id < b.s.issue_id ? -1 : 1));
  const adopted = new Map<number, string>();
  const taken = new Set<string>();
  for (const p of pairs) {
    if (adopted.has(p.gi) || taken.has(p.s.issue_id)) continue;
    adopted.set(p.gi, p.s.issue_id);
    taken.add(p.s.issue_id);
  }
  return groups.map((g, gi) => {
    // A new id from the group's first alert; while another group of this run holds that id
    // (it continued the issue that once started with that alert), the next of a numbered series.
    const idOf = (n: number) =>
      `ai-${createHash('sha256')
        .update(`${clusterId}\n${alertKeyOf(g.alerts[0]!)}\n${n}`)
        .digest('hex')
        .slice(0, 20)}`;
    let id = adopted.get(gi);
    if (!id) {
      id = idOf(0);
      for (let n = 1; taken.has(id); n++) id = idOf(n);
      taken.add(id);
    }
    return toGrouping(g, id, names, groupedBy);
  });
}

/** Matchings of a cluster's groups to its issues, when an issue to retire keeps being triaged meanwhile. */
const MATCH_ATTEMPTS = 3;

/**
 * Regroups one cluster, then settles its history (`openIds`: its Ongoing issues); moves the AI issues' marker
 * after it when it wrote any issue.
 */
async function regroupCluster(
  clusterId: string,
  names: { cluster_name: string; customer_name: string },
  openIds: readonly string[],
  severities: IssueRules['severity'],
  now: Date,
  budget: BudgetSpent | undefined,
): Promise<'regrouped' | 'unchanged'> {
  // Before the pass goes on: the next list read in any container sees these writes, also those of a failed
  // run. If the marker cannot move, the cluster is left for the next pass, whose regrouping moves it (lists
  // meanwhile stay as they were, at most the cache's TTL).
  return afterAiIssueWrites(
    async (writes) => {
      const outcome = await groupCluster(clusterId, names, severities, now, writes, budget);
      if (openIds.length) await settleHistory(clusterId, openIds, writes);
      return outcome;
    },
    {
      report: (error) => log.error('moving the AI issues marker failed', { cluster_id: clusterId, error: String(error) }),
      unmoved: () => markAiGroupingStale(clusterId),
    },
  );
}

/** The first wait before the model is asked again about a cluster it failed, doubling with each failure in a row. */
export const MODEL_RETRY_BASE_MS = 30 * 60_000;
const MODEL_RETRY_MAX_MS = 12 * 60 * 60_000;
/**
 * How long after its `failures`-th failure in a row the model is asked again: a cluster whose answer is cut off
 * every time (or a provider that is down) would otherwise cost a paid call every pass, and in an outage the same
 * failing clusters would take each pass's time while the others' new alerts waited.
 */
export const modelWait = (failures: number) => Math.min(MODEL_RETRY_MAX_MS, MODEL_RETRY_BASE_MS * 2 ** Math.max(0, Math.min(failures, 20) - 1));

async function groupCluster(
  clusterId: string,
  names: { cluster_name: string; customer_name: string },
  severities: IssueRules['severity'],
  now: Date,
  writes: { made: boolean },
  budget: BudgetSpent | undefined,
): Promise<'regrouped' | 'unchanged'> {
  const provider = llmProvider();
  const method = provider ? `llm:${provider.model}` : 'rules';
  const since = new Date(now.getTime() - AI_WINDOW_DAYS * 86_400_000);
  // Most clusters of a pass are unchanged: their window is compared by what the fingerprint reads, and
  // read whole (annotations of up to 64 KB each) only when it moved.
  const [state, facts] = await Promise.all([getAiGroupingState(clusterId), listClusterAlertFields(clusterId, since, FINGERPRINT_FIELDS)]);
  // The configured model failed this cluster lately: not asked again before its wait is over (modelWait).
  const waiting =
    provider !== null &&
    state?.model_failed_at !== undefined &&
    state.model_failed_with === method &&
    now.getTime() < Date.parse(state.model_failed_at) + modelWait(state.model_failures ?? 1);
  // The day's AI budget spent (`budget`, the pass's): the model is not asked, as while it waits, and a cluster whose
  // alerts did not move keeps the grouping it has, the model's too.
  if (state && state.fingerprint === fingerprintOf(facts) && (state.method === method || waiting || (provider !== null && budget))) return 'unchanged';
  const read = await listClusterAlerts(clusterId, since);
  const fingerprint = fingerprintOf(read);
  // Each alert as severe as the issue rules rate it (their name patterns first, then the label), as its rule
  // issue is: the stored severity is the label's alone, so `DiskFullSoon` (severity=warning) made a Warning AI
  // issue beside its Critical rule issue. What the model is shown and what the rules fallback counts.
  const alerts = read.map((a) => ({ ...a, severity: alertSeverity(a, severities) }));

  let groups: AlertGroup[] = [];
  // The method actually used, saved with the fingerprint: a fallback to rules is saved as `rules`, so
  // the next pass, finding another method configured, asks the model again (an empty window needs none)
  // once the fallback's wait is over; new alerts meanwhile are grouped by rules without asking it.
  let groupedBy = method;
  let failed = false;
  if (alerts.length && provider && waiting) {
    groups = rulesGroups(alerts, 'Rule-based grouping (the model failed lately; it is asked again later)');
    groupedBy = 'rules';
  } else if (alerts.length && provider && budget) {
    groups = rulesGroups(alerts, `Rule-based grouping (${budgetSpentWords(budget)})`);
    groupedBy = 'rules';
  } else if (alerts.length && provider) {
    try {
      const answer = await llmGroups(provider, names.cluster_name, alerts, { runId: randomUUID(), source: 'agent', user: 'ai-grouping' });
      groups = answer.groups;
      if (!answer.usedModel) [groupedBy, failed] = ['rules', true];
    } catch (error) {
      log.error('LLM grouping failed; grouped by rules', { cluster_id: clusterId, error: String(error) });
      groups = rulesGroups(alerts, 'Rule-based grouping (the model failed)');
      [groupedBy, failed] = ['rules', true];
    }
  } else if (alerts.length) groups = rulesGroups(alerts);
  // Kept while waiting, one more when the model failed again, gone once it grouped the cluster (or none was asked).
  // Failures in a row count for one model: another configured since starts from none.
  const before = state?.model_failed_with === method ? (state.model_failures ?? 0) : 0;
  const modelFailed =
    waiting && state?.model_failed_at
      ? { model_failed_at: state.model_failed_at, model_failures: state.model_failures ?? 1, model_failed_with: method }
      : failed
        ? { model_failed_at: now.toISOString(), model_failures: before + 1, model_failed_with: method }
        : {};

  // Claimed before anything is written: the state lists every id this run may write beside the
  // ones it replaces, with no fingerprint. A run that stops half-way (a failed write, a timeout)
  // so leaves a cluster the next pass regroups, retiring what this one wrote and no grouping
  // produces; and of two runs on one cluster, only the one that claims first writes.
  let stored = state ? await getAiIssues(state.issue_ids) : [];
  let claimedIds = state?.issue_ids ?? [];
  let claimed = state?.version ?? null;
  const inWindow = new Set(alerts.map(alertKeyOf));
  let ids: Set<string>;
  for (let attempt = 1; ; attempt++) {
    const produced = continuing(clusterId, groups, stored, names, groupedBy);
    ids = new Set(produced.map((g) => g.issue_id));
    // The first match claims; a later one widens the claim when it names an id outside it.
    if (attempt === 1 || [...ids].some((id) => !claimedIds.includes(id))) {
      claimedIds = [...new Set([...claimedIds, ...ids])];
      claimed = await putAiGroupingState(clusterId, { fingerprint: NO_FINGERPRINT, method: groupedBy, issue_ids: claimedIds, ...modelFailed }, claimed);
    }
    writes.made = true;
    for (const g of produced) await writeAiGrouping(g, now);
    try {
      // Issues whose alerts were regrouped into others go (unless triaged); those whose alerts all
      // left the window stay as they are, history.
      for (const old of stored) {
        if (ids.has(old.issue_id) || !old.alert_keys.some((k) => inWindow.has(k))) continue;
        const successor = produced.find((g) => g.alert_keys.some((k) => old.alert_keys.includes(k)))?.issue_id ?? NO_SUCCESSOR;
        await retireAiIssue(old, successor, now);
      }
      break;
    } catch (error) {
      if (!(error instanceof ConditionFailed) || attempt >= MATCH_ATTEMPTS) throw error;
      // An issue to retire was triaged since it was read: match the same groups to the cluster's issues
      // as they are now (those this run wrote among them), so the triaged one continues a group.
      stored = await getAiIssues(claimedIds);
    }
  }
  try {
    await putAiGroupingState(clusterId, { fingerprint, method: groupedBy, issue_ids: [...ids], ...modelFailed }, claimed);
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    // Another run claimed the cluster while this one wrote: its issues may now hold this run's older
    // grouping. The next pass regroups the cluster rather than trust either.
    await markAiGroupingStale(clusterId);
    throw error;
  }
  return 'regrouped';
}

/**
 * Resolves the cluster's Ongoing issues that no grouping holds any more (every alert they link started before
 * the window: history, which the grouping leaves as it is) once all those alerts have ended, at the last end.
 * Left alone, such an issue stayed Ongoing for good: in every list window, the KPIs and the patrol's open
 * issues. One that still has a firing alert stays Ongoing, and is looked at again next pass.
 */
async function settleHistory(clusterId: string, openIds: readonly string[], writes: { made: boolean }): Promise<void> {
  const grouped = new Set((await getAiGroupingState(clusterId))?.issue_ids ?? []);
  const history = openIds.filter((id) => !grouped.has(id));
  if (!history.length) return;
  for (const issue of await getAiIssues(history)) {
    if (issue.status !== 'Ongoing' || issue.superseded_by) continue;
    const alerts = await getClusterAlerts(clusterId, issue.alert_keys);
    if (alerts.some((a) => a.status === 'Firing')) continue;
    // Alerts gone from the store (retention) leave the last start seen as the best end known.
    const resolvedAt =
      alerts
        .map((a) => a.ends_at ?? a.starts_at)
        .sort()
        .at(-1) ?? issue.last_seen;
    writes.made = true;
    try {
      await resolveAiHistory(issue, resolvedAt);
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error; // a regrouping took it up meanwhile: its status stands
    }
  }
}

/** The Ongoing AI issues' ids by cluster (one index range: Ongoing ones sort after every timestamp). */
async function openAiIssuesByCluster(now: Date): Promise<Map<string, string[]>> {
  const open = new Map<string, string[]>();
  for (const issue of await listAiIssueSummariesSince(now)) {
    if (issue.status !== 'Ongoing') continue;
    const ids = open.get(issue.cluster_id) ?? [];
    ids.push(issue.issue_id);
    open.set(issue.cluster_id, ids);
  }
  return open;
}

/** A pass stops starting clusters after this long (the recompute Lambda has 300 s); the rest wait for the next pass. */
export const AI_PASS_BUDGET_MS = 150_000;

type PassResult = { clusters: number; regrouped: number; unchanged: number; failed: number; deferred: number };

/** Regroups these clusters; a cluster that fails is logged and left for the next pass, as are those past the time budget. */
export async function regroupAiClusters(clusterIds: Iterable<string>, now = new Date(), budgetMs = AI_PASS_BUDGET_MS): Promise<PassResult> {
  return regroupWithOpen(clusterIds, await openAiIssuesByCluster(now), now, budgetMs);
}

async function regroupWithOpen(clusterIds: Iterable<string>, open: Map<string, string[]>, now: Date, budgetMs: number): Promise<PassResult> {
  const ids = [...new Set(clusterIds)];
  // The day's AI budget as the pass starts (shared/llm/agent-budget.ts): the pass's calls may take the day past it.
  const [clusters, { rules }, { spent }] = await Promise.all([getClusters(ids), loadIssueRules(), agentProvider(now)]);
  const inventory = new Map(clusters.map((c) => [c.cluster_id, c]));
  const result = { clusters: ids.length, regrouped: 0, unchanged: 0, failed: 0, deferred: 0 };
  const stopAt = Date.now() + budgetMs;
  await mapLimit(ids, 4, async (id) => {
    if (Date.now() > stopAt) {
      result.deferred++; // still changed: the next pass picks it up
      return;
    }
    const c = inventory.get(id);
    const names = { cluster_name: c?.cluster_name ?? id, customer_name: c?.customer_name ?? '' };
    try {
      result[await regroupCluster(id, names, open.get(id) ?? [], rules.severity, now, spent)]++;
    } catch (error) {
      if (!(error instanceof ConditionFailed)) log.error('AI grouping of a cluster failed', { cluster_id: id, error: String(error) });
      result.failed++; // a concurrent run recorded first: its grouping stands
    }
  });
  return result;
}

/** The scheduled pass: every cluster with alerts in the window, and every cluster with Ongoing issues (their history settles). */
export async function regroupAiRecent(now = new Date()): Promise<PassResult> {
  const [alerting, open] = await Promise.all([
    listAlertingClustersSince(new Date(now.getTime() - AI_WINDOW_DAYS * 86_400_000), now),
    openAiIssuesByCluster(now),
  ]);
  return regroupWithOpen([...alerting, ...open.keys()], open, now, AI_PASS_BUDGET_MS);
}
