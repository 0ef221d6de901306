// The issue lists' parameters beyond the contract (shared/issues/README.md "Assigned to" and "Order") through
// the local server, for alert and AI issues alike. `assignee`: `me` per caller, `(none)` as the KPIs count
// unassigned, a username in any case, totals and pages under the filter, a cached list following a PATCH, bad
// values. `sort`: every key both ways against a brute-force order of the whole list, pages of it, bad values.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as recompute } from '../../functions/recompute.js';
import { createUser, replaceUser } from '../../shared/db/users.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let carol: string; // admin
let dave: string; // admin
let viewer: string;

beforeAll(async () => {
  delete process.env.LLM_PROVIDER;
  service = await startTestService({ adminPassword: 'assignee-admin-password', demoClusters: 14 });
  carol = await userToken('admin', 'carol');
  dave = await userToken('admin', 'dave');
  viewer = await userToken('viewer', 'assignee-viewer');
  await recompute(); // the AI issues (rules grouping, no provider)
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

async function call(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

const ids = (issues: { issue_id: string }[]) => issues.map((i) => i.issue_id);

describe.each(['/api/issues', '/api/ai-issues'])('%s beyond the contract', (path) => {
  const list = async (token: string, query: string) => {
    const answer = await call(token, 'GET', `${path}?days=30&page_size=100&${query}`);
    expect(answer.status, query).toBe(200);
    return answer.body;
  };
  const assign = async (token: string, id: string, assignee: string) => expect((await call(token, 'PATCH', `${path}/${id}`, { assignee })).status).toBe(200);

  it('me is the caller, (none) the issues the KPIs count unassigned, a username that account, each against the whole list', async () => {
    const all = (await list(viewer, '')).issues as any[];
    expect(all.length).toBeGreaterThanOrEqual(5);
    expect(all.length).toBeLessThan(100); // every issue is on this one page
    for (const i of all) if (i.assignee) await assign(carol, i.issue_id, '');
    await assign(carol, all[0].issue_id, 'me');
    await assign(carol, all[1].issue_id, 'me');
    await assign(dave, all[2].issue_id, 'me');
    // Assigned to an account deactivated since: nobody can act on it, so it is unassigned, as the KPIs count it.
    const leaver = await createUser({
      username: `leaver${path.length}`,
      name: 'Leaver',
      email: `leaver${path.length}@example.com`,
      role: 'admin',
      is_active: true,
    });
    await assign(carol, all[3].issue_id, leaver.username);
    await replaceUser(leaver, { is_active: false });

    const now = (await list(viewer, '')).issues as any[];
    const expect_ = (query: string, token: string, keep: (i: any) => boolean) =>
      list(token, query).then((found) => {
        expect(ids(found.issues), `${query} as ${token === carol ? 'carol' : token === dave ? 'dave' : 'viewer'}`).toEqual(ids(now.filter(keep)));
        expect(found.total, query).toBe(now.filter(keep).length);
        return found;
      });
    await expect_('assignee=me', carol, (i) => i.assignee === 'carol');
    await expect_('assignee=me', dave, (i) => i.assignee === 'dave');
    await expect_('assignee=ME', dave, (i) => i.assignee === 'dave'); // in any case, as PATCH takes it
    await expect_('assignee=me', viewer, () => false);
    await expect_('assignee=carol', dave, (i) => i.assignee === 'carol');
    await expect_('assignee=%20Carol%20', viewer, (i) => i.assignee === 'carol'); // a username in its canonical form
    await expect_(`assignee=${leaver.username}`, viewer, (i) => i.assignee === leaver.username); // whoever had it
    await expect_('assignee=nobody-by-this-name', viewer, () => false);
    const unassigned = await expect_('assignee=(none)', viewer, (i) => !i.assignee || i.assignee === leaver.username);
    await expect_('assignee=%28NONE%29', viewer, (i) => !i.assignee || i.assignee === leaver.username);
    expect(unassigned.total).toBe(now.length - 3);
    // The figure the KPI tile shows is the count of the list under the filter.
    expect((await call(viewer, 'GET', `${path}/kpis?days=30`)).body.unassigned).toBe(unassigned.total);
    // With the other filters, and blank for anyone.
    await expect_(`assignee=me&status=${now[0].status}`, carol, (i) => i.assignee === 'carol' && i.status === now[0].status);
    await expect_('assignee=', viewer, () => true);
  });

  it('pages and totals count the filtered issues; a cached list follows a PATCH on the next read, and answers a new ETag', async () => {
    const all = (await list(viewer, '')).issues as any[];
    for (const i of all) if (i.assignee !== 'dave') await assign(dave, i.issue_id, 'me');
    const mine = all.length;
    const page2 = (await call(dave, 'GET', `${path}?days=30&assignee=me&page_size=2&page=2`)).body;
    expect(page2).toMatchObject({ total: mine, total_pages: Math.ceil(mine / 2), page: 2 });
    expect(ids(page2.issues)).toEqual(ids(all.slice(2, 4)));

    const first = await call(dave, 'GET', `${path}?days=30&page_size=100&assignee=(none)`);
    expect(first.body.total).toBe(0);
    const etag = first.headers.get('etag')!;
    expect(
      (await fetch(`${service.url}${path}?days=30&page_size=100&assignee=(none)`, { headers: { Authorization: `Bearer ${dave}`, 'If-None-Match': etag } }))
        .status,
    ).toBe(304);
    await assign(carol, all[0].issue_id, '');
    const after = await call(dave, 'GET', `${path}?days=30&page_size=100&assignee=(none)`);
    expect(ids(after.body.issues)).toEqual([all[0].issue_id]);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect((await list(dave, 'assignee=me')).total).toBe(mine - 1);
    // Two callers asking for `me` get each their own answer, whatever a container holds.
    expect((await list(carol, 'assignee=me')).total).toBe(0);
    await assign(carol, all[0].issue_id, 'me');
    expect(ids((await list(carol, 'assignee=me')).issues)).toEqual([all[0].issue_id]);
    expect((await list(dave, 'assignee=me')).total).toBe(mine - 1);
  });

  it('orders by every sort key both ways as a brute-force sort of the whole list does, ties newest activity first, and pages it', async () => {
    const all = (await list(viewer, '')).issues as any[];
    const rank: Record<string, Record<string, number>> = { severity: { Warning: 1, Critical: 2 }, status: { Resolved: 1, Ongoing: 2 } };
    const keys = ['last_seen', 'first_seen', 'severity', 'status', 'issue_name', 'cluster_name', 'alert_count', 'duration_minutes'];
    const ranked = (i: any, key: string) => rank[key]?.[i[key]] ?? i[key];
    for (const key of keys) {
      for (const desc of [false, true]) {
        const sort = `${desc ? '-' : ''}${key}`;
        // all is newest activity first: a stable sort of it keeps that order among ties.
        const expected = [...all].sort((a, b) => {
          const [x, y] = [ranked(a, key), ranked(b, key)];
          const by = x < y ? -1 : x > y ? 1 : 0;
          return desc ? -by : by;
        });
        const found = await list(viewer, `sort=${sort}`);
        if (key === 'duration_minutes') {
          // Durations of ongoing issues grow while the test runs: compared as sorted, not by identity.
          const durations = found.issues.map((i: any) => i.duration_minutes);
          expect(durations, sort).toEqual([...durations].sort((x: number, y: number) => (desc ? y - x : x - y)));
          expect(new Set(ids(found.issues)), sort).toEqual(new Set(ids(all)));
        } else expect(ids(found.issues), sort).toEqual(ids(expected));
        if (key === 'issue_name' || key === 'severity') {
          const page2 = (await call(viewer, 'GET', `${path}?days=30&page_size=3&page=2&sort=${sort}`)).body;
          expect(ids(page2.issues), `${sort} page 2`).toEqual(ids(expected.slice(3, 6)));
        }
      }
    }
    expect(ids((await list(viewer, 'sort=-last_seen')).issues)).toEqual(ids(all)); // the default
  });

  it('refuses what no account could be named, as problem+json naming the parameter', async () => {
    for (const bad of ['Jane%20Doe', 'none%20at%20all', 'x'.repeat(257), '%E2%80%AEcarol', 'carol%2Cdave']) {
      const res = await fetch(`${service.url}${path}?assignee=${bad}`, { headers: { Authorization: `Bearer ${viewer}` } });
      expect(res.status, bad).toBe(422);
      expect(res.headers.get('content-type'), bad).toContain('application/problem+json');
      expect(JSON.stringify(await res.json()), bad).toContain('assignee');
    }
    for (const bad of ['severity,-status', 'Severity', 'ticket_key', '+severity', '--severity']) {
      const res = await fetch(`${service.url}${path}?sort=${encodeURIComponent(bad)}`, { headers: { Authorization: `Bearer ${viewer}` } });
      expect(res.status, bad).toBe(422);
      expect(JSON.stringify(await res.json()), bad).toContain('sort');
    }
  });
});
