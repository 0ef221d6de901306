// Races between regrouping and the issue's other writers, made to happen on the wire: the proxy
// holds one side's write until the other side has run. A ticket created or a triage saved while
// regrouping supersedes the issue, and a regrouping that lost a race to a later pass and retries.
import { beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.LOG_LEVEL = 'warn'; // read when the loggers are made, at import: the contention test reads its warning
});

import type { Principal } from '../../shared/auth/principal.js';
import { getIssue, listClusterIssues, listIssuesActiveSince, markSuperseded, NO_SUCCESSOR } from '../../shared/db/issues.js';
import { getCurrentRuleSet, writeRuleSetVersion } from '../../shared/db/rules.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { BadGateway, Conflict } from '../../shared/http/errors.js';
import { regroupClusters } from '../../shared/issues/regroup.js';
import { createTicket, updateTriage } from '../../shared/issues/triage.js';
import { checkRuleText } from '../../shared/rules/check.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { type DynamoProxy, type WireRequest, whileHeld } from '../support/dynamo-proxy.js';
import { captureLogLines } from '../support/log-lines.js';
import { useTestTables } from '../support/dynamo.js';
import { useFakeJiraTickets } from '../support/fake-jira.js';

const NOW = new Date();
const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000).toISOString();
const admin: Principal = { userId: 'u-racer', username: 'racer', name: 'Racer', email: 'racer@example.com', role: 'admin' };
const caller = { ip: '127.0.0.1', userAgent: 'vitest' };
const jira = useFakeJiraTickets();

let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

const notice = (clusterId: string, name: string, fingerprint: string, startedAgo: number, endedAgo: number | null = null) =>
  alertNotice(NOW, clusterId, name, fingerprint, startedAgo, endedAgo);

const transactionOf = (action: string, issueId: string) => (r: WireRequest) =>
  r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes(action) && JSON.stringify(r.input).includes(issueId);

/**
 * Two issues of one alert in a cluster: `older` (10 to 9:50 hours ago, triaged) and `newer` (an hour
 * ago), more than the 4-hour join window apart. `bridge` ingests the alert between them, which merges
 * them: the triaged `older` keeps its id, `newer` is superseded by it (kept, for its claim or triage).
 */
async function twoIssues() {
  const c = await storedCluster();
  await ingestAlerts([notice(c, 'Lag', 'lag-old', 600, 590), notice(c, 'Lag', 'lag-new', 60, 50)], NOW);
  const [older, newer] = (await listClusterIssues(c)).sort((a, b) => (a.first_seen < b.first_seen ? -1 : 1));
  expect(newer).toBeDefined();
  await updateTriage(admin, older!.issue_id, { notes: 'watching' }, caller, NOW);
  const bridge = () => ingestAlerts([notice(c, 'Lag', 'lag-bridge', 400, 250)], NOW);
  return { c, older: older!.issue_id, newer: newer!.issue_id, bridge };
}

async function useIssueRules(text: string) {
  const checked = checkRuleText('issue-rules', text);
  if (!checked.ok) throw new Error(checked.message);
  await writeRuleSetVersion('issue-rules', text, checked.value, (await getCurrentRuleSet('issue-rules'))?.version ?? 0, 'test');
}

/** A create on `issueId` is refused as "a ticket may exist", and asks the tracker nothing. */
async function expectTicketMayExist(issueId: string) {
  const sent = jira().received.length;
  const next = await createTicket(admin, issueId, caller, NOW).catch((e: unknown) => e);
  expect((next as Conflict).extra).toMatchObject({ ticket_may_exist: true });
  expect(jira().received.length).toBe(sent);
}

