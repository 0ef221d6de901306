// AI issues through the local server on the demo fleet, without a provider:
// the rules grouping after a recompute, every list field of the spec, KPIs by
// brute force, linked alerts, and PATCH with `me`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as recompute } from '../../functions/recompute.js';
import { upsertAlert } from '../../shared/db/alerts.js';
import { createUser, replaceUser } from '../../shared/db/users.js';
import { aiIssuesGroup } from '../../shared/routes/ai-issues.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let admin: string;

beforeAll(async () => {
  delete process.env.LLM_PROVIDER;
  service = await startTestService({ adminPassword: 'ai-admin-password', demoClusters: 14 });
  admin = await userToken('admin', 'ai-admin');
  await recompute();
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${admin}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('AI issues without a provider', () => {
  it('answer every field of the spec on every route, rule-based and saying so', async () => {
    const list = (await call('GET', '/api/ai-issues?days=30&page_size=100')).body;
    expect(list.total).toBeGreaterThan(0);
    expect(list.issues.every((i: any) => i.ai_reasoning.startsWith('Rule-based grouping') && i.ai_summary && i.grouped_by === 'rules')).toBe(true);
    const id = list.issues[0].issue_id;
    for (const [name, route] of Object.entries(aiIssuesGroup.routes)) {
      if (route.method !== 'GET') continue;
      const { status, body } = await call('GET', route.path.replace('{issue_id}', id));
      expect(status, name).toBe(200);
      const parsed = route.response!.safeParse(body);
      expect(parsed.success ? [] : parsed.error.issues.slice(0, 3), name).toEqual([]);
    }
  });

  it('KPIs match a brute-force count, total_alerts included; the detail resolves every linked alert', async () => {
    // One issue assigned to an account deactivated since: nobody can act on it, so it counts as unassigned.
    const [held] = (await call('GET', '/api/ai-issues?days=7')).body.issues;
    const leaver = await createUser({
      username: 'ai-leaver',
      name: 'Ai Leaver',
      email: 'ai-leaver@example.com',
      role: 'admin',
      is_active: true,
      password_hash: 'x',
    });
    expect((await call('PATCH', `/api/ai-issues/${held.issue_id}`, { assignee: 'ai-leaver' })).status).toBe(200);
    await replaceUser(leaver, { is_active: false });
    const active = new Set((await call('GET', '/api/ai-issues/users')).body.users.map((u: { username: string }) => u.username));
    const all = (await call('GET', '/api/ai-issues?days=7&page_size=100')).body.issues as any[];
    const kpis = (await call('GET', '/api/ai-issues/kpis?days=7')).body;
    expect(all.find((i) => i.issue_id === held.issue_id).assignee).toBe('ai-leaver');
    expect(kpis).toMatchObject({
      total: all.length,
      ongoing: all.filter((i) => i.status === 'Ongoing').length,
      resolved: all.filter((i) => i.status === 'Resolved').length,
      unassigned: all.filter((i) => !i.assignee || !active.has(i.assignee)).length,
      total_alerts: all.reduce((n, i) => n + i.alert_count, 0),
      source: 'ai',
    });
    for (const issue of all.slice(0, 5)) {
      const detail = (await call('GET', `/api/ai-issues/${issue.issue_id}`)).body;
      expect(detail.alerts).toHaveLength(issue.alert_count);
    }
    expect((await call('GET', '/api/ai-issues/no-such')).status).toBe(404);
    expect((await call('PATCH', `/api/ai-issues/${held.issue_id}`, { assignee: '' })).status).toBe(200); // as the later tests find it
  });

  it('PATCH sets triage fields; assignee `me` is the caller', async () => {
    const [issue] = (await call('GET', '/api/ai-issues?days=30')).body.issues;
    expect(await call('PATCH', `/api/ai-issues/${issue.issue_id}`, { triage_status: 'Investigating', assignee: 'me', notes: 'looking' })).toEqual({
      status: 200,
      body: { status: 'ok' },
    });
    expect((await call('GET', `/api/ai-issues/${issue.issue_id}`)).body.issue).toMatchObject({
      triage_status: 'Investigating',
      assignee: 'ai-admin',
      notes: 'looking',
    });
    // Labels are stored trimmed; one holding a character that reads as another (or as nothing) is refused.
    expect((await call('PATCH', `/api/ai-issues/${issue.issue_id}`, { disposition_status: ' Actionable ' })).status).toBe(200);
    expect((await call('GET', `/api/ai-issues/${issue.issue_id}`)).body.issue.disposition_status).toBe('Actionable');
    expect((await call('PATCH', `/api/ai-issues/${issue.issue_id}`, { triage_status: 'New\u2066' })).status).toBe(422);
    expect((await call('GET', `/api/ai-issues/${issue.issue_id}`)).body.issue.triage_status).toBe('Investigating');
    // With If-Match: each PATCH answers the ETag it left, the next one's If-Match with no GET between; the older one is stale.
    const path = `${service.url}/api/ai-issues/${issue.issue_id}`;
    const read = (await fetch(path, { headers: { Authorization: `Bearer ${admin}` } })).headers.get('ETag')!;
    const patch = (notes: string, ifMatch: string) =>
      fetch(path, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json', 'If-Match': ifMatch },
        body: JSON.stringify({ notes }),
      });
    const closer = await patch('looking closer', read);
    expect(closer.status).toBe(200);
    const left = closer.headers.get('ETag')!;
    expect(left).toMatch(/^"t\d+"$/);
    expect(left).not.toBe(read);
    const closest = await patch('and closer', left);
    expect(closest.status).toBe(200);
    expect((await patch('from an old page', left)).status).toBe(409);
    expect((await call('GET', `/api/ai-issues/${issue.issue_id}`)).body.issue.notes).toBe('and closer');
    // The last save sent again on the version it was made on (its answer lost): stored already, so a 200 with the current ETag.
    const retried = await patch('and closer', left);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('ETag')).toBe(closest.headers.get('ETag'));
    expect((await patch('looking', closest.headers.get('ETag')!)).status).toBe(200);
    expect((await call('PATCH', `/api/ai-issues/${issue.issue_id}`, { assignee: 'nobody-at-all' })).status).toBe(422);
    // Bounded by what a username may be (an invited colleague's is their email), not by a triage status's 64.
    const long = await call('PATCH', `/api/ai-issues/${issue.issue_id}`, { assignee: `${'x'.repeat(70)}@example.com` });
    expect(long.body.detail).toMatch(/^No user x+@example\.com to assign/);
    expect((await call('PATCH', `/api/ai-issues/${issue.issue_id}`, { ticket_key: 'X-1' })).status).toBe(422);
    // a new alert of the same kind on that cluster: the cluster really is regrouped, and the triage stays
    const [first] = (await call('GET', `/api/ai-issues/${issue.issue_id}`)).body.alerts;
    await upsertAlert({
      alert_id: 'joins',
      cluster_id: issue.cluster_id,
      alert_name: first.alert_name,
      severity: 'warning',
      status: 'Firing',
      starts_at: new Date(Date.parse(first.starts_at) + 60_000).toISOString(),
      ends_at: null,
      fingerprint: 'joins00000000000',
      labels: { alertname: first.alert_name },
      annotations: {},
      summary: '',
      detail: 'joins',
      dashboard_url: '',
    });
    const again = await recompute();
    expect(again.ai_issues!.regrouped).toBeGreaterThan(0);
    const after = (await call('GET', `/api/ai-issues/${issue.issue_id}`)).body.issue;
    expect(after).toMatchObject({ triage_status: 'Investigating', notes: 'looking', alert_count: issue.alert_count + 1 });
  });
});
