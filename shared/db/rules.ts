// Rule set versions repository: the current version of each rule set and its
// history, in the `rules` table.
//   pk = RULESET#<name>, sk = CURRENT           → { version, content, parsed, updated_at, updated_by, change_id? }
//   pk = RULESET#<name>, sk = VERSION#<000042>  → the same, kept for history (listed by the rule-editing issue)
// A new version is written together with the CURRENT pointer in one
// transaction, conditional on the version it was based on.
import type { RuleSetName } from '../rules/defaults.js';
import { getItem, tableName, transactWrite, type TransactItem } from './client.js';

export interface RuleSetVersion {
  name: RuleSetName;
  version: number;
  content: string;
  /** The content's validated, parsed form (JSON), stored with it so readers never parse YAML. */
  parsed: Record<string, unknown> | null;
  updated_at: string;
  updated_by: string;
  change_id: string | null;
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
  name: RuleSetName, content: string, parsed: Record<string, unknown>, basedOn: number, actor: string, changeId: string | null, now = new Date(),
): TransactItem[] {
  const record = { name, version: basedOn + 1, content, parsed: JSON.stringify(parsed), updated_at: now.toISOString(), updated_by: actor, change_id: changeId };
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

/** Stores a new version (content checked by the caller); ConditionFailed when the rule set moved past `basedOn` meanwhile. */
export async function writeRuleSetVersion(
  name: RuleSetName, content: string, parsed: Record<string, unknown>, basedOn: number, actor: string, changeId: string | null = null,
): Promise<number> {
  await transactWrite(newVersionActions(name, content, parsed, basedOn, actor, changeId));
  return basedOn + 1;
}
