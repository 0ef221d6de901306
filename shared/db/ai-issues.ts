// AI-grouped issues repository (table `ai-issues`).
//   pk = AIISSUE#<id>, sk = ISSUE; gsi1: gsi1pk = AIISSUES, gsi1sk = activity key
//        (as for rule issues: Ongoing ones sort after every timestamp)
//   pk = AISTATE#<cluster_id>, sk = STATE → { fingerprint, issue_ids, version }: what the
//        last grouping of the cluster saw and produced (the debounce, and what to replace)
//   pk = CACHE, sk = GENERATION → the AI issues' generation marker (as the rule issues' one):
//        moved by every triage (in its transaction) and after a regrouping that wrote; the list
//        cache (shared/ai-issues/queries.ts) is valid only while it has not moved.
// Grouping writes the grouping fields; triage fields are written only by PATCH, and only to a
// live issue (not superseded). Grouping retires an issue only as triaged as it read it.
import type { AiIssueView } from '../ai-issues/schemas.js';
import { Severity } from '../rules/schemas.js';
import {
  batchGet,
  ConditionFailed,
  deleteItem,
  generationMarker,
  getItem,
  putItem,
  queryTimeIndex,
  tableName,
  setFields,
  updateItem,
  type TransactItem,
} from './client.js';
import { activityKey, NO_SUCCESSOR, readSummaryWindow, SUMMARY_FIELDS, type SummaryWindow } from './issues.js';
import { itemReader, listOf, nullable, number, oneOf, optional, orElse, pickFields, string, type Fields } from './items.js';

/** superseded_by of an AI issue whose alerts no one produced issue holds: the rule issues' value, which the console knows. */
export { NO_SUCCESSOR };

const TRIAGE = ['triage_status', 'disposition_status', 'assignee', 'notes', 'updated_at', 'updated_by'] as const;

/**
 * A stored AI issue: the answer's fields (shared/ai-issues/schemas.ts) but the
 * computed `duration_minutes` and the ticket fields (AI issues have none), and
 * what the answer leaves out.
 */
export type AiIssueRecord = Omit<AiIssueView, 'duration_minutes' | 'ticket_key' | 'ticket_url'> & {
  /** `<starts_at>#<fingerprint>` of each linked alert (the alert's key). */
  alert_keys: string[];
  /** Set on a triaged issue whose alerts now belong to another (kept as history, out of lists). */
  superseded_by?: string | null;
  triage_version: number;
};

/** What AI grouping writes: the record without its triage fields. */
export type AiGrouping = Omit<AiIssueRecord, (typeof TRIAGE)[number] | 'triage_version'>;

/**
 * What the list's filters, sort, counts and options and the KPIs read of every AI issue of a
 * window: a rule issue's summary and its alert count; no `alert_keys` (up to 500, tens of KB)
 * and no texts. The window may hold thousands.
 */
const SUMMARY_KEYS = SUMMARY_FIELDS satisfies readonly (keyof AiIssueRecord)[];
export type AiIssueSummary = Pick<AiIssueRecord, (typeof SUMMARY_KEYS)[number]>;

/** What a list shows of an AI issue (shared/ai-issues/queries.ts aiIssueView): all but its alert keys and version. */
export type AiIssueShown = Omit<AiIssueRecord, 'alert_keys' | 'triage_version'>;

const key = (id: string) => ({ pk: `AIISSUE#${id}`, sk: 'ISSUE' });
const stateKey = (clusterId: string) => ({ pk: `AISTATE#${clusterId}`, sk: 'STATE' });
const ACTIVITY_PARTITION = 'AIISSUES';

/** Triage fields read as empty and the version as 0 where an item lacks them. */
const blank = orElse(string, '');
const recordFields: Fields<AiIssueRecord> = {
  issue_id: string,
  issue_name: string,
  severity: oneOf(Severity.options),
  status: oneOf(['Ongoing', 'Resolved']),
  cluster_id: string,
  cluster_name: string,
  customer_name: string,
  alert_count: number,
  first_seen: string,
  last_seen: string,
  resolved_at: nullable(string),
  triage_status: blank,
  disposition_status: blank,
  assignee: blank,
  superseded_by: optional(nullable(string)),
  ai_reasoning: string,
  ai_summary: string,
  grouped_by: string,
  notes: blank,
  updated_at: blank,
  updated_by: blank,
  alert_keys: listOf(string),
  triage_version: orElse(number, 0),
};
const readSummary = itemReader(pickFields(recordFields, SUMMARY_KEYS));
const { alert_keys: _keys, triage_version: _version, ...shownFields } = recordFields;
const SHOWN_FIELDS = Object.keys(shownFields);
const readShown = itemReader<AiIssueShown>(shownFields);
const readIssue = itemReader(recordFields);

export async function getAiIssue(id: string): Promise<AiIssueRecord | undefined> {
  const item = await getItem('ai-issues', key(id), true);
  return item ? readIssue(item) : undefined;
}

