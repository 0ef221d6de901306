// Rule-grouped issues repository (table `issues`).
//   pk = ISSUE#<issue_id>, sk = ISSUE
//   gsi1: gsi1pk = ISSUES, gsi1sk = activity key — `~ONGOING#<last_seen>#<id>` while
//         Ongoing (sorts after every timestamp), `<resolved_at>#<id>` once Resolved.
//         "Issues active since T" is one Query: gsi1sk >= T.
//   gsi2: gsi2pk = CLUSTER#<cluster_id>, gsi2sk = `A#` + the activity key (a cluster's history;
//         "its issues active since T" is one Query: gsi2sk >= A#T). Written before that as
//         `<first_seen>#<id>`, a digit first, so below `A`: read whole until rekeyed
//         (listClusterIssuesActiveSince, rekeyClusterIssues).
//   pk = CACHE, sk = GENERATION → the issues' generation marker (`generation`, ADD 1 per change),
//         in no index. Every write of an issue moves it: triage, ticket claims and tickets
//         in the same transaction (transactIssues), grouping once per cluster right after
//         its writes (regroup.ts), a bulk load after loading. Each container's list cache
//         (shared/issues/list-cache.ts) is valid only while it has not moved.
// Grouping owns the grouping fields and writes them conditionally on
// `grouping_version`; triage fields and the ticket are written only by triage,
// and only to a live issue (not superseded).
import type { IssueGrouping } from '../issues/grouping.js';
import { TRIAGE_FIELDS, type IssueView, type TriageFields } from '../issues/schemas.js';
import { Severity } from '../rules/schemas.js';
import {
  batchGet,
  batchPut,
  ConditionFailed,
  generationMarker,
  getItem,
  mapLimit,
  projection,
  putItem,
  queryAll,
  queryTimeIndex,
  tableName,
  setFields,
  transactWrite,
  updateItem,
  type TransactItem,
} from './client.js';
import { itemReader, listOf, nullable, number, oneOf, optional, orElse, string, type Fields } from './items.js';

export { TRIAGE_FIELDS, type TriageFields };

/**
 * A stored issue: the answer's fields (shared/issues/schemas.ts) but the
 * computed `duration_minutes`, and the bookkeeping the answer leaves out.
 */
export type IssueRecord = Omit<IssueView, 'duration_minutes'> &
  IssueGrouping & {
    grouped_at: string;
    grouping_version: number;
    triage_version: number;
    /** Set when a regrouping folded this issue into another (it was triaged, so it is kept). */
    superseded_by: string | null;
    /** A create-ticket call in progress: its token and start. */
    ticket_claim: string | null;
    ticket_claimed_at: string | null;
  };

const PK = (id: string) => ({ pk: `ISSUE#${id}`, sk: 'ISSUE' });
const ACTIVITY_PARTITION = 'ISSUES';

export const activityKey = (i: Pick<IssueGrouping, 'status' | 'last_seen' | 'resolved_at' | 'issue_id'>) =>
  i.status === 'Ongoing' ? `~ONGOING#${i.last_seen}#${i.issue_id}` : `${i.resolved_at ?? i.last_seen}#${i.issue_id}`;

/** What lists filter, sort, count and offer as options on: an issue without its texts and bookkeeping. */
export const SUMMARY_FIELDS = [
  'issue_id',
  'issue_name',
  'severity',
  'status',
  'cluster_id',
  'cluster_name',
  'customer_name',
  'first_seen',
  'last_seen',
  'resolved_at',
  'triage_status',
  'disposition_status',
  'assignee',
  'superseded_by',
  'alert_count',
] as const;
export type IssueSummary = Pick<IssueRecord, (typeof SUMMARY_FIELDS)[number]>;

/** Triage fields read as empty, versions as 0 and claims as null where an item lacks them. */
const blank = orElse(string, '');
const summaryFields: Fields<IssueSummary> = {
  issue_id: string,
  issue_name: string,
  severity: oneOf(Severity.options),
  status: oneOf(['Ongoing', 'Resolved']),
  cluster_id: string,
  cluster_name: string,
  customer_name: string,
  first_seen: string,
  last_seen: string,
  resolved_at: nullable(string),
  triage_status: blank,
  disposition_status: blank,
  assignee: blank,
  superseded_by: nullable(string),
  alert_count: number,
};
const readSummary = itemReader(summaryFields);
const readIssue = itemReader<IssueRecord>({
  ...summaryFields,
  group_key: string,
  alert_count: number,
  alert_names: listOf(string),
  notes: blank,
  ticket_key: blank,
  ticket_url: blank,
  updated_at: string,
  updated_by: string,
  grouped_at: string,
  grouping_version: number,
  triage_version: orElse(number, 0),
  ticket_claim: nullable(string),
  ticket_claimed_at: nullable(string),
  ticket_unconfirmed_at: optional(string),
});