describe('a ticket created while regrouping supersedes its issue', () => {
  it('is stored on the issue that replaced it, where the user sees it; a create on the superseded issue is refused', async () => {
    const { older, newer, bridge } = await twoIssues();
    const race = whileHeld(proxy, transactionOf('ticket_create', newer), bridge);
    const answer = await createTicket(admin, newer, caller, NOW);
    expect(await race.done()).toMatchObject({ issues: { updated: 1 } });

    expect(answer).toMatchObject({ status: 'created', ticket_key: expect.stringMatching(/^OPS-\d+$/) });
    expect(await getIssue(newer)).toMatchObject({ superseded_by: older, ticket_key: '', ticket_claim: null });
    expect(await getIssue(older)).toMatchObject({ superseded_by: null, ticket_key: answer.ticket_key, ticket_url: answer.ticket_url, notes: 'watching' });
    const live = (await listIssuesActiveSince(new Date(NOW.getTime() - 86_400_000))).find((i) => i.issue_id === older);
    expect(live?.ticket_key).toBe(answer.ticket_key);

    // Asked again of the superseded issue (a page open since): refused before any ticket is made.
    const sent = jira().received.length;
    const again = await createTicket(admin, newer, caller, NOW).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(Conflict);
    expect((again as Conflict).extra).toMatchObject({ superseded_by: older });
    expect(jira().received.length).toBe(sent);
  });

  it('a create without a definite answer (the tracker failed after the request went out) tells the issue that replaced it too', async () => {
    const { older, newer, bridge } = await twoIssues();
    jira().mode = 'error500';
    // The claimed issue is marked "a ticket may exist" only once regrouping has merged it into the older one.
    const race = whileHeld(proxy, transactionOf('SET ticket_unconfirmed_at', newer), bridge);
    let answer: unknown;
    try {
      answer = await createTicket(admin, newer, caller, NOW).catch((e: unknown) => e);
    } finally {
      jira().mode = 'ok';
    }
    await race.done();
    expect(answer).toBeInstanceOf(BadGateway);
    expect((answer as BadGateway).extra).toMatchObject({ ticket_may_exist: true, ticket_label: `fleet-health-${newer}`, superseded_by: older });
    expect((answer as BadGateway).message).toContain(`link it to issue ${older}, which replaced this one meanwhile`);
    expect(await getIssue(newer)).toMatchObject({ superseded_by: older, ticket_unconfirmed_at: NOW.toISOString() });
    expect(await getIssue(older)).toMatchObject({ superseded_by: null, ticket_key: '', ticket_unconfirmed_at: NOW.toISOString(), notes: 'watching' });
    // Where the next create is asked for, it hears that a ticket may exist rather than open a second one.
    await expectTicketMayExist(older);
  });

  it('an issue recording a create without a definite answer, merged later, passes that on to the issue that replaced it', async () => {
    const { older, newer, bridge } = await twoIssues();
    jira().mode = 'error500';
    try {
      expect(await createTicket(admin, newer, caller, NOW).catch((e: unknown) => e)).toBeInstanceOf(BadGateway);
    } finally {
      jira().mode = 'ok';
    }
    expect(await getIssue(newer)).toMatchObject({ superseded_by: null, ticket_unconfirmed_at: NOW.toISOString() });
    expect((await getIssue(older))?.ticket_unconfirmed_at).toBeUndefined();
    await bridge(); // minutes later: regrouping merges it into the older one
    expect(await getIssue(newer)).toMatchObject({ superseded_by: older });
    expect(await getIssue(older)).toMatchObject({ superseded_by: null, ticket_unconfirmed_at: NOW.toISOString(), notes: 'watching' });
    await expectTicketMayExist(older);
  });

  it('when the issue that replaced it has a ticket already: a 409 names the new ticket and that one, and nothing is overwritten', async () => {
    const { older, newer, bridge } = await twoIssues();
    await updateTriage(admin, older, { ticket_key: 'OPS-LINKED', ticket_url: 'https://jira.example.com/browse/OPS-LINKED' }, caller, NOW);
    const race = whileHeld(proxy, transactionOf('ticket_create', newer), bridge);
    const answer = await createTicket(admin, newer, caller, NOW).catch((e: unknown) => e);
    await race.done();
    expect(answer).toBeInstanceOf(Conflict);
    const { extra, message } = answer as Conflict;
    expect(extra).toMatchObject({ ticket_key: expect.stringMatching(/^OPS-\d+$/), superseded_by: older });
    expect(message).toContain('OPS-LINKED');
    expect(await getIssue(older)).toMatchObject({ ticket_key: 'OPS-LINKED' });
    expect(await getIssue(newer)).toMatchObject({ ticket_key: '', ticket_claim: null });
  });

  it('when the grouping keys changed meanwhile: the ticket lands on the issue, which goes on under the new keys', async () => {
    const c = await storedCluster();
    await ingestAlerts([notice(c, 'Lag', 'lag-1', 60, null)], NOW);
    const [issue] = await listClusterIssues(c);
    const race = whileHeld(proxy, transactionOf('ticket_create', issue!.issue_id), async () => {
      await useIssueRules(defaultRuleText('issue-rules').replace('keys: [cluster, alert_name]', 'keys: [cluster]'));
      return regroupClusters([c], NOW);
    });
    try {
      const answer = await createTicket(admin, issue!.issue_id, caller, NOW);
      expect(await race.done()).toMatchObject({ created: 0, updated: 1, removed: 0, failed: 0 });
      expect(answer).toMatchObject({ ticket_key: expect.stringMatching(/^OPS-\d+$/) });
      expect(await getIssue(issue!.issue_id)).toMatchObject({
        superseded_by: null,
        group_key: `cluster=${c}`,
        ticket_key: answer.ticket_key,
        ticket_claim: null,
      });
    } finally {
      await useIssueRules(defaultRuleText('issue-rules'));
    }
  });

  it('when no issue holds its alerts any more: a 409 names the ticket to link or close', async () => {
    const c = await storedCluster();
    await ingestAlerts([notice(c, 'Lag', 'lag-2', 60, null)], NOW);
    const [issue] = await listClusterIssues(c);
    // What a pass writes for an issue none of whose alerts any produced issue holds.
    const race = whileHeld(proxy, transactionOf('ticket_create', issue!.issue_id), async () =>
      markSuperseded((await getIssue(issue!.issue_id))!, NO_SUCCESSOR, NOW),
    );
    const answer = await createTicket(admin, issue!.issue_id, caller, NOW).catch((e: unknown) => e);
    await race.done();
    expect(answer).toBeInstanceOf(Conflict);
    expect((answer as Conflict).extra).toMatchObject({ ticket_key: expect.stringMatching(/^OPS-\d+$/) });
    expect((answer as Conflict).extra).not.toHaveProperty('superseded_by'); // no live issue to name
    expect((answer as Conflict).message).toMatch(/^Ticket OPS-\d+ was created, but .*regroup.*: link it with PATCH or close it\.$/);
    expect(await getIssue(issue!.issue_id)).toMatchObject({ superseded_by: NO_SUCCESSOR, ticket_key: '', ticket_claim: null });
  });
});

