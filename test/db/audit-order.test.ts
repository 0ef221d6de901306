// Concurrent changes of one record, some committing on a retry (the general settings, an issue's triage,
// an AI issue's): the audit log, oldest first, is the record's history. Each entry's `before` is the
// `after` of the one before it, and the newest entry's `after` is what is stored (instantAfter,
// shared/db/audit.ts). Through DynamoDB Local.
import { beforeAll, describe, expect, it } from 'vitest';
import { listAiIssues, updateAiTriage } from '../../shared/ai-issues/queries.js';
import { regroupAiRecent } from '../../shared/ai-issues/regroup.js';
import type { Principal } from '../../shared/auth/principal.js';
import { getAiIssue } from '../../shared/db/ai-issues.js';
import { listAudit } from '../../shared/db/audit.js';
import { getIssue, listClusterIssues } from '../../shared/db/issues.js';
import { currentGeneration } from '../../shared/db/scores.js';
import { getGeneralSettings } from '../../shared/db/settings.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { updateTriage } from '../../shared/issues/triage.js';
import { IssueListQuery } from '../../shared/routes/common.js';
import { updateGeneralSettings } from '../../shared/settings/general.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const SUPER: Principal = { userId: 'u-audit-super', username: 'audit-super', name: 'audit-super', email: 'audit-super@example.com', role: 'superadmin' };
const ADMIN: Principal = { userId: 'u-triage-audit', username: 'triage-audit', name: 'Triage Audit', email: 'triage-audit@example.com', role: 'admin' };
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
    const answer = await updateGeneralSettings(SUPER, { health_scoring_method, alert_criticality_method }, CALLER, stored.revision);
    expect(answer.body).toEqual({ status: 'ok', health_scoring_method, alert_criticality_method });
    // The revision stays, and the answer's ETag still names it.
    expect(answer.headers).toEqual({ ETag: `"r${stored.revision}"` });
    expect((await listAudit('settings_update')).length).toBe(entries);
    expect((await getGeneralSettings()).revision).toBe(stored.revision);
    expect(await currentGeneration()).toBe(generation);
  });
});

describe('one issue triaged at once by many', () => {
  it('is audited in the order the changes were stored, each entry following the last', async () => {
    const now = new Date();
    const c = await storedCluster();
    await ingestAlerts([alertNotice(now, c, 'DiskUsageHigh', 'disk-audit', 30)], now);
    const [issue] = await listClusterIssues(c);
    const id = issue!.issue_id;
    const notes = Array.from({ length: 24 }, (_, i) => `look ${i}`);
    await Promise.all(notes.map((n) => updateTriage(ADMIN, id, { notes: n }, CALLER)));
    const entries = (await listAudit('issue_update')).filter((e) => e.target === id).reverse();
    expect(entries).toHaveLength(24);
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.detail.before, `entry ${i}`).toEqual(entries[i - 1]!.detail.after);
    expect(entries.at(-1)!.detail.after).toEqual({ notes: (await getIssue(id))!.notes });
  });

  it('so is an AI issue', async () => {
    const now = new Date();
    const c = await storedCluster();
    await ingestAlerts([alertNotice(now, c, 'DiskUsageHigh', 'disk-ai-audit', 30)], now);
    await regroupAiRecent(); // no provider configured: grouped by the rules
    const { issues } = await listAiIssues(ADMIN, IssueListQuery.parse({ page_size: '100' }));
    const id = issues.find((i) => i.cluster_id === c)!.issue_id;
    const notes = Array.from({ length: 24 }, (_, i) => `ai look ${i}`);
    await Promise.all(notes.map((n) => updateAiTriage(ADMIN, id, { notes: n }, CALLER)));
    const entries = (await listAudit('issue_update')).filter((e) => e.target === id).reverse();
    expect(entries).toHaveLength(24);
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.detail.before, `entry ${i}`).toEqual(entries[i - 1]!.detail.after);
    expect(entries.at(-1)!.detail.after).toEqual({ notes: (await getAiIssue(id))!.notes });
  });
});