export async function getIssue(issueId: string): Promise<IssueRecord | undefined> {
  const item = await getItem('issues', PK(issueId), true);
  return item ? readIssue(item) : undefined;
}

/** Issues Ongoing, or resolved at or after `since`: newest activity first. Superseded ones are left out. */
export async function listIssuesActiveSince(since: Date): Promise<IssueRecord[]> {
  return (await queryTimeIndex('issues', ACTIVITY_PARTITION, { since })).map(readIssue).filter((i) => !i.superseded_by);
}

/**
 * listIssuesActiveSince reading only the summary fields: a window of
 * thousands of issues is a fraction of the bytes, and full records are then
 * fetched for one page (getIssues).
 */
export async function listIssueSummariesSince(since: Date): Promise<IssueSummary[]> {
  return (await listIssueSummaryWindow(since)).summaries;
}

/** A window's summaries, newest activity first, with each one's activity key (gsi1sk), descending. */
export interface SummaryWindow<S> {
  summaries: S[];
  activity: string[];
}
export type IssueSummaryWindow = SummaryWindow<IssueSummary>;

/**
 * The summaries (`fields`, read by `read`) of `table`'s issues active since `since`, from its activity
 * index, superseded ones left out, each with its activity key: the summaries of any later start are a
 * prefix of these (those whose key is ≥ the start), so a window read once serves the same window a
 * little later (list-cache.ts). Rule issues here, AI issues in ai-issues.ts.
 */
export async function readSummaryWindow<S extends { superseded_by?: string | null }>(
  table: 'issues' | 'ai-issues',
  partition: string,
  fields: readonly string[],
  read: (item: Record<string, unknown>) => S,
  since: Date,
): Promise<SummaryWindow<S>> {
  const items = await queryTimeIndex(table, partition, { since }, [...fields, 'gsi1sk']);
  const window: SummaryWindow<S> = { summaries: [], activity: [] };
  for (const item of items) {
    const summary = read(item);
    if (summary.superseded_by) continue;
    window.summaries.push(summary);
    window.activity.push(String(item.gsi1sk));
  }
  return window;
}

/** listIssueSummariesSince with each summary's activity key (readSummaryWindow). */
export const listIssueSummaryWindow = (since: Date): Promise<IssueSummaryWindow> =>
  readSummaryWindow('issues', ACTIVITY_PARTITION, SUMMARY_FIELDS, readSummary, since);

const marker = generationMarker('issues');

/** The issues' generation marker, read strongly consistent: it has moved for every issue write acknowledged before. */
export const currentIssuesGeneration = marker.current;

/** Writes these actions and moves the marker, all or nothing (transactWrite's conflicts and errors; the marker is the last action). */
export async function transactIssues(actions: TransactItem[]): Promise<void> {
  await transactWrite([...actions, marker.action()]);
}

/** Moves the marker after issue writes made outside a transaction with it (bulk loads). */
export async function issuesChanged(): Promise<void> {
  await marker.bump();
}

/** Runs issue writes made outside a transaction with the marker (a grouping), and moves it after them (generationMarker). */
export const afterIssueWrites = marker.afterWrites;

/** Full records of these issues, in the order asked. */
export async function getIssues(issueIds: string[]): Promise<IssueRecord[]> {
  const found = new Map((await batchGet('issues', issueIds.map(PK))).map((item) => [String(item.issue_id), readIssue(item)]));
  return issueIds.flatMap((id) => found.get(id) ?? []);
}

/** A Query of the by-cluster index (gsi2): the cluster's issues, or those whose sort key is `op` `bound`. */
const byCluster = (clusterId: string, op?: '>=' | '<', bound?: string) => ({
  IndexName: 'gsi2',
  KeyConditionExpression: op ? `gsi2pk = :pk AND gsi2sk ${op} :bound` : 'gsi2pk = :pk',
  ExpressionAttributeValues: { ':pk': `CLUSTER#${clusterId}`, ...(op && { ':bound': bound }) },
});

