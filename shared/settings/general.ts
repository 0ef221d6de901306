// General settings (spec §4): which method scores health and judges alert
// criticality, `rules` or `ai`. Superadmin only to change (route table);
// every change is audited with before and after, in the same transaction,
// written only over the revision read (read again and retried when another
// save came between), so each audit entry's "before" is what it replaced.
// The same transaction moves the fleet view's cache generation. A save of what is
// stored already changes nothing: no write, no audit entry, no cache dropped.
import type { Caller } from '../auth/caller.js';
import { auditAction, instantAfter } from '../db/audit.js';
import { retryOnConflict, transactWrite } from '../db/client.js';
import { generationAction } from '../db/scores.js';
import { getGeneralSettings, saveGeneralSettingsAction, type GeneralSettings } from '../db/settings.js';
import { Conflict } from '../http/errors.js';
import { generalEtag } from '../http/etags.js';
import { ifMatchNumber } from '../http/if-match.js';
import { Reply } from '../http/route.js';
import { displayTime } from '../text.js';
import type { Principal } from '../auth/principal.js';

/** The revision an If-Match names; undefined without one (or with `*`), a 400 for anything else. */
export const expectedRevision = (ifMatch: string | undefined) => ifMatchNumber(ifMatch, 'r', 'the general settings');

export async function generalSettings() {
  const { health_scoring_method, alert_criticality_method, revision } = await getGeneralSettings();
  return new Reply(200, { health_scoring_method, alert_criticality_method }, { ETag: generalEtag(revision) });
}

/**
 * PUT. `expected`: the revision the change was made on (If-Match): when another save came since, a 409 and
 * nothing changed, so a page loaded before does not put back the other setting's old value. Without it, the
 * body replaces what is stored, as before.
 */
export async function updateGeneralSettings(
  principal: Principal,
  settings: GeneralSettings,
  caller: Caller,
  expected?: number,
): Promise<Reply<{ status: 'ok' } & GeneralSettings>> {
  // The revision stored once this save is done (the one its answer's ETag names).
  const stored = await retryOnConflict(async () => {
    const { revision, health_scoring_method, alert_criticality_method, updated_by, updated_at } = await getGeneralSettings();
    // Each attempt's own instant, after the save it replaces: one that commits on a retry is audited (and ordered) after it.
    const now = instantAfter(updated_at);
    // Nothing to change: nothing written, audited or dropped from every container's cache (as triage does); whatever
    // revision it names, since the save has succeeded (retried after a lost answer, say: RFC 9110 §13.1.1).
    if (settings.health_scoring_method === health_scoring_method && settings.alert_criticality_method === alert_criticality_method) return revision;
    if (expected !== undefined && expected !== revision)
      throw new Conflict(
        `The general settings were changed${updated_by ? ` by ${updated_by}` : ''}${updated_at ? ` at ${displayTime(updated_at)}` : ''} after you read them: nothing was changed. Read them again and make your change on what is stored now.`,
        { current_etag: generalEtag(revision), current: { health_scoring_method, alert_criticality_method } },
      );
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
    return revision + 1;
  });
  return new Reply(200, { status: 'ok' as const, ...settings }, { ETag: generalEtag(stored) });
}
