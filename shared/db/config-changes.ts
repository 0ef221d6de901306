// Rule change proposals (DESIGN §7), in the `rules` table beside the rule set
// versions:
//   pk = CHANGES, sk = <change_id>   the proposal without its YAML; change ids start
//                                    with their UTC time, so the partition lists newest first.
//   pk = CHANGE_TEXT, sk = <change_id>   `proposed_content`, apart: a Query reads whole
//                                    items whatever it projects, so with the text inside
//                                    every listing read every proposal's YAML (up to 64 KB
//                                    each). Proposals stored before hold it inline; read as before.
//   pk = CHANGES_PENDING, sk = <username>   `pending`: the ids of that user's
//                                    pending proposals (a string set); `proposals`: the
//                                    fingerprints of those made since it was kept (proposalFingerprint)
// A proposal is written once as `pending`; a review moves it to `approved` or
// `rejected`, or its proposer's withdrawal to `withdrawn`, with a conditional
// update, so it is closed at most once. Each user
// holds at most PENDING_PER_PROPOSER pending proposals: the set grows in the
// proposal's transaction, under that bound, and shrinks in its review's (or withdrawal's).
import { createHash, randomBytes } from 'node:crypto';
import type { RuleSetName } from '../rules/defaults.js';
import { getItem, queryAll, queryCount, tableName, type TransactItem } from './client.js';
import type { ChangeStatus } from './change-statuses.js';

export type { ChangeStatus } from './change-statuses.js';

export interface ConfigChange {
  change_id: string;
  rule_set: RuleSetName;
  status: ChangeStatus;
  proposed_by: string;
  proposed_at: string;
  /** The rule set version the proposal was written against (0: the shipped default). */
  base_version: number;
  /**
   * Based on version 0: which shipped default (defaultRuleDigest), since a release may ship another
   * before the review. Null otherwise, and for proposals stored before it was recorded.
   */
  base_default_digest: string | null;
  proposed_content: string;
  reviewed_by: string | null;
  reviewed_at: string | null;
  review_note: string | null;
  /** The version the approval created. */
  applied_version: number | null;
}

export type ConfigChangeSummary = Omit<ConfigChange, 'proposed_content' | 'base_default_digest'>;

/** Proposals a listing reads at most (newest first). */
export const CHANGES_READ_LIMIT = 500;
const PK = 'CHANGES';
const SUMMARY_FIELDS = [
  'change_id',
  'rule_set',
  'status',
  'proposed_by',
  'proposed_at',
  'base_version',
  'reviewed_by',
  'reviewed_at',
  'review_note',
  'applied_version',
] as const;

/**
 * Pending proposals one user may have at once. Any role may propose, and a
 * listing reads the newest CHANGES_READ_LIMIT: without a bound, one user's flood
 * of proposals would push everyone else's out of the superadmins' review list.
 */
export const PENDING_PER_PROPOSER = 10;
const pendingKey = (proposer: string) => ({ pk: 'CHANGES_PENDING', sk: proposer });

type Proposal = Pick<ConfigChange, 'change_id' | 'proposed_by' | 'rule_set' | 'base_version' | 'proposed_content'>;

/** What makes two proposals of one proposer the same one: the rule set, the version it was made on and the text. */
const proposalFingerprint = (change: Proposal) =>
  createHash('sha256').update(`${change.rule_set}\n${change.base_version}\n${change.proposed_content}`).digest('base64url');

/**
 * Counts a new proposal against its proposer's pending ones, as a transaction action: it fails when they hold
 * PENDING_PER_PROPOSER, or one of the same text on the same version of the same rule set (its fingerprint), so two
 * of them sent at once (a retry while the first is still under way) make one proposal, not two to approve twice.
 */