export async function getAiIssues(ids: string[]): Promise<AiIssueRecord[]> {
  return (await batchGet('ai-issues', ids.map(key))).map(readIssue);
}

/** Ongoing ones, and those resolved at or after `since`: newest activity first, whole (what the tests compare the summaries against). */
export async function listAiIssuesActiveSince(since: Date): Promise<AiIssueRecord[]> {
  return (await queryTimeIndex('ai-issues', ACTIVITY_PARTITION, { since })).map(readIssue).filter((i) => !i.superseded_by);
}

/** listAiIssuesActiveSince reading only the summary fields (one index range, projected); superseded ones left out. */
export async function listAiIssueSummariesSince(since: Date): Promise<AiIssueSummary[]> {
  return (await listAiIssueSummaryWindow(since)).summaries;
}

/** listAiIssueSummariesSince with each summary's activity key (readSummaryWindow): what the list cache holds. */
export const listAiIssueSummaryWindow = (since: Date): Promise<SummaryWindow<AiIssueSummary>> =>
  readSummaryWindow('ai-issues', ACTIVITY_PARTITION, SUMMARY_KEYS, readSummary, since);

const marker = generationMarker('ai-issues');

/** The AI issues' generation marker, read strongly consistent: it has moved for every AI issue write acknowledged before. */
export const currentAiIssuesGeneration = marker.current;

/** Moves the marker, for a transaction with a triage write. */
export const aiIssuesMarkerAction = marker.action;

/** Moves the marker after AI issue writes made outside a transaction with it (bulk loads). */
export async function aiIssuesChanged(): Promise<void> {
  await marker.bump();
}

/** Runs AI issue writes made outside a transaction with the marker (a regrouping), and moves it after them (generationMarker). */
export const afterAiIssueWrites = marker.afterWrites;

/**
 * What a list page shows of these AI issues, in the order asked, projected to the shown fields
 * (whole items bring up to 500 alert keys each). Those deleted or retired (superseded) since the
 * window was read are left out.
 */
export async function listedAiIssues(ids: readonly string[]): Promise<AiIssueShown[]> {
  const found = new Map((await batchGet('ai-issues', ids.map(key), false, SHOWN_FIELDS)).map((item) => [item.issue_id, readShown(item)]));
  return ids.flatMap((id) => found.get(id) ?? []).filter((i) => !i.superseded_by);
}

/** Writes an issue's grouping fields; its triage fields are created empty and never touched here. The caller moves the marker after (afterAiIssueWrites). */
export async function writeAiGrouping(g: AiGrouping, now = new Date()): Promise<void> {
  const fields: Record<string, unknown> = { ...g, grouped_at: now.toISOString(), superseded_by: null, gsi1pk: ACTIVITY_PARTITION, gsi1sk: activityKey(g) };
  const names = Object.keys(fields);
  await updateItem('ai-issues', key(g.issue_id), {
    UpdateExpression:
      `SET ${names.map((_, i) => `#g${i} = :g${i}`).join(', ')}, ` +
      `${TRIAGE.map((_, i) => `#t${i} = if_not_exists(#t${i}, :empty)`).join(', ')}, triage_version = if_not_exists(triage_version, :zero)`,
    ExpressionAttributeNames: { ...Object.fromEntries(names.map((n, i) => [`#g${i}`, n])), ...Object.fromEntries(TRIAGE.map((n, i) => [`#t${i}`, n])) },
    ExpressionAttributeValues: { ...Object.fromEntries(names.map((n, i) => [`:g${i}`, fields[n]])), ':empty': '', ':zero': 0 },
    ReturnValues: 'NONE',
  });
}

/**
 * An issue no grouping produces any more: deleted when untriaged; a triaged one
 * is kept as history, Resolved and `superseded_by` its successor, its alerts
 * released (they belong to the successor now) and left out of lists.
 * Either write holds only while the issue is as triaged as the run read it: ConditionFailed when
 * it was triaged meanwhile, and the run matches its groups again (a triaged issue continues one).
 * The caller moves the marker after (afterAiIssueWrites).
 */
export async function retireAiIssue(issue: AiIssueRecord, successor: string, now = new Date()): Promise<void> {
  if (!issue.triage_version) {
    await deleteItem('ai-issues', key(issue.issue_id), {
      ConditionExpression: 'attribute_not_exists(triage_version) OR triage_version = :zero',
      ExpressionAttributeValues: { ':zero': 0 },
    });
    return;
  }
  const resolvedAt = issue.resolved_at ?? now.toISOString();
  await updateItem('ai-issues', key(issue.issue_id), {
    UpdateExpression: 'SET superseded_by = :by, #status = :resolved, resolved_at = :at, alert_keys = :none, alert_count = :zero, gsi1sk = :key',
    ConditionExpression: 'triage_version = :seen',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':by': successor,
      ':resolved': 'Resolved',
      ':at': resolvedAt,
      ':none': [],
      ':zero': 0,
      ':key': activityKey({ ...issue, status: 'Resolved', resolved_at: resolvedAt }),
      ':seen': issue.triage_version,
    },
    ReturnValues: 'NONE',
  });
}

