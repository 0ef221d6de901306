// General settings (spec §4 settings): one item in the `rules` table,
//   pk = SETTINGS, sk = GENERAL → { health_scoring_method, alert_criticality_method, updated_at, updated_by, revision }
// Absent until a superadmin first saves them; the defaults apply until then.
import { getItem, tableName, type TransactItem } from './client.js';

export type ScoringMethod = 'rules' | 'ai';

export interface GeneralSettings {
  health_scoring_method: ScoringMethod;
  alert_criticality_method: ScoringMethod;
}

export interface StoredGeneralSettings extends GeneralSettings {
  updated_at: string | null;
  updated_by: string | null;
  /** Counts the saves (0 before the first, and for a record saved before it was counted): a save is conditioned on it. */
  revision: number;
}

export const DEFAULT_GENERAL_SETTINGS: GeneralSettings = { health_scoring_method: 'rules', alert_criticality_method: 'rules' };

const KEY = { pk: 'SETTINGS', sk: 'GENERAL' };

export async function getGeneralSettings(): Promise<StoredGeneralSettings> {
  const item = await getItem('rules', KEY, true);
  if (!item) return { ...DEFAULT_GENERAL_SETTINGS, updated_at: null, updated_by: null, revision: 0 };
  return {
    health_scoring_method: item.health_scoring_method as ScoringMethod,
    alert_criticality_method: item.alert_criticality_method as ScoringMethod,
    updated_at: String(item.updated_at),
    updated_by: String(item.updated_by),
    revision: typeof item.revision === 'number' ? item.revision : 0,
  };
}

/**
 * Saving the settings as a transaction action (written with its audit entry), only over the
 * revision `read` (ConditionFailed when another save came between): the audit's "before" is
 * then what this save replaced.
 */
export function saveGeneralSettingsAction(settings: GeneralSettings, actor: string, read: number, now = new Date()): TransactItem {
  return {
    Put: {
      TableName: tableName('rules'),
      Item: { ...KEY, ...settings, updated_at: now.toISOString(), updated_by: actor, revision: read + 1 },
      // Never saved, or saved before saves were counted: no revision yet.
      ConditionExpression: read === 0 ? 'attribute_not_exists(#revision)' : '#revision = :read',
      ExpressionAttributeNames: { '#revision': 'revision' },
      ...(read === 0 ? {} : { ExpressionAttributeValues: { ':read': read } }),
    },
  };
}
