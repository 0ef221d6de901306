// A ticket the provider created whose key DynamoDB then will not store (throttled past the client's
// retries), on DynamoDB Local behind the proxy, against the fake Jira: the answer is the 409 that
// names the ticket to link or close, not a bare 500 that hides it. And a create that may have
// made a ticket without a record of it (a lapsed claim, a record that could not be written)
// is a "ticket may exist" 409 for the next one, not a second ticket.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { ConditionFailed } from '../../shared/db/client.js';
import { claimTicket, deleteGroupingAction, getIssue, listClusterIssues, markTicketUnconfirmed, transactIssues } from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { BadGateway, Conflict, NotFound } from '../../shared/http/errors.js';
import { createTicket, TICKET_CLAIM_SECONDS, updateTriage } from '../../shared/issues/triage.js';
import { alertNotice, storedCluster } from '../support/clusters.js';
import { type DynamoProxy, whileHeld } from '../support/dynamo-proxy.js';
import { useTestTables } from '../support/dynamo.js';
import { useFakeJiraTickets } from '../support/fake-jira.js';

const NOW = new Date();
const admin: Principal = { userId: 'u-ticketer', username: 'ticketer', name: 'Ticketer', email: 'ticketer@example.com', role: 'admin' };
const caller = { ip: '127.0.0.1', userAgent: 'vitest' };
const jira = useFakeJiraTickets();

let proxy: DynamoProxy;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

