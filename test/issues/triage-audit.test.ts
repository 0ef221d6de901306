// Concurrent triage of one issue (an alert issue, an AI issue), some changes committing on a retry: the audit log, oldest first, is
// the issue's history. Each entry's `before` is the `after` of the one before it, and the newest
// entry's `after` is what the issue holds. Through DynamoDB Local.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { listAiIssues, updateAiTriage } from '../../shared/ai-issues/queries.js';
import { regroupAiRecent } from '../../shared/ai-issues/regroup.js';
import { listAudit } from '../../shared/db/audit.js';
import { getAiIssue } from '../../shared/db/ai-issues.js';
import { getIssue, listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { updateTriage } from '../../shared/issues/triage.js';
import { IssueListQuery } from '../../shared/routes/common.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';

const ADMIN: Principal = { userId: 'u-triage-audit', username: 'triage-audit', name: 'Triage Audit', email: 'triage-audit@example.com', role: 'admin' };
const CALLER = { ip: '127.0.0.1', userAgent: 'vitest' };

beforeAll(async () => {
  await useTestTables();
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
    const { issues } = await listAiIssues(IssueListQuery.parse({ page_size: '100' }));
    const id = issues.find((i) => i.cluster_id === c)!.issue_id;
    const notes = Array.from({ length: 24 }, (_, i) => `ai look ${i}`);
    await Promise.all(notes.map((n) => updateAiTriage(ADMIN, id, { notes: n }, CALLER)));
    const entries = (await listAudit('issue_update')).filter((e) => e.target === id).reverse();
    expect(entries).toHaveLength(24);
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.detail.before, `entry ${i}`).toEqual(entries[i - 1]!.detail.after);
    expect(entries.at(-1)!.detail.after).toEqual({ notes: (await getAiIssue(id))!.notes });
  });
});
