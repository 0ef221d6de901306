// General settings (spec §4 settings): one item in the `rules` table,
//   pk = SETTINGS, sk = GENERAL → { health_scoring_method, alert_criticality_method, updated_at, updated_by }
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
}

export const DEFAULT_GENERAL_SETTINGS: GeneralSettings = { health_scoring_method: 'rules', alert_criticality_method: 'rules' };

const KEY = { pk: 'SETTINGS', sk: 'GENERAL' };

export async function getGeneralSettings(): Promise<StoredGeneralSettings> {
  const item = await getItem('rules', KEY, true);
  if (!item) return { ...DEFAULT_GENERAL_SETTINGS, updated_at: null, updated_by: null };
  return {
    health_scoring_method: item.health_scoring_method as ScoringMethod,
    alert_criticality_method: item.alert_criticality_method as ScoringMethod,
    updated_at: String(item.updated_at),
    updated_by: String(item.updated_by),
  };
}

/** Saving the settings as a transaction action (written with its audit entry). */
export function saveGeneralSettingsAction(settings: GeneralSettings, actor: string, now = new Date()): TransactItem {
  return { Put: { TableName: tableName('rules'), Item: { ...KEY, ...settings, updated_at: now.toISOString(), updated_by: actor } } };
}
