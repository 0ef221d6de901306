// Rule proposals and the shipped default, through the settings handler on DynamoDB Local
// (a proxy in front of it counts the requests a listing makes):
// - Version 0 is whatever default the running release ships, so a release can replace it
//   under a proposal made on the previous one. Such a proposal is stale: approving it is a
//   409, as for any proposal whose base is no longer current.
// - A listing reads proposals without their YAML: a Query reads whole items whatever it
//   projects, so with the text inside, every listing read every proposal's text.
// - A proposal sent again while the first is still under way is that one, not a second.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as settings } from '../../functions/settings.js';
import { listAudit } from '../../shared/db/audit.js';
import { putItem } from '../../shared/db/client.js';
import { getCurrentRuleSet } from '../../shared/db/rules.js';
import { getUser, replaceUser } from '../../shared/db/users.js';
import { defaultRuleText, type RuleSetName } from '../../shared/rules/defaults.js';
import { useTestTables } from '../support/dynamo.js';
import { whileHeld, type DynamoProxy } from '../support/dynamo-proxy.js';
import { call, type Handler } from '../support/events.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

let proxy: DynamoProxy;
let superadmin: string;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  useTestJwtSecret();
  superadmin = await userToken('superadmin', 'proposals-super');
});

/** One request to the settings group's handler, as API Gateway sends it. */
function request(token: string, method: string, path: string, routePath: string, options: { body?: unknown; query?: Record<string, string> } = {}) {
  const changeId = /config-changes\/([^/]+)/.exec(path)?.[1];
  return call(settings as Handler, {
    method,
    path,
    routeKey: `${method} ${routePath}`,
    ...(changeId ? { params: { change_id: changeId } } : {}),
    ...(options.query ? { query: options.query } : {}),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
}
const list = (token: string, query?: Record<string, string>) =>
  request(token, 'GET', '/api/settings/config-changes', '/api/settings/config-changes', { query });
const putRules = (token: string, name: RuleSetName, content: string) =>
  request(token, 'PUT', `/api/settings/${name}`, `/api/settings/${name}`, { body: { content } });
const detail = (token: string, id: string) => request(token, 'GET', `/api/settings/config-changes/${id}`, '/api/settings/config-changes/{change_id}');
const review = (id: string, action: 'approve' | 'reject') =>
  request(superadmin, 'POST', `/api/settings/config-changes/${id}/review`, '/api/settings/config-changes/{change_id}/review', { body: { action, note: '' } });

describe('a proposal made on a shipped default that a release has since replaced', () => {
  it('is stale: approving it is a 409 that changes nothing, and it can still be rejected', async () => {
    // Stored by the previous release: based on version 0, which was another default then
    // (its text inline, as proposals stored before the text had an item of its own).
    const id = `20260301T000000000Z-${randomUUID().slice(0, 8)}`;
    const proposed = defaultRuleText('risk-rules').replace(/lookback_days: \d+/, 'lookback_days: 5');
    await putItem('rules', {
      pk: 'CHANGES',
      sk: id,
      change_id: id,
      rule_set: 'risk-rules',
      status: 'pending',
      proposed_by: 'proposals-admin',
      proposed_at: '2026-03-01T00:00:00.000Z',
      base_version: 0,
      base_default_digest: '0123456789abcdef', // the digest of the default it was made on
      proposed_content: proposed,
      reviewed_by: null,
      reviewed_at: null,
      review_note: null,
      applied_version: null,
    });
    expect(await getCurrentRuleSet('risk-rules')).toBeUndefined();
    expect((await detail(superadmin, id)).json).toMatchObject({
      status: 'pending',
      base_version: 0,
      current_version: 0,
      stale: true,
      proposed_content: proposed,
    });
    const audits = (await listAudit('change_approve')).length;

    const approve = await review(id, 'approve');
    expect(approve.statusCode).toBe(409);
    expect(approve.json).toMatchObject({ current_version: 0, base_version: 0 });
    expect(approve.json!.detail).toMatch(/shipped default .*changed.*nothing was changed/);
    expect(await getCurrentRuleSet('risk-rules')).toBeUndefined();
    expect((await listAudit('change_approve')).length).toBe(audits);
    expect((await detail(superadmin, id)).json).toMatchObject({ status: 'pending', applied_version: null });

    expect((await review(id, 'reject')).json).toMatchObject({ status: 'rejected', applied: false });
  });

  it('a proposal made on the default this release ships is not stale and is approved as version 1', async () => {
    const admin = await userToken('admin', `proposals-admin-${randomUUID().slice(0, 6)}`);
    const content = defaultRuleText('issue-rules').replace(/quiet_minutes: \d+/, 'quiet_minutes: 31');
    const proposal = await putRules(admin, 'issue-rules', content);
    expect(proposal.json).toMatchObject({ status: 'pending', base_version: 0 });
    expect((await detail(admin, proposal.json!.change_id)).json).toMatchObject({ stale: false, current_version: 0, proposed_content: content });
    expect((await review(proposal.json!.change_id, 'approve')).json).toMatchObject({ status: 'approved', applied: true, version: 1 });
    expect((await getCurrentRuleSet('issue-rules'))?.content).toBe(content);
  });
});

describe('listing proposals', () => {
  it("reads summaries, not every proposal's YAML: one request however large the texts are", async () => {
    // 40 proposals of ~63 KB each (2.5 MB of YAML), 10 by each of four users (the pending bound).
    const padding = `# ${'x'.repeat(56 * 1024)}\n`;
    const proposers = await Promise.all([0, 1, 2, 3].map((i) => userToken('viewer', `proposals-lister-${i}`)));
    for (const [p, token] of proposers.entries()) {
      for (let i = 0; i < 10; i++) {
        const made = await putRules(token, 'health-rules', `${padding}${defaultRuleText('health-rules').replace('warning: 60 ', `warning: ${p * 10 + i} `)}`);
        expect(made.json, JSON.stringify(made.json)).toMatchObject({ status: 'pending' });
      }
    }
    const queries: string[] = [];
    const stop = proxy.observe(({ operation, input }) => {
      if (operation === 'Query' && String(input.TableName).endsWith('rules')) queries.push(operation);
    });
    try {
      // A user's own (filtered from everyone's), and the superadmins' pending list.
      const own = await list(proposers[0]!);
      expect(own.json).toMatchObject({ total: 10 });
      expect(queries).toHaveLength(1);
      queries.length = 0;
      const pending = await list(superadmin, { status_filter: 'pending' });
      expect(pending.json!.total).toBeGreaterThanOrEqual(40);
      expect(queries).toHaveLength(1);
    } finally {
      stop();
    }
    // The detail and the approval have the text.
    const [first] = (await list(proposers[1]!)).json!.changes;
    const shown = (await detail(proposers[1]!, first.change_id)).json!;
    expect(shown.proposed_content).toMatch(/^# x{57344}\n/);
    expect(shown.proposed_content).toMatch(/warning: 1\d /);
    expect((await review(first.change_id, 'approve')).json).toMatchObject({ status: 'approved', applied: true });
    expect((await getCurrentRuleSet('health-rules'))?.content).toBe(shown.proposed_content);
  });
});

describe('an author promoted to superadmin', () => {
  it('may not approve their own proposal, which another superadmin still may', async () => {
    const username = `proposals-promoted-${randomUUID().slice(0, 8)}`;
    const author = await userToken('admin', username);
    const proposed = `# proposed before a promotion\n${defaultRuleText('issue-rules')}`;
    const made = await putRules(author, 'issue-rules', proposed);
    expect(made.json).toMatchObject({ status: 'pending' });
    const id = made.json!.change_id as string;
    await replaceUser((await getUser(username))!, { role: 'superadmin' });
    const approvals = (await listAudit('change_approve')).length;
    const own = await request(author, 'POST', `/api/settings/config-changes/${id}/review`, '/api/settings/config-changes/{change_id}/review', {
      body: { action: 'approve', note: 'lgtm me' },
    });
    expect(own.statusCode).toBe(403);
    expect(own.json!.detail).toContain(`${username} proposed config change ${id}: another superadmin approves it`);
    expect((await detail(superadmin, id)).json).toMatchObject({ status: 'pending' });
    expect((await listAudit('change_approve')).length).toBe(approvals);
    // Another superadmin's approval applies it.
    const other = await review(id, 'approve');
    expect(other.json).toMatchObject({ status: 'approved', applied: true });
    expect((await getCurrentRuleSet('issue-rules'))?.content).toBe(proposed);
  });
});

describe('a proposal sent again while the first is still under way', () => {
  it('makes one proposal, and both answer it: the second sent lands first, and the first then finds it', async () => {
    const proposer = await userToken('admin', `proposals-retry-${randomUUID().slice(0, 8)}`);
    const proposed = `# sent twice at once\n${defaultRuleText('health-rules')}`;
    const proposals = (await listAudit('change_propose')).length;
    // The first one's write is held until the second, which read no pending proposal of this text either, has answered.
    let second: ReturnType<typeof putRules> | undefined;
    const held = whileHeld(
      proxy,
      (r) => r.operation === 'TransactWriteItems' && JSON.stringify(r.input).includes('sent twice at once'),
      () => (second = putRules(proposer, 'health-rules', proposed)),
    );
    const first = await putRules(proposer, 'health-rules', proposed);
    await held.done();
    const again = await second!;
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    const id = again.json!.change_id;
    expect(first.json).toMatchObject({ status: 'pending', applied: false, change_id: id });
    expect((await listAudit('change_propose')).length).toBe(proposals + 1);
    const pending = (await list(proposer, { status_filter: 'pending' })).json!.changes;
    expect(pending.map((c: { change_id: string }) => c.change_id)).toEqual([id]);
  });
});
