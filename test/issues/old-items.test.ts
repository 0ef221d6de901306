// Issues stored before `triage_version` existed (read as 0): every write that conditions on the
// triage version takes them as 0 too, so triage, a ticket and regrouping still reach them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { updateItem } from '../../shared/db/client.js';
import { getIssue, listClusterIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { createTicket, updateTriage } from '../../shared/issues/triage.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { useTestTables } from '../support/dynamo.js';
import { startFakeJira, type FakeJira } from '../support/fake-jira.js';

const NOW = new Date();
const admin: Principal = { userId: 'u-old', username: 'old-items', name: 'Old Items', email: 'old@example.com', role: 'admin' };
const caller = { ip: '127.0.0.1', userAgent: 'vitest' };
const TICKET_ENV = { TICKET_PROVIDER: 'jira', TICKET_PROJECT_KEY: 'OPS', TICKET_USER_EMAIL: 'bot@example.com', TICKET_API_TOKEN: 'jira-token' };
let jira: FakeJira;

beforeAll(async () => {
  await useTestTables();
  jira = await startFakeJira({ projectKey: 'OPS', email: 'bot@example.com', apiToken: 'jira-token' });
  Object.assign(process.env, TICKET_ENV, { TICKET_BASE_URL: jira.baseUrl });
});

afterAll(async () => {
  for (const name of [...Object.keys(TICKET_ENV), 'TICKET_BASE_URL']) delete process.env[name];
  await jira?.close();
});

/** A resolved Lag alert of the cluster, from `startedAgo` to `endedAgo` minutes ago. */
const lag = (clusterId: string, fingerprint: string, startedAgo: number, endedAgo: number) =>
  alertNotice(NOW, clusterId, 'Lag', fingerprint, startedAgo, endedAgo);

/** The cluster's issues, oldest first, each stored as before triage_version existed. */
async function oldIssues(clusterId: string) {
  const issues = (await listClusterIssues(clusterId)).sort((a, b) => (a.first_seen < b.first_seen ? -1 : 1));
  for (const issue of issues) await updateItem('issues', { pk: `ISSUE#${issue.issue_id}`, sk: 'ISSUE' }, { UpdateExpression: 'REMOVE triage_version' });
  return issues.map((i) => i.issue_id);
}

describe('an issue stored before triage_version existed', () => {
  it('takes a triage and a ticket', async () => {
    const c = await storedCluster();
    await ingestAlerts([lag(c, 'lag-1', 60, 50)], NOW);
    const [id] = await oldIssues(c);
    const triaged = await updateTriage(admin, id!, { notes: 'seen before the upgrade' }, caller, NOW);
    expect(triaged).toMatchObject({ body: { status: 'updated' }, headers: { ETag: '"t1"' } });
    await updateItem('issues', { pk: `ISSUE#${id}`, sk: 'ISSUE' }, { UpdateExpression: 'REMOVE triage_version' });
    const ticket = await createTicket(admin, id!, caller, NOW);
    expect(ticket).toMatchObject({ status: 'created', ticket_key: expect.stringMatching(/^OPS-\d+$/) });
    expect(await getIssue(id!)).toMatchObject({ notes: 'seen before the upgrade', ticket_key: ticket.ticket_key, triage_version: 1 });
  });

  it('is removed by regrouping when its alerts join another issue', async () => {
    const c = await storedCluster();
    // Two issues of one alert, more than the join window apart; an alert between them merges them.
    await ingestAlerts([lag(c, 'lag-old', 600, 590), lag(c, 'lag-new', 60, 50)], NOW);
    const [older, newer] = await oldIssues(c);
    await ingestAlerts([lag(c, 'lag-bridge', 400, 250)], NOW);
    expect((await listClusterIssues(c)).map((i) => i.issue_id)).toEqual([older]);
    expect(await getIssue(newer!)).toBeUndefined();
  });
});