/**
 * A cluster's issues as summaries (superseded ones included), in no order: what its history
 * counts and orders. The issues table keeps every issue a cluster ever had, each with its
 * alert names and notes (up to 10 KB); the history shows 50 (getIssues).
 */
export async function listClusterIssueSummaries(clusterId: string): Promise<IssueSummary[]> {
  const items = await queryAll('issues', { ...byCluster(clusterId), ...projection(SUMMARY_FIELDS) });
  return items.map(readSummary);
}

/**
 * Gives every issue of a cluster (its whole history) the names the inventory now has for it, after a rename or a move
 * to another customer: the lists filter and search by those names, and grouping renames only the issues it regroups
 * (a cluster's recent ones). The caller has written the inventory first. Each changed issue is one update that moves
 * `grouping_version`, so a grouping that read it before fails its condition and reads again, and a grouping reads the
 * cluster's names after its issues (regroup.ts): neither writes the old names back. Then the marker moves. Answers how
 * many changed. Two renames at once may leave the older names on old issues (each sets its own); the next rename or
 * grouping of them sets the inventory's.
 */
export async function renameClusterIssues(clusterId: string, names: { cluster_name: string; customer_name: string }): Promise<number> {
  const stale = (await listClusterIssueSummaries(clusterId)).filter((i) => i.cluster_name !== names.cluster_name || i.customer_name !== names.customer_name);
  if (stale.length === 0) return 0;
  try {
    await mapLimit(stale, 8, async (issue) => {
      try {
        await updateItem('issues', PK(issue.issue_id), {
          // An item written before versions were kept reads as version 0 (readIssue), so it starts from there.
          UpdateExpression: 'SET cluster_name = :cluster, customer_name = :customer, grouping_version = if_not_exists(grouping_version, :zero) + :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':cluster': names.cluster_name, ':customer': names.customer_name, ':zero': 0, ':one': 1 },
          ReturnValues: 'NONE',
        });
      } catch (error) {
        if (!(error instanceof ConditionFailed)) throw error; // gone meanwhile: nothing to rename
      }
    });
  } finally {
    await marker.bump(); // also after a failure half-way: what was renamed shows
  }
  return stale.length;
}

/** Every issue of a cluster, oldest first (superseded ones included): what tests compare grouping's reads with. */
export async function listClusterIssues(clusterId: string): Promise<IssueRecord[]> {
  const items = await queryAll('issues', byCluster(clusterId));
  const started = (i: IssueRecord) => `${i.first_seen}#${i.issue_id}`;
  return items.map(readIssue).sort((a, b) => (started(a) < started(b) ? -1 : started(a) > started(b) ? 1 : 0));
}

/** gsi2's sort keys start with this; keys of the earlier layout (`<first_seen>#<id>`) start with a digit, below it. */
const CLUSTER_ACTIVITY = 'A#';
const clusterActivityKey = (i: Parameters<typeof activityKey>[0]) => `${CLUSTER_ACTIVITY}${activityKey(i)}`;

/**
 * A cluster's issues that were active at or after `since`: Ongoing, or resolved then or later,
 * superseded ones included, in no order; and, as `legacy`, every issue of the cluster still keyed
 * the earlier way (`<first_seen>#<id>`, which says nothing of its activity), read whole as
 * before until rekeyClusterIssues moves it. A cluster keeps every issue it ever had (there is
 * no retention), and a regrouping on every ingest needs only those that may still take alerts.
 */
export async function listClusterIssuesActiveSince(clusterId: string, since: Date): Promise<{ active: IssueRecord[]; legacy: IssueRecord[] }> {
  const [active, legacy] = await Promise.all([
    queryAll('issues', byCluster(clusterId, '>=', `${CLUSTER_ACTIVITY}${since.toISOString()}`)),
    queryAll('issues', byCluster(clusterId, '<', CLUSTER_ACTIVITY)),
  ]);
  return { active: active.map(readIssue), legacy: legacy.map(readIssue) };
}

/**
 * A cluster's Ongoing issues that are not superseded, most recently seen first, at most `limit`: read by the
 * Ongoing keys' range of gsi2 (`A#~ONGOING#…`), not every issue the cluster ever had; issues still keyed the
 * earlier way are read whole, as listClusterIssuesActiveSince reads them.
 */