export function holdPendingAction(change: Proposal): TransactItem {
  const fingerprint = proposalFingerprint(change);
  return {
    Update: {
      TableName: tableName('rules'),
      Key: pendingKey(change.proposed_by),
      UpdateExpression: 'ADD pending :id, proposals :fp',
      ConditionExpression: '(attribute_not_exists(pending) OR size(pending) < :max) AND NOT contains(proposals, :one)',
      ExpressionAttributeValues: {
        ':id': new Set([change.change_id]),
        ':fp': new Set([fingerprint]),
        ':one': fingerprint,
        ':max': PENDING_PER_PROPOSER,
      },
    },
  };
}

/** Releases a reviewed (or withdrawn) proposal from its proposer's pending ones (a transaction action that cannot fail: one not held changes nothing). */
export function releasePendingAction(change: Proposal): TransactItem {
  return {
    Update: {
      TableName: tableName('rules'),
      Key: pendingKey(change.proposed_by),
      UpdateExpression: 'DELETE pending :id, proposals :fp',
      ExpressionAttributeValues: { ':id': new Set([change.change_id]), ':fp': new Set([proposalFingerprint(change)]) },
    },
  };
}

/** The note a proposal rejected with its proposer's deleted account carries (closeProposalsOfActions). */
export const proposerDeletedNote = (proposer: string) => `Its proposer's account (${proposer}) was deleted.`;

/**
 * A deleted account's pending proposals rejected (by who deleted it), and its pending set gone, as transaction
 * actions: each rejection fails unless its proposal is still pending, and the set's delete unless it holds as many
 * ids as read (`held`, pendingSetOf), so a proposal made meanwhile fails it too. Left pending, they passed to an
 * account invited later under the same email, whose username is the same: it could withdraw them.
 */
export function closeProposalsOfActions(
  proposer: string,
  { held, changes }: { held: number; changes: readonly Pick<ConfigChange, 'change_id'>[] },
  by: string,
  now: Date,
): TransactItem[] {
  const note = proposerDeletedNote(proposer);
  return [
    ...changes.map((c) => reviewChangeAction(c.change_id, { status: 'rejected', by, note, appliedVersion: null }, now)),
    {
      Delete: {
        TableName: tableName('rules'),
        Key: pendingKey(proposer),
        ConditionExpression: held === 0 ? 'attribute_not_exists(pending) OR size(pending) = :none' : 'size(pending) = :held',
        ExpressionAttributeValues: held === 0 ? { ':none': 0 } : { ':held': held },
      },
    },
  ];
}

