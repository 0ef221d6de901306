// Concurrent saves of the general settings, some committing on a retry: the audit log, newest first,
// is the stored history. Each entry's `before` is the `after` of the one before it, and the newest
// entry's `after` is what is stored. Through DynamoDB Local.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { listAudit } from '../../shared/db/audit.js';
import { currentGeneration } from '../../shared/db/scores.js';
import { getGeneralSettings } from '../../shared/db/settings.js';
import { updateGeneralSettings } from '../../shared/settings/general.js';
import { useTestTables } from '../support/dynamo.js';

const SUPER: Principal = { userId: 'u-audit-super', username: 'audit-super', name: 'audit-super', email: 'audit-super@example.com', role: 'superadmin' };
const CALLER = { ip: '127.0.0.1', userAgent: 'vitest' };

beforeAll(async () => {
  await useTestTables();
});

describe('general settings saved at once by many', () => {
  it('are audited in the order they were stored, each entry following the last', async () => {
    const methods = ['rules', 'ai'] as const;
    const saves = Array.from({ length: 12 }, (_, i) => ({
      health_scoring_method: methods[i % 2]!,
      alert_criticality_method: methods[Math.floor(i / 2) % 2]!,
    }));
    await Promise.all(saves.map((s) => updateGeneralSettings(SUPER, s, CALLER)));
    const entries = (await listAudit('settings_update')).filter((e) => e.target === 'general').reverse();
    // A save that found its values stored already (another's, just before) changed nothing and is not listed.
    expect(entries.length).toBeGreaterThan(1);
    expect(entries.length).toBeLessThanOrEqual(12);
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.detail.before, `entry ${i}`).toEqual(entries[i - 1]!.detail.after);
    for (const entry of entries) expect(entry.detail.before).not.toEqual(entry.detail.after);
    const { health_scoring_method, alert_criticality_method } = await getGeneralSettings();
    expect(entries.at(-1)!.detail.after).toEqual({ health_scoring_method, alert_criticality_method });
  });

  it('a save of what is stored already changes nothing: no audit entry, the same revision, the fleet cache kept', async () => {
    const stored = await getGeneralSettings();
    const { health_scoring_method, alert_criticality_method } = stored;
    const entries = (await listAudit('settings_update')).length;
    const generation = await currentGeneration();
    expect(await updateGeneralSettings(SUPER, { health_scoring_method, alert_criticality_method }, CALLER, stored.revision)).toEqual({
      status: 'ok',
      health_scoring_method,
      alert_criticality_method,
    });
    expect((await listAudit('settings_update')).length).toBe(entries);
    expect((await getGeneralSettings()).revision).toBe(stored.revision);
    expect(await currentGeneration()).toBe(generation);
  });
});