export async function listClusterOngoingIssues(clusterId: string, limit: number): Promise<IssueRecord[]> {
  const ongoing = byCluster(clusterId, '>=', `${CLUSTER_ACTIVITY}${activityKey({ status: 'Ongoing', last_seen: '', resolved_at: null, issue_id: '' })}`);
  const [current, legacy] = await Promise.all([
    queryAll(
      'issues',
      {
        ...ongoing,
        FilterExpression: 'attribute_not_exists(superseded_by) OR superseded_by = :none',
        ExpressionAttributeValues: { ...ongoing.ExpressionAttributeValues, ':none': null },
        ScanIndexForward: false,
      },
      limit,
    ),
    queryAll('issues', byCluster(clusterId, '<', CLUSTER_ACTIVITY)),
  ]);
  const live = [...current, ...legacy].map(readIssue).filter((i) => i.status === 'Ongoing' && !i.superseded_by);
  return live.sort((a, b) => (a.last_seen < b.last_seen ? 1 : a.last_seen > b.last_seen ? -1 : 0)).slice(0, limit);
}

/** The cluster's issue with the latest activity (any issue when some are still keyed the earlier way): what names it. */
export async function latestClusterIssue(clusterId: string): Promise<IssueRecord | undefined> {
  const [item] = await queryAll('issues', { ...byCluster(clusterId), ScanIndexForward: false }, 1);
  return item ? readIssue(item) : undefined;
}

/**
 * Moves issues keyed the earlier way to the activity key, each only while it still is (a grouping
 * write meanwhile has already moved it). Moves no other field, so no marker moves: lists read gsi1.
 */
export async function rekeyClusterIssues(issues: readonly IssueRecord[]): Promise<void> {
  await mapLimit(issues, 8, async (issue) => {
    try {
      await updateItem('issues', PK(issue.issue_id), {
        UpdateExpression: 'SET gsi2sk = :key',
        ConditionExpression: 'gsi2sk < :layout',
        ReturnValues: 'NONE',
        ExpressionAttributeValues: { ':key': clusterActivityKey(issue), ':layout': CLUSTER_ACTIVITY },
      });
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
    }
  });
}

/** The index keys of an issue: by activity (gsi1) and by cluster (gsi2). */
const indexKeys = (g: IssueGrouping) => ({
  gsi1pk: ACTIVITY_PARTITION,
  gsi1sk: activityKey(g),
  gsi2pk: `CLUSTER#${g.cluster_id}`,
  gsi2sk: clusterActivityKey(g),
});

/**
 * Writes an issue's grouping fields, creating it with empty triage fields when
 * new. Conditional on the grouping version read (ConditionFailed when another
 * grouping run wrote it meanwhile). The caller moves the marker (afterIssueWrites)
 * once its run's writes are done.
 */
export async function writeGrouping(
  grouping: IssueGrouping,
  names: { cluster_name: string; customer_name: string },
  seenVersion: number | null,
  now = new Date(),
): Promise<void> {
  const fields: Record<string, unknown> = { ...grouping, ...names, grouped_at: now.toISOString(), superseded_by: null, ...indexKeys(grouping) };
  const keys = Object.keys(fields);
  const created = [...TRIAGE_FIELDS, 'updated_at', 'updated_by'];
  await updateItem('issues', PK(grouping.issue_id), {
    UpdateExpression:
      `SET ${keys.map((_, i) => `#g${i} = :g${i}`).join(', ')}, ` +
      `${created.map((_field, i) => `#t${i} = if_not_exists(#t${i}, :empty)`).join(', ')}, ` +
      'triage_version = if_not_exists(triage_version, :zero), grouping_version = :next',
    ConditionExpression: seenVersion === null ? 'attribute_not_exists(pk)' : 'grouping_version = :seen',
    ExpressionAttributeNames: {
      ...Object.fromEntries(keys.map((n, i) => [`#g${i}`, n])),
      ...Object.fromEntries(created.map((n, i) => [`#t${i}`, n])),
    },
    ExpressionAttributeValues: {
      ...Object.fromEntries(keys.map((n, i) => [`:g${i}`, fields[n]])),
      ':empty': '',
      ':zero': 0,
      ':next': (seenVersion ?? 0) + 1,
      ...(seenVersion === null ? {} : { ':seen': seenVersion }),
    },
  });
}

