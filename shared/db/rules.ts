// Rule set versions repository: the current version of each rule set and its
// history, in the `rules` table.
//   pk = RULESET#<name>, sk = CURRENT           → { version, content, parsed, updated_at, updated_by, change_id? }
//   pk = RULESET#<name>, sk = VERSION#<000042>  → the same, kept for history
// A new version is written together with the CURRENT pointer in one
// transaction, conditional on the version it was based on.
import type { RuleSetName } from '../rules/defaults.js';
import { getItem, queryAll, tableName, transactWrite, type TransactItem } from './client.js';

export interface RuleSetVersion {
  name: RuleSetName;
  version: number;
  content: string;
  /** The content's validated, parsed form (JSON), stored with it so readers never parse YAML. */
  parsed: Record<string, unknown> | null;
  updated_at: string;
  /** Who applied it: the superadmin who wrote it, or who approved the proposal. */
  updated_by: string;
  /** The proposal it came from, and who proposed it; null for a direct write. */
  change_id: string | null;
  proposed_by: string | null;
}

const currentKey = (name: RuleSetName) => ({ pk: `RULESET#${name}`, sk: 'CURRENT' });
function toVersion(name: RuleSetName, item: Record<string, unknown>): RuleSetVersion {
  return {
    name,
    version: Number(item.version),
    content: String(item.content),
    parsed: typeof item.parsed === 'string' ? (JSON.parse(item.parsed) as Record<string, unknown>) : null,
    updated_at: String(item.updated_at),
    updated_by: String(item.updated_by),
    change_id: (item.change_id as string | undefined) ?? null,
    proposed_by: (item.proposed_by as string | undefined) ?? null,
  };
}

const versionKey = (name: RuleSetName, version: number) => ({ pk: `RULESET#${name}`, sk: `VERSION#${String(version).padStart(6, '0')}` });

export async function getCurrentRuleSet(name: RuleSetName): Promise<RuleSetVersion | undefined> {
  const item = await getItem('rules', currentKey(name), true);
  return item ? toVersion(name, item) : undefined;
}

/**
 * The transaction actions that store `content` as version `basedOn + 1`,
 * valid only while the rule set is still at `basedOn` (0: the shipped default).
 * Callers may add actions (e.g. marking a proposal approved) to the same transaction.
 */
export function newVersionActions(
  name: RuleSetName,
  content: string,
  parsed: Record<string, unknown>,
  basedOn: number,
  actor: string,
  from: { change_id: string; proposed_by: string } | null = null,
  now = new Date(),
): TransactItem[] {
  const record = {
    name,
    version: basedOn + 1,
    content,
    parsed: JSON.stringify(parsed),
    updated_at: now.toISOString(),
    updated_by: actor,
    change_id: from?.change_id ?? null,
    proposed_by: from?.proposed_by ?? null,
  };
  return [
    {
      Put: {
        TableName: tableName('rules'),
        Item: { ...currentKey(name), ...record },
        ConditionExpression: basedOn === 0 ? 'attribute_not_exists(pk)' : 'version = :based',
        ExpressionAttributeValues: basedOn === 0 ? undefined : { ':based': basedOn },
      },
    },
    { Put: { TableName: tableName('rules'), Item: { ...versionKey(name, basedOn + 1), ...record }, ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
}

/**
 * A transaction action that holds only while the rule set is at `version`
 * (0: the shipped default, nothing stored): a write that must not apply once
 * the rule set has moved (a proposal made with If-Match or base_version).
 */
export function ruleSetAtVersion(name: RuleSetName, version: number): TransactItem {
  return {
    ConditionCheck: {
      TableName: tableName('rules'),
      Key: currentKey(name),
      ConditionExpression: version === 0 ? 'attribute_not_exists(pk)' : 'version = :based',
      ExpressionAttributeValues: version === 0 ? undefined : { ':based': version },
    },
  };
}

/** Stores a new version (content checked by the caller); ConditionFailed when the rule set moved past `basedOn` meanwhile. */
export async function writeRuleSetVersion(
  name: RuleSetName,
  content: string,
  parsed: Record<string, unknown>,
  basedOn: number,
  actor: string,
): Promise<number> {
  await transactWrite(newVersionActions(name, content, parsed, basedOn, actor));
  return basedOn + 1;
}

/** One applied version (1 and up), or undefined when there is none of that number. */
export async function getRuleSetVersion(name: RuleSetName, version: number): Promise<RuleSetVersion | undefined> {
  const item = await getItem('rules', versionKey(name, version));
  return item ? toVersion(name, item) : undefined;
}

/** Applied versions, newest first, a page at a time (version numbers count down from the current one). */
export async function listRuleSetVersions(name: RuleSetName, page: number, pageSize: number): Promise<{ versions: RuleSetVersion[]; total: number }> {
  const current = await getCurrentRuleSet(name);
  const total = current?.version ?? 0;
  const newest = total - (page - 1) * pageSize;
  if (newest < 1) return { versions: [], total };
  const oldest = Math.max(1, newest - pageSize + 1);
  // A bounded key range; queryAll follows the 1 MB pages large rule texts may need.
  const items = await queryAll('rules', {
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': `RULESET#${name}`, ':from': versionKey(name, oldest).sk, ':to': versionKey(name, newest).sk },
    ScanIndexForward: false,
    ConsistentRead: true,
  });
  return { versions: items.map((item) => toVersion(name, item)), total };
}