/** `20261122T043000123Z-9f1c2a7b`: sortable by time, unguessable in its tail. */
export function newChangeId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:.]/g, '')}-${randomBytes(4).toString('hex')}`;
}

const key = (changeId: string) => ({ pk: PK, sk: changeId });
const textKey = (changeId: string) => ({ pk: 'CHANGE_TEXT', sk: changeId });

function summaryOf(item: Record<string, unknown>): ConfigChangeSummary {
  return {
    change_id: String(item.change_id),
    rule_set: item.rule_set as RuleSetName,
    status: item.status as ChangeStatus,
    proposed_by: String(item.proposed_by),
    proposed_at: String(item.proposed_at),
    base_version: Number(item.base_version),
    reviewed_by: (item.reviewed_by as string | null | undefined) ?? null,
    reviewed_at: (item.reviewed_at as string | null | undefined) ?? null,
    review_note: (item.review_note as string | null | undefined) ?? null,
    applied_version: item.applied_version == null ? null : Number(item.applied_version),
  };
}

/** The proposal as transaction actions (with its audit entry, say): its record and its text; they fail if the id exists. */
export function newChangeActions(change: ConfigChange): TransactItem[] {
  const { proposed_content, ...record } = change;
  return [
    { Put: { TableName: tableName('rules'), Item: { ...key(change.change_id), ...record }, ConditionExpression: 'attribute_not_exists(pk)' } },
    { Put: { TableName: tableName('rules'), Item: { ...textKey(change.change_id), proposed_content }, ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
}

export async function getChange(changeId: string): Promise<ConfigChange | undefined> {
  const [item, text] = await Promise.all([getItem('rules', key(changeId), true), getItem('rules', textKey(changeId), true)]);
  if (!item) return undefined;
  return {
    ...summaryOf(item),
    base_default_digest: typeof item.base_default_digest === 'string' ? item.base_default_digest : null,
    // Stored before the text had an item of its own: inline.
    proposed_content: String(text?.proposed_content ?? item.proposed_content ?? ''),
  };
}

/** `proposer`'s pending proposals, whole (at most PENDING_PER_PROPOSER: their ids are one item). */
export async function pendingChangesOf(proposer: string): Promise<ConfigChange[]> {
  return (await pendingSetOf(proposer)).changes;
}

/** `proposer`'s pending proposals and how many ids their set held as read (closeProposalsOfActions' condition). */
export async function pendingSetOf(proposer: string): Promise<{ held: number; changes: ConfigChange[] }> {
  const item = await getItem('rules', pendingKey(proposer), true);
  const ids = item?.pending instanceof Set ? [...(item.pending as Set<string>)] : [];
  const changes = await Promise.all(ids.map(getChange));
  return { held: ids.length, changes: changes.filter((c): c is ConfigChange => c?.status === 'pending') };
}

type ChangeFilter = { status?: ChangeStatus; proposedBy?: string };

/** The partition's query, newest first, narrowed to one status and one proposer when asked. */
function changesQuery(filter: ChangeFilter) {
  const conditions: string[] = [];
  const values: Record<string, unknown> = { ':pk': PK };
  const names: Record<string, string> = {};
  if (filter.status) {
    conditions.push('#status = :status');
    values[':status'] = filter.status;
    names['#status'] = 'status';
  }
  if (filter.proposedBy) {
    conditions.push('proposed_by = :by');
    values[':by'] = filter.proposedBy;
  }
  return {
    KeyConditionExpression: 'pk = :pk',
    ...(conditions.length ? { FilterExpression: conditions.join(' AND ') } : {}),
    ExpressionAttributeValues: values,
    // DynamoDB refuses a name the expressions do not use.
    ...(filter.status ? { ExpressionAttributeNames: names } : {}),
    ScanIndexForward: false,
  };
}

/** Newest first, without the YAML, at most CHANGES_READ_LIMIT; optionally one status and one proposer. */
export async function listChanges(filter: ChangeFilter): Promise<ConfigChangeSummary[]> {
  const query = changesQuery(filter);
  const items = await queryAll(
    'rules',
    {
      ...query,
      ExpressionAttributeNames: { ...query.ExpressionAttributeNames, ...Object.fromEntries(SUMMARY_FIELDS.map((f) => [`#${f}`, f])) },
      ProjectionExpression: SUMMARY_FIELDS.map((f) => `#${f}`).join(', '),
    },
    CHANGES_READ_LIMIT,
  );
  return items.map(summaryOf);
}

/** How many proposals the same filter matches, however many: DynamoDB counts them, no item comes back. */
export function countChanges(filter: ChangeFilter): Promise<number> {
  return queryCount('rules', changesQuery(filter));
}

/**
 * Marks a pending proposal reviewed, or withdrawn (`by` its proposer: who closed it, and when, are
 * recorded alike), as a transaction action; its condition fails unless it is still pending.
 */
export function reviewChangeAction(
  changeId: string,
  review: { status: Exclude<ChangeStatus, 'pending'>; by: string; note: string; appliedVersion: number | null },
  now = new Date(),
): TransactItem {
  return {
    Update: {
      TableName: tableName('rules'),
      Key: key(changeId),
      UpdateExpression: 'SET #status = :status, reviewed_by = :by, reviewed_at = :at, review_note = :note, applied_version = :version',
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':status': review.status,
        ':by': review.by,
        ':at': now.toISOString(),
        ':note': review.note,
        ':version': review.appliedVersion,
        ':pending': 'pending',
      },
    },
  };
}