/** What the scheduled grouping pass last applied: the issue rules version of its last full pass. */
export async function getGroupingState(): Promise<{ rules_version: number; at: string } | undefined> {
  const item = await getItem('issues', { pk: 'GROUPING', sk: 'STATE' }, true);
  return item ? { rules_version: Number(item.rules_version), at: String(item.at) } : undefined;
}

export async function putGroupingState(rulesVersion: number, now = new Date()): Promise<void> {
  await putItem('issues', { pk: 'GROUPING', sk: 'STATE', rules_version: rulesVersion, at: now.toISOString() });
}

/** Bulk load of complete issues (history backfill, benchmarks): replaces what is stored under their ids. */
export async function putIssues(issues: IssueRecord[]): Promise<void> {
  const chunks: IssueRecord[][] = [];
  for (let i = 0; i < issues.length; i += 500) chunks.push(issues.slice(i, i + 500));
  await mapLimit(chunks, 8, (chunk) =>
    batchPut(
      'issues',
      chunk.map((issue) => ({ ...PK(issue.issue_id), ...issue, ...indexKeys(issue) })),
    ),
  );
  await issuesChanged();
}

/** superseded_by of an issue whose alerts no longer form any issue (the grouping keys changed). */
export const NO_SUCCESSOR = 'regrouped';

/** Superseded issues followed to the live one: a successor can be superseded in turn. */
const SUCCESSOR_HOPS = 5;

/**
 * The live issue (rule or AI, read by `get`) holding a superseded one's alerts: the issue itself when
 * live; none when regrouping named none, or the chain ends nowhere (a successor deleted, too many hops).
 */
export async function liveSuccessor<T extends { superseded_by?: string | null }>(
  issue: T,
  get: (id: string) => Promise<T | undefined>,
): Promise<T | undefined> {
  let at: T | undefined = issue;
  for (let hop = 0; at && hop <= SUCCESSOR_HOPS; hop++) {
    if (!at.superseded_by) return at;
    if (at.superseded_by === NO_SUCCESSOR) return undefined;
    at = await get(at.superseded_by);
  }
  return undefined;
}

/**
 * `triage_version` equals `value` (the name of a value holding `seen`): an item stored before
 * triage_version existed reads as 0 (IssueRecord), and its writes must take it as 0 as well.
 */
const triagedAs = (seen: number, value: string) =>
  seen === 0 ? `(triage_version = ${value} OR attribute_not_exists(triage_version))` : `triage_version = ${value}`;

/**
 * A triaged issue that regrouping folded into another: kept, resolved, pointing at its successor (or NO_SUCCESSOR).
 * Only as triaged as the pass read it (the pass ranked it by that: a PATCH meanwhile can make it the one to keep),
 * else ConditionFailed and the pass reads again. The caller moves the marker.
 * One that records a create without a definite answer (a ticket may exist) passes that on to its successor in the
 * same write: the superseded issue is out of every list, and a create on the successor would open a second ticket.
 */
export async function markSuperseded(issue: IssueRecord, by: string, now = new Date()): Promise<void> {
  const resolvedAt = issue.resolved_at ?? now.toISOString();
  const supersede = supersedeUpdate(issue, by, resolvedAt, now);
  if (by === NO_SUCCESSOR || !issue.ticket_unconfirmed_at || issue.ticket_key) {
    await updateItem('issues', PK(issue.issue_id), supersede);
    return;
  }
  await transactWrite([
    { Update: { TableName: tableName('issues'), Key: PK(issue.issue_id), ...supersede } },
    // Harmless on a successor with a ticket (not shown, not asked): this write must not fail for it.
    unconfirmedMarkAction(by, issue.ticket_unconfirmed_at, 'attribute_exists(pk)'),
  ]);
}

/**
 * Records on issue `issueId` that a create of a ticket for an issue it replaced got no definite answer (at `at`,
 * kept if it records one of its own already): a create there is then refused without again=true.
 */
function unconfirmedMarkAction(issueId: string, at: string, condition: string, values: Record<string, unknown> = {}): TransactItem {
  return {
    Update: {
      TableName: tableName('issues'),
      Key: PK(issueId),
      UpdateExpression: 'SET ticket_unconfirmed_at = if_not_exists(ticket_unconfirmed_at, :at), triage_version = if_not_exists(triage_version, :zero) + :one',
      ConditionExpression: condition,
      ExpressionAttributeValues: { ':at': at, ':zero': 0, ':one': 1, ...values },
    },
  };
}