/**
 * An Ongoing issue no grouping holds any more (all its alerts left the window) whose alerts have all
 * ended: Resolved at `resolvedAt`. Only while it is as read (Ongoing, the same alerts seen last): a
 * regrouping that took it up again meanwhile decides its status (ConditionFailed here, and nothing
 * written). The caller moves the marker after (afterAiIssueWrites).
 */
export async function resolveAiHistory(issue: AiIssueRecord, resolvedAt: string): Promise<void> {
  await updateItem('ai-issues', key(issue.issue_id), {
    UpdateExpression: 'SET #status = :resolved, resolved_at = :at, gsi1sk = :key',
    ConditionExpression: '#status = :ongoing AND last_seen = :last AND alert_count = :count',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':resolved': 'Resolved',
      ':ongoing': 'Ongoing',
      ':at': resolvedAt,
      ':last': issue.last_seen,
      ':count': issue.alert_count,
      ':key': activityKey({ ...issue, status: 'Resolved', resolved_at: resolvedAt }),
    },
    ReturnValues: 'NONE',
  });
}

export interface AiGroupingState {
  fingerprint: string;
  method: string;
  issue_ids: string[];
  version: number;
  /**
   * The model was asked and failed (an error, an unusable answer) `model_failures` times in a row, the last
   * at `model_failed_at`: the cluster was grouped by rules, and the model is asked again only after a wait
   * that doubles with each (shared/ai-issues/regroup.ts). Absent once the model grouped it.
   */
  model_failed_at?: string;
  model_failures?: number;
  /** The method that failed (`llm:<model>`): another model configured since is asked at once. */
  model_failed_with?: string;
}

export async function getAiGroupingState(clusterId: string): Promise<AiGroupingState | undefined> {
  const item = await getItem('ai-issues', stateKey(clusterId), true);
  if (!item) return undefined;
  const failures = Number(item.model_failures);
  return {
    fingerprint: String(item.fingerprint),
    method: String(item.method),
    issue_ids: (item.issue_ids as string[]) ?? [],
    version: Number(item.version),
    ...(typeof item.model_failed_at === 'string' && Number.isInteger(failures) && failures > 0
      ? { model_failed_at: item.model_failed_at, model_failures: failures, model_failed_with: String(item.model_failed_with ?? '') }
      : {}),
  };
}

/** The fingerprint of a cluster being regrouped, or whose grouping is in doubt: it matches no alerts, so the next pass regroups it. */
export const NO_FINGERPRINT = '';

/**
 * Records the cluster's grouping, conditional on the state read (ConditionFailed when another run
 * recorded first); answers the version it wrote, which the next write of the same run is conditional on.
 */
export async function putAiGroupingState(clusterId: string, state: Omit<AiGroupingState, 'version'>, seen: number | null): Promise<number> {
  const version = (seen ?? 0) + 1;
  await putItem(
    'ai-issues',
    { ...stateKey(clusterId), ...state, version },
    {
      ConditionExpression: seen === null ? 'attribute_not_exists(pk)' : 'version = :seen',
      ExpressionAttributeValues: seen === null ? undefined : { ':seen': seen },
    },
  );
  return version;
}

/** Makes the next pass regroup the cluster: its state keeps its ids (to retire) but matches no alerts. */
export async function markAiGroupingStale(clusterId: string): Promise<void> {
  await updateItem('ai-issues', stateKey(clusterId), {
    UpdateExpression: 'SET fingerprint = :none',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':none': NO_FINGERPRINT },
  }).catch((error: unknown) => {
    if (!(error instanceof ConditionFailed)) throw error;
  });
}

/**
 * Triage is written only to a live issue: one regrouping retired (retireAiIssue) is out of every list,
 * so what landed on it would be lost to view. Values: `:none` = null.
 */
const LIVE = '(attribute_not_exists(superseded_by) OR superseded_by = :none)';

/** Triage fields of a live issue, conditional on the version read; for a transaction with its audit entry. */
export function aiTriageAction(id: string, changes: Record<string, string>, seenVersion: number, actor: string, now = new Date()): TransactItem {
  const set = setFields({ ...changes, updated_at: now.toISOString(), updated_by: actor });
  return {
    Update: {
      TableName: tableName('ai-issues'),
      Key: key(id),
      UpdateExpression: `${set.set}, triage_version = :next`,
      ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(triage_version) OR triage_version = :seen) AND ${LIVE}`,
      ExpressionAttributeNames: set.names,
      ExpressionAttributeValues: { ...set.values, ':next': seenVersion + 1, ':seen': seenVersion, ':none': null },
    },
  };
}