describe('a created ticket whose key cannot be stored', () => {
  it('answers the 409 naming the ticket, and leaves the issue without a key', async () => {
    const c = await storedCluster();
    await ingestAlerts([alertNotice(NOW, c, 'DiskUsageHigh', 'disk-1', 30)], NOW);
    const [issue] = await listClusterIssues(c);
    let refused = 0;
    const stop = proxy.watch((r) => {
      if (r.operation !== 'TransactWriteItems' || !JSON.stringify(r.input).includes('ticket_create')) return undefined;
      refused++;
      return { type: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' };
    });
    const answer = await createTicket(admin, issue!.issue_id, caller, NOW)
      .catch((e: unknown) => e)
      .finally(stop);
    expect(refused).toBeGreaterThan(1); // the client retried the throttled write before giving up
    expect(answer).toBeInstanceOf(Conflict);
    const { extra, message } = answer as Conflict;
    expect(extra).toMatchObject({ ticket_key: expect.stringMatching(/^OPS-\d+$/), ticket_url: expect.stringContaining('/browse/OPS-') });
    expect(message).toMatch(/^Ticket OPS-\d+ was created, but storing it on the issue failed: link it with PATCH or close it\.$/);
    expect(jira().received.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(await getIssue(issue!.issue_id)).toMatchObject({ ticket_key: '' });
  });
});

describe('an issue regrouping removes while its ticket is asked for', () => {
  it('answers 404 naming the regrouping, not "being created right now", and creates no ticket', async () => {
    const c = await storedCluster();
    await ingestAlerts([alertNotice(NOW, c, 'DiskUsageHigh', 'disk-2', 30)], NOW);
    const [issue] = await listClusterIssues(c);
    const posts = jira().received.filter((r) => r.method === 'POST').length;
    // The claim is held until regrouping's delete of the untriaged issue has landed.
    const held = whileHeld(
      proxy,
      (r) => r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('ticket_claim = :token'),
      () => transactIssues([deleteGroupingAction(issue!)]),
    );
    const answer = await createTicket(admin, issue!.issue_id, caller, NOW).catch((e: unknown) => e);
    await held.done();
    expect(answer).toBeInstanceOf(NotFound);
    expect((answer as NotFound).message).toBe(`No issue ${issue!.issue_id}: regrouping removed it meanwhile. Its alerts are in another issue now.`);
    expect(jira().received.filter((r) => r.method === 'POST')).toHaveLength(posts);
  });
});

describe('a create whose request has used its time before the call', () => {
  it('asks no tracker and leaves no "a ticket may exist" behind: the next create needs no again=true', async () => {
    const c = await storedCluster();
    await ingestAlerts([alertNotice(NOW, c, 'DiskUsageHigh', 'disk-3', 30)], NOW);
    const [issue] = await listClusterIssues(c);
    const posts = jira().received.filter((r) => r.method === 'POST').length;
    // Arrived 24.5 s ago: half a second is left of the 25 within which the tracker must answer.
    const late = await createTicket(admin, issue!.issue_id, caller, NOW, { receivedAt: Date.now() - 24_500 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(BadGateway);
    expect((late as BadGateway).message).toMatch(/^Jira was not asked: .*Nothing was created; you can try again\.$/);
    expect(jira().received.filter((r) => r.method === 'POST')).toHaveLength(posts);
    const after = await getIssue(issue!.issue_id);
    expect(after?.ticket_key).toBe('');
    expect(after?.ticket_unconfirmed_at ?? null).toBeNull();
    const answer = await createTicket(admin, issue!.issue_id, caller, NOW);
    expect(answer.ticket_key).toMatch(/^OPS-\d+$/);
  });
});

describe('a create that may have made a ticket, and left no record of it', () => {
  it('a lapsed claim (its create died after asking the tracker) is a "ticket may exist" 409, taken over only with again=true', async () => {
    const c = await storedCluster();
    await ingestAlerts([alertNotice(NOW, c, 'DiskUsageHigh', 'disk-4', 30)], NOW);
    const [issue] = await listClusterIssues(c);
    const died = new Date(NOW.getTime() - (TICKET_CLAIM_SECONDS + 30) * 1000);
    await claimTicket(issue!.issue_id, 'a-create-that-died', new Date(0), died);
    const posts = jira().received.filter((r) => r.method === 'POST').length;
    const refused = await createTicket(admin, issue!.issue_id, caller, NOW).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Conflict);
    expect((refused as Conflict).extra).toMatchObject({ ticket_may_exist: true, ticket_claimed_at: died.toISOString() });
    expect((refused as Conflict).message).toMatch(/did not finish, and its request may have reached the tracker/);
    expect(jira().received.filter((r) => r.method === 'POST')).toHaveLength(posts);
    const answer = await createTicket(admin, issue!.issue_id, caller, NOW, { again: true });
    expect(answer.ticket_key).toMatch(/^OPS-\d+$/);
  });

  it('a tracker without a definite answer whose record cannot be written keeps its claim, so the next create still hears of it', async () => {
    const c = await storedCluster();
    await ingestAlerts([alertNotice(NOW, c, 'DiskUsageHigh', 'disk-5', 30)], NOW);
    const [issue] = await listClusterIssues(c);
    jira().mode = 'error500';
    const stop = proxy.watch((r) =>
      r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('SET ticket_unconfirmed_at')
        ? { type: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' }
        : undefined,
    );
    try {
      const answer = await createTicket(admin, issue!.issue_id, caller, NOW).catch((e: unknown) => e);
      expect(answer).toBeInstanceOf(BadGateway);
      expect((answer as BadGateway).extra).toMatchObject({ ticket_may_exist: true });
    } finally {
      stop();
      jira().mode = 'ok';
    }
    const kept = await getIssue(issue!.issue_id);
    expect(kept?.ticket_claim).toEqual(expect.any(String));
    // Once it lapses, a create hears that a ticket may exist rather than opening a second one.
    const later = new Date(NOW.getTime() + (TICKET_CLAIM_SECONDS + 1) * 1000);
    const next = await createTicket(admin, issue!.issue_id, caller, later).catch((e: unknown) => e);
    expect((next as Conflict).extra).toMatchObject({ ticket_may_exist: true });
    // The ticket found and linked settles it, the kept claim too: unlinked later, a create needs no again=true.
    await updateTriage(admin, issue!.issue_id, { ticket_key: 'OPS-FOUND', ticket_url: 'https://tracker.example.com/browse/OPS-FOUND' }, caller, later);
    expect((await getIssue(issue!.issue_id))?.ticket_claim ?? null).toBeNull();
    await updateTriage(admin, issue!.issue_id, { ticket_key: '', ticket_url: '' }, caller, later);
    expect((await createTicket(admin, issue!.issue_id, caller, later)).ticket_key).toMatch(/^OPS-\d+$/);
  });

  it('the claim itself refuses an issue that records a create without a definite answer, unless again', async () => {
    const c = await storedCluster();
    await ingestAlerts([alertNotice(NOW, c, 'DiskUsageHigh', 'disk-6', 30)], NOW);
    const [issue] = await listClusterIssues(c);
    await claimTicket(issue!.issue_id, 'unanswered', new Date(0), NOW);
    await markTicketUnconfirmed(issue!.issue_id, 'unanswered', NOW);
    await expect(claimTicket(issue!.issue_id, 'next', new Date(0), NOW)).rejects.toBeInstanceOf(ConditionFailed);
    await claimTicket(issue!.issue_id, 'on-purpose', new Date(0), NOW, true);
    expect((await getIssue(issue!.issue_id))?.ticket_claim).toBe('on-purpose');
  });
});