function supersedeUpdate(issue: IssueRecord, by: string, resolvedAt: string, now: Date) {
  return {
    UpdateExpression:
      'SET superseded_by = :by, #status = :resolved, resolved_at = :at, gsi1sk = :key, gsi2sk = :clusterKey, grouped_at = :now, grouping_version = :next',
    ConditionExpression: `grouping_version = :seen AND ${triagedAs(issue.triage_version, ':triaged')}`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':by': by,
      ':resolved': 'Resolved',
      ':at': resolvedAt,
      ':now': now.toISOString(),
      ':key': activityKey({ ...issue, status: 'Resolved', resolved_at: resolvedAt }),
      ':clusterKey': clusterActivityKey({ ...issue, status: 'Resolved', resolved_at: resolvedAt }),
      ':next': issue.grouping_version + 1,
      ':seen': issue.grouping_version,
      ':triaged': issue.triage_version,
    },
  };
}

/** Removes an untriaged issue that regrouping no longer produces (its alerts now form another). The caller moves the marker. */
export function deleteGroupingAction(issue: IssueRecord): TransactItem {
  return {
    Delete: {
      TableName: tableName('issues'),
      Key: PK(issue.issue_id),
      // Never one somebody triaged or is creating a ticket for meanwhile.
      ConditionExpression: `grouping_version = :seen AND ${triagedAs(0, ':zero')} AND (attribute_not_exists(ticket_claim) OR ticket_claim = :none)`,
      ExpressionAttributeValues: { ':seen': issue.grouping_version, ':zero': 0, ':none': null },
    },
  };
}

/**
 * Triage, claims and tickets are written only to a live issue: one regrouping superseded (markSuperseded) is
 * out of every list, so what landed on it would be lost to view. Values: `:none` = null.
 */
const LIVE = '(attribute_not_exists(superseded_by) OR superseded_by = :none)';

/** Sets triage fields of a live issue, conditional on the triage version read; for a transaction with its audit entry (transactIssues). */
export function triageAction(issueId: string, changes: Partial<TriageFields>, seenVersion: number, actor: string, now = new Date()): TransactItem {
  const set = setFields({ ...changes, updated_at: now.toISOString(), updated_by: actor });
  // A ticket linked settles whether one was made by a create that got no answer, or by one that lapsed (its claim).
  const settles = typeof changes.ticket_key === 'string' && changes.ticket_key !== '';
  return {
    Update: {
      TableName: tableName('issues'),
      Key: PK(issueId),
      UpdateExpression: `${set.set}, triage_version = :next${settles ? ' REMOVE ticket_unconfirmed_at, ticket_claim, ticket_claimed_at' : ''}`,
      ConditionExpression: `attribute_exists(pk) AND ${triagedAs(seenVersion, ':seen')} AND ${LIVE}`,
      ExpressionAttributeNames: set.names,
      ExpressionAttributeValues: { ...set.values, ':next': seenVersion + 1, ':seen': seenVersion, ':none': null },
    },
  };
}

/**
 * Claims the right to create the issue's ticket: only when it is live and has none, no claim holds, and no earlier
 * create may have made one (none got no definite answer). With `again` (another ticket asked for on purpose), a
 * create that may have made one stands aside, and so does a claim older than `staleBefore`: that create died
 * after its request may have gone, so it counts as one that may have made a ticket, taken over only on purpose.
 * ConditionFailed otherwise. With the marker, like every issue write (lists show no claim today; they may).
 */
export async function claimTicket(issueId: string, token: string, staleBefore: Date, now = new Date(), again = false): Promise<void> {
  const free = again
    ? '(attribute_not_exists(ticket_claim) OR ticket_claim = :none OR ticket_claimed_at < :stale)'
    : '(attribute_not_exists(ticket_claim) OR ticket_claim = :none) AND attribute_not_exists(ticket_unconfirmed_at)';
  await transactIssues([
    {
      Update: {
        TableName: tableName('issues'),
        Key: PK(issueId),
        UpdateExpression: 'SET ticket_claim = :token, ticket_claimed_at = :now',
        ConditionExpression: `attribute_exists(pk) AND ${LIVE} AND (attribute_not_exists(ticket_key) OR ticket_key = :empty) AND ${free}`,
        ExpressionAttributeValues: {
          ':token': token,
          ':now': now.toISOString(),
          ':empty': '',
          ':none': null,
          ...(again ? { ':stale': staleBefore.toISOString() } : {}),
        },
      },
    },
  ]);
}

