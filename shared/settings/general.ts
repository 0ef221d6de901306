// General settings (spec §4): which method scores health and judges alert
// criticality, `rules` or `ai`. Superadmin only to change (route table);
// every change is audited with before and after, in the same transaction,
// written only over the revision read (read again and retried when another
// save came between), so each audit entry's "before" is what it replaced.
// The same transaction moves the fleet view's cache generation.
import type { Caller } from '../auth/caller.js';
import { auditAction } from '../db/audit.js';
import { retryOnConflict, transactWrite } from '../db/client.js';
import { generationAction } from '../db/scores.js';
import { getGeneralSettings, saveGeneralSettingsAction, type GeneralSettings } from '../db/settings.js';
import { Forbidden } from '../http/errors.js';
import type { Principal } from '../auth/principal.js';

export async function generalSettings(): Promise<GeneralSettings> {
  const { health_scoring_method, alert_criticality_method } = await getGeneralSettings();
  return { health_scoring_method, alert_criticality_method };
}

export async function updateGeneralSettings(
  principal: Principal,
  settings: GeneralSettings,
  caller: Caller,
  now = new Date(),
): Promise<{ status: 'ok' } & GeneralSettings> {
  if (principal.role !== 'superadmin') throw new Forbidden('Only a superadmin changes general settings.'); // the route table says so too
  await retryOnConflict(async () => {
    const { revision, health_scoring_method, alert_criticality_method } = await getGeneralSettings();
    await transactWrite([
      saveGeneralSettingsAction(settings, principal.username, revision, now),
      auditAction(
        {
          actor: principal.username,
          role: principal.role,
          action: 'settings_update',
          target: 'general',
          detail: { before: { health_scoring_method, alert_criticality_method }, after: settings },
          ip: caller.ip,
          user_agent: caller.userAgent,
        },
        now,
      ),
      // Every container's cached fleet view is dropped by this very write, as by a rule change.
      generationAction(),
    ]);
  });
  return { status: 'ok', ...settings };
}