describe('a triage saved while regrouping supersedes its issue', () => {
  it('is refused with a 409 naming the issue that replaced it, and changes nothing', async () => {
    const { older, newer, bridge } = await twoIssues();
    await updateTriage(admin, newer, { notes: 'first look' }, caller, NOW); // triaged too: kept when superseded
    const race = whileHeld(proxy, transactionOf('issue_update', newer), bridge);
    const answer = await updateTriage(admin, newer, { notes: 'second look', triage_status: 'Investigating' }, caller, NOW).catch((e: unknown) => e);
    await race.done();
    expect(answer).toBeInstanceOf(Conflict);
    expect((answer as Conflict).extra).toMatchObject({ superseded_by: older });
    expect(await getIssue(newer)).toMatchObject({ superseded_by: older, notes: 'first look', triage_status: '' });
    // And refused likewise once it is superseded.
    await expect(updateTriage(admin, newer, { notes: 'third look' }, caller, NOW)).rejects.toBeInstanceOf(Conflict);
    expect((await getIssue(newer))!.notes).toBe('first look');
  });
});

describe('a regrouping that lost a race and retries', () => {
  it('never moves an issue back to Ongoing that a later pass resolved', async () => {
    const c = await storedCluster();
    await ingestAlerts([notice(c, 'Flap', 'flap-1', 60)], NOW);
    const [issue] = await listClusterIssues(c);
    expect(issue).toMatchObject({ status: 'Ongoing', alert_count: 1 });
    // The alert resolved 10 minutes ago and a second one came and went: as of NOW still Ongoing (the
    // quiet period is 30 minutes), 25 minutes later Resolved. The ingest's own grouping (as of NOW) is
    // held until a pass 25 minutes later has resolved the issue: its write then conflicts, and it retries.
    const later = new Date(NOW.getTime() + 25 * 60_000);
    const isGroupingWrite = (r: WireRequest) =>
      r.operation === 'UpdateItem' && r.input.ConditionExpression === 'grouping_version = :seen' && r.input.Key?.pk?.S === `ISSUE#${issue!.issue_id}`;
    const race = whileHeld(proxy, isGroupingWrite, () => regroupClusters([c], later));
    const ingested = await ingestAlerts([notice(c, 'Flap', 'flap-1', 60, 10), notice(c, 'Flap', 'flap-2', 40, 20)], NOW);
    expect(await race.done()).toMatchObject({ updated: 1, failed: 0 });
    expect(ingested.rejected).toEqual([]);
    const resolved = { status: 'Resolved', resolved_at: ago(10), alert_count: 2 };
    expect(await getIssue(issue!.issue_id)).toMatchObject(resolved);
    // A pass that started before the resolving one read it (or whose clock lags) leaves it as it is.
    expect(await regroupClusters([c], NOW)).toMatchObject({ updated: 0, unchanged: 1, failed: 0 });
    expect(await getIssue(issue!.issue_id)).toMatchObject(resolved);
  });
});

describe('a regrouping that loses every attempt to concurrent regroupings', () => {
  it('is counted failed and logged as contention (a warning naming the next pass), not as an error', async () => {
    const c = await storedCluster();
    await ingestAlerts([notice(c, 'Storm', 'storm-1', 30, 25)], NOW); // ended within the quiet period: Ongoing now
    const [issue] = await listClusterIssues(c);
    const later = new Date(NOW.getTime() + 60 * 60_000); // resolved by then: the pass writes
    let lost = 0;
    const stop = proxy.watch((r) =>
      r.operation === 'UpdateItem' && r.input.Key?.pk?.S === `ISSUE#${issue!.issue_id}` && ++lost
        ? { type: 'ConditionalCheckFailedException', message: 'The conditional request failed' }
        : undefined,
    );
    const logs = captureLogLines();
    const result = await regroupClusters([c], later).finally(stop);
    const lines = logs.stop().filter((l) => l.cluster_id === c);
    expect(result).toMatchObject({ failed: 1 });
    expect(lost).toBeGreaterThan(1); // retried before giving up
    expect(lines.filter((l) => l.level === 'ERROR' || l.level === 'error')).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ message: expect.stringContaining('lost to concurrent regroupings'), attempts: 4 }));
  });
});