/** Gives a claim up (the provider failed): the issue is as it was. */
export async function releaseTicketClaim(issueId: string, token: string): Promise<void> {
  await transactIssues([releaseClaimAction(issueId, token)]);
}

/**
 * Gives a claim up whose create got no definite answer (a timeout, a 5xx): the issue records when, so every
 * reader (and the next create) knows a ticket may exist. Counted as triage (its version moves), so regrouping
 * keeps the issue, whose id the ticket's label carries.
 */
export async function markTicketUnconfirmed(issueId: string, token: string, now = new Date()): Promise<void> {
  await transactIssues([
    {
      Update: {
        TableName: tableName('issues'),
        Key: PK(issueId),
        UpdateExpression:
          'SET ticket_unconfirmed_at = :now, triage_version = if_not_exists(triage_version, :zero) + :one REMOVE ticket_claim, ticket_claimed_at',
        ConditionExpression: 'ticket_claim = :token',
        ExpressionAttributeValues: { ':token': token, ':now': now.toISOString(), ':zero': 0, ':one': 1 },
      },
    },
  ]);
}

/**
 * Records on a live issue that a create for an issue it replaced (regrouping merged the claimed one into it while the
 * tracker was asked) got no definite answer: a create there is then refused without again=true, as on the claimed one.
 */
export async function markSuccessorUnconfirmed(issueId: string, now = new Date()): Promise<void> {
  await transactIssues([
    unconfirmedMarkAction(issueId, now.toISOString(), `attribute_exists(pk) AND ${LIVE} AND (attribute_not_exists(ticket_key) OR ticket_key = :empty)`, {
      ':none': null,
      ':empty': '',
    }),
  ]);
}

/** Gives a claim up, as a transaction action: with the ticket stored on the issue that replaced the claimed one. */
export function releaseClaimAction(issueId: string, token: string): TransactItem {
  return {
    Update: {
      TableName: tableName('issues'),
      Key: PK(issueId),
      UpdateExpression: 'REMOVE ticket_claim, ticket_claimed_at',
      ConditionExpression: 'ticket_claim = :token',
      ExpressionAttributeValues: { ':token': token },
    },
  };
}

/**
 * Stores the created ticket on a live issue, as a transaction action (with its audit entry; transactIssues),
 * over the ticket URL read (`seenUrl`), which the audit entry records as "before". `token`: under our claim on
 * this issue, which it gives up; null on the issue that replaced the claimed one (regrouping superseded that
 * meanwhile), whose own claim, if any, is another call's and stays.
 */
export function storeTicketAction(
  issueId: string,
  token: string | null,
  ticket: { key: string; url: string },
  actor: string,
  seenUrl: string,
  now = new Date(),
): TransactItem {
  const set = 'SET ticket_key = :key, ticket_url = :url, updated_at = :now, updated_by = :by, triage_version = if_not_exists(triage_version, :zero) + :one';
  return {
    Update: {
      TableName: tableName('issues'),
      Key: PK(issueId),
      UpdateExpression: token === null ? `${set} REMOVE ticket_unconfirmed_at` : `${set} REMOVE ticket_claim, ticket_claimed_at, ticket_unconfirmed_at`,
      // Only if nobody linked a ticket or changed its URL by PATCH meanwhile.
      ConditionExpression:
        `${token === null ? 'attribute_exists(pk)' : 'ticket_claim = :token'} AND ${LIVE} AND ` +
        `(attribute_not_exists(ticket_key) OR ticket_key = :empty) AND (ticket_url = :seen${seenUrl ? '' : ' OR attribute_not_exists(ticket_url)'})`,
      ExpressionAttributeValues: {
        ':key': ticket.key,
        ':url': ticket.url,
        ':now': now.toISOString(),
        ':by': actor,
        ':one': 1,
        ':zero': 0,
        ':empty': '',
        ':none': null,
        ':seen': seenUrl,
        ...(token === null ? {} : { ':token': token }),
      },
    },
  };
}
