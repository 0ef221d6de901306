// Reading and triaging AI issues (spec §4 AI issues): the same list parameters
// and shapes as rule issues (shared/issues/queries.ts), source `ai`, KPIs with
// total_alerts, alerts resolved from the linked ids, PATCH with `me`. Lists and
// KPIs read through this container's cache behind the AI issues' generation
// marker, as rule issues do (shared/issues/list-cache.ts).
import type { Caller } from '../auth/caller.js';
import { auditAction, instantAfter } from '../db/audit.js';
import { getClusterAlerts } from '../db/alerts.js';
import { retryOnConflict, transactWrite } from '../db/client.js';
import {
  aiIssuesMarkerAction,
  aiTriageAction,
  currentAiIssuesGeneration,
  getAiIssue,
  listAiIssueSummaryWindow,
  listedAiIssues,
  type AiIssueRecord,
  type AiIssueShown,
} from '../db/ai-issues.js';
import { liveSuccessor } from '../db/issues.js';
import { Conflict, NotFound } from '../http/errors.js';
import type { Principal } from '../auth/principal.js';
import { issueListCache } from '../issues/list-cache.js';
import { ALERTS_SHOWN, durationMinutes, kpiCounts, listPage, shownAlerts, timelineEntry, windowStart } from '../issues/queries.js';
import { activeUsernames, assigneeMatch, resolveAssignee } from '../issues/assignee.js';
import { staleTriage, withTriageEtag } from '../issues/triage-etag.js';
import type { IssueListQuery } from '../routes/common.js';
import type { AiIssueView } from './schemas.js';

export const SOURCE = 'ai' as const;

export function aiIssueView(i: AiIssueShown, now: Date): AiIssueView {
  return {
    issue_id: i.issue_id,
    issue_name: i.issue_name,
    severity: i.severity,
    status: i.status,
    cluster_id: i.cluster_id,
    cluster_name: i.cluster_name,
    customer_name: i.customer_name,
    alert_count: i.alert_count,
    first_seen: i.first_seen,
    last_seen: i.last_seen,
    resolved_at: i.resolved_at,
    duration_minutes: durationMinutes(i, now),
    triage_status: i.triage_status,
    disposition_status: i.disposition_status,
    assignee: i.assignee,
    notes: i.notes,
    ticket_key: '',
    ticket_url: '',
    ai_reasoning: i.ai_reasoning,
    ai_summary: i.ai_summary,
    grouped_by: i.grouped_by,
    updated_at: i.updated_at,
    updated_by: i.updated_by,
  };
}

const cache = issueListCache({ table: 'ai-issues', generation: currentAiIssuesGeneration, window: listAiIssueSummaryWindow, records: listedAiIssues });

/** For tests: forget this container's cache of AI issues, as a new container would start. */
export const dropAiIssueListCache = cache.drop;

/** The window read as summaries (no alert keys, no texts); what the page shows is read for its issues only. */
export async function listAiIssues(principal: Pick<Principal, 'username'>, q: IssueListQuery, now = new Date()) {
  const [window, assigned] = await Promise.all([cache.window(q.days, windowStart(q.days, now)), assigneeMatch(q.assignee, principal)]);
  return { ...(await listPage(window, q, (i) => aiIssueView(i, now), { assigned, now })), source: SOURCE };
}

export async function aiIssueKpis(days: number, now = new Date()) {
  const [window, active] = await Promise.all([cache.window(days, windowStart(days, now)), activeUsernames()]);
  const issues = window.summaries;
  return { ...kpiCounts(issues, now, active), total_alerts: issues.reduce((n, i) => n + i.alert_count, 0), source: SOURCE };
}

async function requireAiIssue(id: string): Promise<AiIssueRecord> {
  const issue = await getAiIssue(id);
  if (!issue) throw new NotFound(`No AI issue ${id}.`);
  return issue;
}

/**
 * The issue with its alerts, resolved from the linked alert keys, newest first: the newest
 * ALERTS_SHOWN of the (up to 500) linked, within the answer's weight, as a rule issue's detail.
 */
export async function aiIssueDetail(id: string, now = new Date()) {
  const issue = await requireAiIssue(id);
  // A key starts with the alert's start time (ISO, fixed width): the greatest are the newest.
  const newest = [...new Set(issue.alert_keys)].sort().reverse().slice(0, ALERTS_SHOWN);
  const alerts = await getClusterAlerts(issue.cluster_id, newest);
  const answer = {
    issue: aiIssueView(issue, now),
    ...shownAlerts(alerts.map(timelineEntry), issue.alert_count),
    cluster_info: null,
    source: SOURCE,
  };
  // The triage version a PATCH may name as If-Match (shared/issues/triage-etag.ts).
  return withTriageEtag(answer, issue.triage_version);
}

/** 409 for triage of an AI issue regrouping retired: names the live AI issue now holding its alerts (`superseded_by`). */
async function regrouped(issue: AiIssueRecord): Promise<Conflict> {
  const live = await liveSuccessor(issue, getAiIssue);
  // No live AI issue to name: no `superseded_by` to follow.
  if (!live) return new Conflict(`AI issue ${issue.issue_id} was regrouped: its alerts now form other issues.`);
  return new Conflict(`AI issue ${issue.issue_id} was regrouped into ${live.issue_id}: triage that one.`, { superseded_by: live.issue_id });
}

/**
 * PATCH: the assignee resolved as for alert issues (shared/issues/triage.ts). Audited with before and after.
 * Only a live issue: one regrouping retired is out of every list (409 naming the live one). `expected`: the
 * triage version the change was made on (If-Match), as for alert issues (updateTriage).
 */
export async function updateAiTriage(
  principal: Principal,
  id: string,
  patch: Record<string, string | undefined>,
  caller: Caller,
  now?: Date,
  expected?: number,
) {
  const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Record<string, string>;
  if (changes.assignee !== undefined) changes.assignee = await resolveAssignee(principal, changes.assignee);
  return retryOnConflict(async () => {
    const issue = await requireAiIssue(id);
    // Stamped after the change it read (a test's fixed `now` aside), so the audit lists changes in order.
    const at = now ?? instantAfter(issue.updated_at);
    // Also when regrouping retired it meanwhile: aiTriageAction holds only on a live issue, and this try reads afresh.
    if (issue.superseded_by) throw await regrouped(issue);
    const fields = Object.keys(changes).filter((f) => issue[f as keyof AiIssueRecord] !== changes[f]);
    // Stored already (a retried save, or the same change by someone else): succeeded, not stale (shared/issues/triage.ts).
    if (!fields.length) return withTriageEtag(TRIAGED, issue.triage_version);
    if (expected !== undefined && issue.triage_version !== expected) throw staleTriage('AI issue', issue);
    const before = Object.fromEntries(fields.map((f) => [f, issue[f as keyof AiIssueRecord]]));
    const after = Object.fromEntries(fields.map((f) => [f, changes[f]]));
    await transactWrite([
      aiTriageAction(id, after as Record<string, string>, issue.triage_version, principal.username, at),
      aiIssuesMarkerAction(),
      auditAction(
        {
          actor: principal.username,
          role: principal.role,
          action: 'issue_update',
          target: id,
          detail: { source: SOURCE, before, after },
          ip: caller.ip,
          user_agent: caller.userAgent,
        },
        at,
      ),
    ]);
    return withTriageEtag(TRIAGED, issue.triage_version + 1);
  });
}

/** PATCH's answer (with the ETag of the triage it left). */
const TRIAGED = { status: 'ok' } as const;
