// Alert issues (issue 7) through the real local server on the demo fleet:
// grouping against a brute-force regrouping, idempotence, triage surviving
// regrouping, every list filter and page edge, KPIs by brute force, detail,
// history, evidence, PATCH, and tickets through a fake Jira.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listAlertsSince, upsertAlert } from '../../shared/db/alerts.js';
import { listAudit } from '../../shared/db/audit.js';
import { deleteItem } from '../../shared/db/client.js';
import { getCluster } from '../../shared/db/clusters.js';
import { getIssue, listIssuesActiveSince } from '../../shared/db/issues.js';
import { createUser, deleteUser, replaceUser } from '../../shared/db/users.js';
import type { Role } from '../../shared/auth/roles.js';
import { groupAlerts } from '../../shared/issues/grouping.js';
import { durationMinutes, windowStart } from '../../shared/issues/queries.js';
import { regroupClusters, regroupRecent } from '../../shared/issues/regroup.js';
import { loadIssueRules } from '../../shared/rules/load.js';
import { routeKey } from '../../shared/http/route.js';
import { issuesGroup } from '../../shared/routes/issues.js';
import type { LocalService } from '../../infra/local/service.js';
import { startFakeJira, type FakeJira } from '../support/fake-jira.js';
import { startTestService } from '../support/local-service.js';
import { startDynamoProxy, type DynamoProxy, type Watcher } from '../support/dynamo-proxy.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let admin: string;
let viewer: string;
let jira: FakeJira;
let proxy: DynamoProxy;

beforeAll(async () => {
  // The service reaches DynamoDB Local through a proxy: a test can make DynamoDB answer a request itself.
  proxy = await startDynamoProxy(inject('dynamoEndpoint'));
  service = await startTestService({ adminPassword: 'issues-admin-password', demoClusters: 30, dynamoEndpoint: proxy.endpoint });
  admin = await userToken('admin', 'issues-admin');
  viewer = await userToken('viewer', 'issues-viewer');
  jira = await startFakeJira({ projectKey: 'OPS', email: 'bot@example.com', apiToken: 'jira-secret-token', slowMs: 400 });
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await jira?.close();
  await proxy?.close();
  for (const v of ['TICKET_PROVIDER', 'TICKET_BASE_URL', 'TICKET_PROJECT_KEY', 'TICKET_USER_EMAIL', 'TICKET_API_TOKEN', 'TICKET_TIMEOUT_MS'])
    delete process.env[v];
});

async function call(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const list = async (query = '') => (await call(viewer, 'GET', `/api/issues?${query}`)).body;
const ids = (issues: { issue_id: string }[]) => issues.map((i) => i.issue_id);

describe('grouping the demo alerts', () => {
  it('stores exactly the issues a brute-force grouping of every alert gives, and a second run changes nothing', async () => {
    const now = new Date();
    const { rules } = await loadIssueRules();
    const expected = groupAlerts(await listAlertsSince(new Date(now.getTime() - 30 * 86_400_000), now), rules, now);
    expect(expected.length).toBeGreaterThan(5);
    const stored = await listIssuesActiveSince(new Date(now.getTime() - 31 * 86_400_000));
    expect(stored.map((i) => i.issue_id).sort()).toEqual(expected.map((i) => i.issue_id).sort());
    for (const e of expected) expect(stored.find((i) => i.issue_id === e.issue_id)).toMatchObject({ ...e });

    const before = JSON.stringify(stored);
    expect(await regroupRecent()).toMatchObject({ created: 0, updated: 0, removed: 0 });
    expect(await regroupRecent()).toMatchObject({ created: 0, updated: 0, removed: 0 });
    expect(JSON.stringify(await listIssuesActiveSince(new Date(now.getTime() - 31 * 86_400_000)))).toBe(before);
  });

  it('a new alert joins an open issue on ingest, and the triage fields survive the regrouping', async () => {
    const open = (await list('status=Ongoing&page_size=100')).issues[0];
    expect(open).toBeDefined();
    expect((await call(admin, 'PATCH', `/api/issues/${open.issue_id}`, { triage_status: 'Investigating', notes: 'looking' })).status).toBe(200);
    const post = await fetch(`${service.url}/api/ingest/alerts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.ingestToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        version: '4',
        status: 'firing',
        receiver: 'fleet',
        groupLabels: {},
        commonLabels: {},
        commonAnnotations: {},
        externalURL: 'http://am',
        groupKey: 'g',
        truncatedAlerts: 0,
        alerts: [
          {
            status: 'firing',
            labels: { alertname: open.alert_names[0], cluster_id: open.cluster_id, severity: 'critical' },
            annotations: { description: 'again' },
            startsAt: new Date(Date.now() - 60_000).toISOString(),
            endsAt: '0001-01-01T00:00:00Z',
            generatorURL: 'http://prom',
            fingerprint: 'joined-now',
          },
        ],
      }),
    });
    expect(post.status).toBe(200);
    expect(((await post.json()) as { issues: unknown }).issues).toMatchObject({ updated: 1, created: 0 });
    const after = (await call(viewer, 'GET', `/api/issues/${open.issue_id}`)).body;
    expect(after.issue).toMatchObject({ alert_count: open.alert_count + 1, triage_status: 'Investigating', notes: 'looking', severity: 'Critical' });
    expect(after.alerts[0].detail).toBe('again');
    expect(after.alerts.length).toBe(open.alert_count + 1);
  });

  it('groups a new alert of a cluster that left the inventory under the names its issues had', async () => {
    const issue = (await list('page_size=100')).issues.find((i: any) => i.status === 'Resolved');
    await deleteItem('clusters', { pk: 'CLUSTERS', sk: `CLUSTER#${issue.cluster_id}` });
    expect(await getCluster(issue.cluster_id)).toBeUndefined();
    const startsAt = new Date(Date.now() - 120_000).toISOString();
    await upsertAlert({
      alert_id: 'orphan',
      cluster_id: issue.cluster_id,
      alert_name: 'OrphanAlert',
      severity: 'warning',
      status: 'Firing',
      starts_at: startsAt,
      ends_at: null,
      fingerprint: 'orphan0000000000',
      labels: { alertname: 'OrphanAlert' },
      annotations: {},
      summary: '',
      detail: '',
      dashboard_url: '',
    });
    expect(await regroupClusters([issue.cluster_id])).toMatchObject({ created: 1, failed: 0 });
    const orphan = (await list('page_size=100&search=OrphanAlert')).issues[0];
    expect(orphan).toMatchObject({ cluster_id: issue.cluster_id, cluster_name: issue.cluster_name, customer_name: issue.customer_name, status: 'Ongoing' });
  });
});

describe('GET /api/issues', () => {
  it('answers every field of the spec for every issues route', async () => {
    const { issues } = await list();
    const id = issues[0].issue_id;
    for (const [name, route] of Object.entries(issuesGroup.routes)) {
      if (route.method !== 'GET') continue;
      // Each as the least role the route admits (the assignable users are admins' to read).
      const { status, body } = await call((route.roles as readonly Role[]).includes('viewer') ? viewer : admin, 'GET', route.path.replace('{issue_id}', id));
      expect(status, routeKey(route)).toBe(200);
      const parsed = route.response!.safeParse(body);
      expect(parsed.success ? [] : parsed.error.issues.slice(0, 3), name).toEqual([]);
    }
  });

  it('filters by search, severities, status, customer, cluster, triage and disposition, each against a brute-force filter', async () => {
    const some = (await list('days=30&page_size=100')).issues as any[];
    expect((await call(admin, 'PATCH', `/api/issues/${some[1].issue_id}`, { disposition_status: 'Actionable' })).status).toBe(200);
    const all = (await list('days=30&page_size=100')).issues as any[];
    expect(all.length).toBeGreaterThan(5);
    expect(all.length).toBeLessThan(100); // the brute-force comparisons below see every issue
    const sample = all.find((i) => i.status === 'Resolved')!;
    const cases: [string, (i: any) => boolean][] = [
      [
        `search=${encodeURIComponent(sample.cluster_name.slice(0, 6).toUpperCase())}`,
        (i) => [i.issue_name, i.cluster_name, i.customer_name].some((s: string) => s.toLowerCase().includes(sample.cluster_name.slice(0, 6).toLowerCase())),
      ],
      ['severities=Critical', (i) => i.severity === 'Critical'],
      ['severities=Critical,Warning', () => true],
      ['status=Resolved', (i) => i.status === 'Resolved'],
      ['status=Ongoing', (i) => i.status === 'Ongoing'],
      ['status=ongoing', (i) => i.status === 'Ongoing'], // in any case, as severities
      [`customer=${encodeURIComponent(sample.customer_name)}`, (i) => i.customer_name === sample.customer_name],
      [`cluster=${encodeURIComponent(sample.cluster_name)}`, (i) => i.cluster_name === sample.cluster_name],
      [`cluster_id=${encodeURIComponent(sample.cluster_id)}`, (i) => i.cluster_id === sample.cluster_id], // beyond the contract
      ['triage=Investigating', (i) => i.triage_status === 'Investigating'],
      ['disposition=Actionable', (i) => i.disposition_status === 'Actionable'],
      // Free text that different people typed: matched whole, trimmed, in any case.
      ['triage=%20investigating%20', (i) => i.triage_status === 'Investigating'],
      ['disposition=ACTIONABLE', (i) => i.disposition_status === 'Actionable'],
      ['triage=Invest', () => false],
    ];
    for (const [query, keep] of cases) {
      if (query !== 'triage=Invest') expect(all.filter(keep).length, `${query} selects something`).toBeGreaterThan(0);
      const found = await list(`days=30&page_size=100&${query}`);
      expect(ids(found.issues), query).toEqual(ids(all.filter(keep)));
      expect(found.total, query).toBe(all.filter(keep).length);
    }
    const page = await list('days=30');
    expect(page.customers).toEqual([...new Set(all.map((i) => i.customer_name))].sort());
    expect(page.clusters).toEqual([...new Set(all.map((i) => i.cluster_name))].sort());
  });

  it('windows by days: 0 is today, fractions are hours, newest activity first', async () => {
    const now = new Date();
    const all = (await list('days=30&page_size=100')).issues as any[];
    for (const days of [0, 0.25, 1, 7]) {
      const since = windowStart(days, now).toISOString();
      const expected = all.filter((i) => i.status === 'Ongoing' || i.resolved_at >= since);
      expect(ids((await list(`days=${days}&page_size=100`)).issues), `days=${days}`).toEqual(ids(expected));
    }
    const lastSeen = all.map((i) => i.last_seen);
    expect(lastSeen).toEqual([...lastSeen].sort().reverse());
  });

  it('pages: last page, empty page past the end, page_size 100 and 101, page 0', async () => {
    const all = (await list('days=30&page_size=100')).issues as any[];
    const size = 4;
    const last = Math.ceil(all.length / size);
    const page = await list(`days=30&page_size=${size}&page=${last}`);
    expect(page).toMatchObject({ total: all.length, page: last, page_size: size, total_pages: last });
    expect(ids(page.issues)).toEqual(ids(all.slice((last - 1) * size)));
    expect((await list(`days=30&page_size=${size}&page=${last + 1}`)).issues).toEqual([]);
    const hundred = await list('days=30&page_size=100');
    expect(hundred).toMatchObject({ page_size: 100, total_pages: 1 });
    expect(hundred.issues).toHaveLength(all.length);
    expect(await list('days=30&search=no-such-thing-anywhere')).toMatchObject({ issues: [], total: 0, total_pages: 0 });
    expect((await list('days=')).issues.length).toBe((await list('days=7')).issues.length); // empty means the default, not 0
    expect(await list('days=30&page=&page_size=')).toMatchObject({ page: 1, page_size: 20 }); // as an HTML form sends empty fields
    for (const bad of ['page_size=101', 'page_size=0', 'page=0', 'days=-1', 'severities=Info', 'status=Open']) {
      expect((await call(viewer, 'GET', `/api/issues?${bad}`)).status, bad).toBe(422);
    }
  });
});

describe('GET /api/issues/kpis', () => {
  /** The usernames an issue may be assigned to (active accounts), as an admin reads them. */
  const activeUsernames = async () => new Set<string>((await call(admin, 'GET', '/api/issues/users')).body.users.map((u: any) => u.username));

  it('matches a brute-force count for several windows', async () => {
    const now = new Date();
    const all = (await list('days=30&page_size=100')).issues as any[];
    const active = await activeUsernames();
    for (const days of [0, 1, 7, 30]) {
      const since = windowStart(days, now).toISOString();
      const inWindow = all.filter((i) => i.status === 'Ongoing' || i.resolved_at >= since);
      const kpis = (await call(viewer, 'GET', `/api/issues/kpis?days=${days}`)).body;
      expect(kpis).toMatchObject({
        total: inWindow.length,
        ongoing: inWindow.filter((i) => i.status === 'Ongoing').length,
        resolved: inWindow.filter((i) => i.status === 'Resolved').length,
        unassigned: inWindow.filter((i) => !i.assignee || !active.has(i.assignee)).length,
        source: 'live',
      });
      const mean = inWindow.length ? inWindow.reduce((s, i) => s + durationMinutes(i, new Date()), 0) / inWindow.length : 0;
      expect(Math.abs(kpis.avg_duration_minutes - mean)).toBeLessThan(2); // ongoing durations grow while the test runs
    }
  });

  it("counts an issue whose assignee's account is deactivated or deleted as unassigned, as the metrics scrape does", async () => {
    const issue = (await list('days=30&page_size=100')).issues.find((i: any) => !i.assignee);
    const unassigned = async () => {
      const kpis = (await call(viewer, 'GET', '/api/issues/kpis?days=30')).body.unassigned;
      const scrape = await fetch(`${service.url}/api/metrics`, { headers: { Authorization: `Bearer ${admin}` } });
      const gauge = Number((await scrape.text()).match(/^fleet_health_issues_unassigned (\S+)$/m)?.[1]);
      expect(gauge).toBe(kpis);
      return kpis;
    };
    const none = await unassigned();
    let account = await createUser({
      username: 'kpi-leaver',
      name: 'Kpi Leaver',
      email: 'kpi-leaver@example.com',
      role: 'admin',
      is_active: true,
      password_hash: 'x',
    });
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: 'kpi-leaver' })).status).toBe(200);
    expect(await unassigned()).toBe(none - 1);
    account = await replaceUser(account, { is_active: false });
    expect(await unassigned()).toBe(none);
    account = await replaceUser(account, { is_active: true });
    expect(await unassigned()).toBe(none - 1);
    await deleteUser(account);
    expect(await unassigned()).toBe(none);
    expect((await getIssue(issue.issue_id))!.assignee).toBe('kpi-leaver'); // the record still says who had it
    // Unassigned again, as the later tests of this file find it.
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: '' })).status).toBe(200);
  });
});

describe('one issue', () => {
  it('shows its alerts newest first with display times, its cluster history and its evidence', async () => {
    const issue = (await list('days=30&page_size=100')).issues.find((i: any) => i.alert_count >= 2);
    const detail = (await call(viewer, 'GET', `/api/issues/${issue.issue_id}`)).body;
    expect(detail.cluster_info).toBeNull();
    expect(detail.alerts).toHaveLength(issue.alert_count);
    expect(detail).toMatchObject({ alerts_total: issue.alert_count, alerts_truncated: false });
    expect(detail.alerts.map((a: any) => a.starts_at)).toEqual(
      detail.alerts
        .map((a: any) => a.starts_at)
        .sort()
        .reverse(),
    );
    expect(detail.alerts[0].time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    const history = (await call(viewer, 'GET', `/api/issues/${issue.issue_id}/cluster-history`)).body;
    expect(history.cluster_name).toBe(issue.cluster_name);
    expect(history.issues.every((i: any) => i.cluster_id === issue.cluster_id && i.issue_id !== issue.issue_id)).toBe(true);
    const evidence = (await call(viewer, 'GET', `/api/issues/${issue.issue_id}/evidence`)).body;
    // The last 7 days' alerts: started in them, or before and still firing.
    expect(evidence.alerts.every((a: any) => a.starts_at >= new Date(Date.now() - 7 * 86_400_000).toISOString() || a.status === 'Firing')).toBe(true);
    expect(evidence).toMatchObject({ alerts_total: evidence.alerts.length, alerts_truncated: false }); // a demo cluster has fewer than 200
    expect(evidence.metrics.length).toBeGreaterThan(3);
    for (const m of evidence.metrics) expect(m.min <= m.avg && m.avg <= m.max && m.min <= m.latest && m.latest <= m.max).toBe(true);
    expect(evidence.cluster?.cluster_id ?? issue.cluster_id).toBe(issue.cluster_id);
    expect((await call(viewer, 'GET', '/api/issues/iss-unknown')).status).toBe(404);
    expect((await call(viewer, 'GET', '/api/issues/iss-unknown/evidence')).status).toBe(404);
  });
});

describe('PATCH /api/issues/{id}', () => {
  it('with If-Match, applies only on the triage it was made on: a stale one is a 409 with what is stored, and changes nothing', async () => {
    const issue = (await list('days=30&page_size=100')).issues.at(-1);
    const path = `/api/issues/${issue.issue_id}`;
    const read = async () => {
      const res = await fetch(`${service.url}${path}`, { headers: { Authorization: `Bearer ${viewer}` } });
      return { etag: res.headers.get('ETag')!, issue: ((await res.json()) as { issue: any }).issue };
    };
    const patch = (body: unknown, ifMatch: string) =>
      fetch(`${service.url}${path}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json', 'If-Match': ifMatch },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, etag: r.headers.get('ETag'), body: (await r.json()) as any }));
    const first = await read();
    expect(first.etag).toMatch(/^"t\d+"$/);
    // Two admins read the same notes; the first saves its addition.
    const applied = await patch({ notes: `${first.issue.notes}\nfirst look` }, first.etag);
    expect(applied.status).toBe(200);
    const second = await read();
    expect(second.etag).not.toBe(first.etag);
    // Its answer carried the ETag its change left: a next PATCH of the same admin needs no GET between.
    expect(applied.etag).toBe(second.etag);
    // The second's, made on what it read before, is refused rather than dropping the first's.
    const stale = await patch({ notes: `${first.issue.notes}\nsecond look` }, first.etag);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ current_etag: second.etag, current: { notes: `${first.issue.notes}\nfirst look` } });
    expect(stale.body.detail).toMatch(/was changed by \S+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC after you read it: nothing was changed/);
    expect((await read()).issue).toEqual(second.issue);
    // Made again on what is stored now, it applies.
    const again = await patch({ notes: `${second.issue.notes}\nsecond look` }, second.etag);
    expect(again.status).toBe(200);
    const third = await read();
    expect(third.issue.notes).toBe(`${first.issue.notes}\nfirst look\nsecond look`);
    expect(again.etag).toBe(third.etag);
    // A PATCH that changes nothing leaves the version, and says so.
    expect(await patch({ notes: third.issue.notes }, again.etag!)).toMatchObject({ status: 200, etag: third.etag });
    // The same save again on the version it was made on (its first answer lost on the way): stored already, so it
    // succeeded, with what is current; not a 409 blaming its own first try. A different change on that version still is.
    expect(await patch({ notes: third.issue.notes }, second.etag)).toMatchObject({ status: 200, etag: third.etag });
    expect((await patch({ notes: `${third.issue.notes}\nthird look` }, second.etag)).status).toBe(409);
    expect((await read()).issue).toEqual(third.issue);
    const malformed = await patch({ notes: 'x' }, 'W/"t1"');
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail).toMatch(/^If-Match must be the ETag GET answered for this issue/);
  });

  it('sets each field, audits before and after, checks the assignee, and refuses bad input without changing anything', async () => {
    const issue = (await list('days=30&page_size=100')).issues.find((i: any) => !i.ticket_key);
    // Names, emails and roles of every active account: a list of users, which viewers are refused (DESIGN §5).
    expect((await call(viewer, 'GET', '/api/issues/users')).status).toBe(403);
    const users = (await call(admin, 'GET', '/api/issues/users')).body.users;
    expect(users.map((u: any) => u.username)).toContain('issues-admin');
    const patch = { triage_status: 'Mitigated', disposition_status: 'Actionable', assignee: 'issues-admin', notes: 'n'.repeat(10_000) };
    expect(await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, patch)).toEqual({ status: 200, body: { status: 'updated', source: 'live' } });
    expect((await call(viewer, 'GET', `/api/issues/${issue.issue_id}`)).body.issue).toMatchObject({ ...patch, updated_by: 'issues-admin' });
    const entry = (await listAudit('issue_update')).find((e) => e.target === issue.issue_id)!;
    expect(entry.detail).toEqual({ before: { triage_status: issue.triage_status, disposition_status: '', assignee: '', notes: issue.notes }, after: patch });

    const stored = await getIssue(issue.issue_id);
    for (const bad of [
      { assignee: 'nobody-here' },
      { triage_status: 'x'.repeat(65) },
      { notes: 'n'.repeat(10_001) },
      {},
      { severity: 'Critical' },
      { ticket_url: 'not a url' },
      // A label shown in lists and filtered by: nothing that reads as another, or as a blank.
      { triage_status: 'Investigating\u202E' },
      { disposition_status: '\u3164\u3164' },
      { ticket_key: 'OPS-1\u200B' },
    ]) {
      expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, bad)).status, JSON.stringify(bad).slice(0, 40)).toBe(422);
    }
    expect(await getIssue(issue.issue_id)).toEqual(stored);
    // A ticket key is one key: two run together, or a sentence, are refused saying so (its ends are trimmed).
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { ticket_key: 'OPS-1 OPS-2' })).body.detail).toBe(
      'ticket_key: must be one ticket key, with no spaces (such as OPS-123)',
    );
    expect(await getIssue(issue.issue_id)).toEqual(stored);
    // A URL, but not a link the page may show: the refusal says what is wanted, not "Invalid URL".
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { ticket_url: 'ftp://tickets.example.com/OPS-1' })).body.detail).toBe(
      'ticket_url: must be an absolute http(s) address',
    );
    // A link whose user part reads as the host (https://jira.example.com@evil.example/ opens evil.example).
    for (const ticket_url of ['https://tickets.example.com@evil.example/OPS-1', 'https://user:pw@tickets.example.com/OPS-1']) {
      expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { ticket_url })).body.detail).toBe(
        'ticket_url: must not carry a username or password',
      );
    }
    expect(await getIssue(issue.issue_id)).toEqual(stored);
    // A link too long is said as such, not as no address.
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { ticket_url: `https://tickets.example.com/${'a'.repeat(2_100)}` })).body.detail).toBe(
      'ticket_url: must be at most 2,048 characters',
    );
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: '' })).status).toBe(200);
    expect((await getIssue(issue.issue_id))!.assignee).toBe('');
    // Labels are stored trimmed, so the triage filter finds them; blanks alone clear one.
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { triage_status: '  Investigating  ', disposition_status: '   ' })).status).toBe(200);
    expect(await getIssue(issue.issue_id)).toMatchObject({ triage_status: 'Investigating', disposition_status: '' });
    expect((await list('days=30&page_size=100&triage=Investigating')).issues.map((i: any) => i.issue_id)).toContain(issue.issue_id);
    // An invited colleague's username is their email, which may be far longer than a triage status.
    const longName = 'christopher.montgomery-williamson@operations.eu-west.example-holdings.com';
    await createUser({ username: longName, name: 'C. Montgomery-Williamson', email: longName, role: 'admin', is_active: true, password_hash: 'x' });
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: longName })).status).toBe(200);
    expect((await getIssue(issue.issue_id))!.assignee).toBe(longName);
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: 'x'.repeat(257) })).status).toBe(422);
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: '' })).status).toBe(200);
    expect((await call(admin, 'PATCH', '/api/issues/iss-unknown', { notes: 'x' })).status).toBe(404);
    expect((await call(viewer, 'PATCH', `/api/issues/${issue.issue_id}`, { notes: 'x' })).status).toBe(403);
  });

  it('assigns by display name only when one active account bears it; a name two share is refused, naming their usernames', async () => {
    const issue = (await list('days=30&page_size=100')).issues.find((i: any) => !i.ticket_key);
    const twin = (username: string, is_active: boolean) =>
      createUser({ username, name: 'Alex Twin', email: `${username}@example.com`, role: 'admin', is_active, password_hash: 'x' });
    await twin('alex-retired', false);
    await twin('alex-one', true);
    // One active Alex Twin (the other deactivated): the name is theirs.
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: 'Alex Twin' })).status).toBe(200);
    expect((await getIssue(issue.issue_id))!.assignee).toBe('alex-one');
    await twin('alex-two', true);
    const refused = await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: 'Alex Twin' });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toBe('2 active users are named Alex Twin: assign by username (alex-one, alex-two).');
    expect((await getIssue(issue.issue_id))!.assignee).toBe('alex-one');
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { assignee: 'alex-two' })).status).toBe(200);
  });
});

describe('POST /api/issues/{id}/create-ticket (Jira)', () => {
  const configure = () =>
    Object.assign(process.env, {
      TICKET_PROVIDER: 'jira',
      TICKET_BASE_URL: jira.baseUrl,
      TICKET_PROJECT_KEY: 'OPS',
      TICKET_USER_EMAIL: 'bot@example.com',
      TICKET_API_TOKEN: 'jira-secret-token',
      TICKET_TIMEOUT_MS: '1000',
    });
  const untickted = async () => ((await list('days=30&page_size=100')).issues as any[]).filter((i) => !i.ticket_key);

  it('answers 503 while no provider is configured, and changes nothing', async () => {
    const [issue] = await untickted();
    const stored = await getIssue(issue.issue_id);
    const res = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`);
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(/TICKET_PROVIDER/);
    expect(await getIssue(issue.issue_id)).toEqual(stored);
  });

  it('creates one Jira issue with the issue, its alerts and a link back, and stores key and URL', async () => {
    configure();
    const [issue] = await untickted();
    const before = jira.received.length;
    const res = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'created',
      ticket_key: expect.stringMatching(/^OPS-\d+$/),
      ticket_url: `${jira.baseUrl}/browse/${res.body.ticket_key}`,
      source: 'live',
    });
    expect(jira.received.length).toBe(before + 1);
    const sent = jira.received.at(-1)!.body as any;
    expect(sent.fields.summary).toContain(issue.cluster_name);
    expect(JSON.stringify(sent.fields.description)).toContain(`/issues/${issue.issue_id}`);
    expect(await getIssue(issue.issue_id)).toMatchObject({ ticket_key: res.body.ticket_key, ticket_url: res.body.ticket_url, ticket_claim: null });
    const again = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`);
    expect(again.status).toBe(409);
    expect(again.body.ticket_key).toBe(res.body.ticket_key);
    expect(jira.received.length).toBe(before + 1);
    expect((await listAudit('ticket_create')).find((e) => e.target === issue.issue_id)?.detail).toMatchObject({ after: { ticket_key: res.body.ticket_key } });
  });

  it('audits the ticket URL a PATCH had linked as what the created ticket replaced', async () => {
    configure();
    const [issue] = await untickted();
    const linked = 'https://wiki.example.com/incidents/42';
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { ticket_url: linked })).status).toBe(200);
    const res = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`);
    expect(res.status).toBe(200);
    expect((await listAudit('ticket_create')).find((e) => e.target === issue.issue_id)?.detail).toMatchObject({
      before: { ticket_key: '', ticket_url: linked },
      after: { ticket_key: res.body.ticket_key, ticket_url: res.body.ticket_url },
    });
  });

  it("unlinking or replacing a ticket's key takes its URL along; a page linked with no key stays when a key is set", async () => {
    const [issue, other] = await untickted();
    const path = (i: { issue_id: string }) => `/api/issues/${i.issue_id}`;
    const ticketOf = async (i: { issue_id: string }) => {
      const { ticket_key, ticket_url } = (await call(admin, 'GET', path(i))).body.issue;
      return { ticket_key, ticket_url };
    };
    await call(admin, 'PATCH', path(issue), { ticket_key: 'OPS-77', ticket_url: 'https://jira.example.com/browse/OPS-77' });
    expect((await call(admin, 'PATCH', path(issue), { ticket_key: 'OPS-78' })).status).toBe(200);
    expect(await ticketOf(issue)).toEqual({ ticket_key: 'OPS-78', ticket_url: '' });
    await call(admin, 'PATCH', path(issue), { ticket_url: 'https://jira.example.com/browse/OPS-78' });
    expect((await call(admin, 'PATCH', path(issue), { ticket_key: '' })).status).toBe(200);
    expect(await ticketOf(issue)).toEqual({ ticket_key: '', ticket_url: '' });
    expect((await listAudit('issue_update')).find((e) => e.target === issue.issue_id)?.detail).toEqual({
      before: { ticket_key: 'OPS-78', ticket_url: 'https://jira.example.com/browse/OPS-78' },
      after: { ticket_key: '', ticket_url: '' },
    });
    // An incident's page, then its ticket's key: the page is no ticket's, and stays.
    const page = 'https://wiki.example.com/incidents/43';
    await call(admin, 'PATCH', path(other), { ticket_url: page });
    await call(admin, 'PATCH', path(other), { ticket_key: 'OPS-79' });
    expect(await ticketOf(other)).toEqual({ ticket_key: 'OPS-79', ticket_url: page });
  });

  it('a ticket whose key concurrent triage keeps from being stored: retried, else a 409 naming the ticket', async () => {
    configure();
    // DynamoDB cancelling the transaction that records the ticket (with its audit row) for a concurrent one, `failures` times.
    let failures = 0;
    // DynamoDB's answer to a transaction that met another one on the same items.
    const conflicting: Watcher = ({ input }) => {
      if (failures <= 0 || !input.TransactItems || !JSON.stringify(input).includes('ticket_create')) return undefined;
      failures -= 1;
      const message = 'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]';
      return { type: 'TransactionCanceledException', message, fields: { CancellationReasons: [{ Code: 'TransactionConflict' }] } };
    };
    const stopConflicting = proxy.watch(conflicting);
    try {
      // Seven losses: more than one transaction's own retries (5), fewer than the store's three tries.
      // From the end of the list: the issue left claimed is not one the next tests take.
      const [first, second] = (await untickted()).slice(-2);
      failures = 7;
      const stored = await call(admin, 'POST', `/api/issues/${first!.issue_id}/create-ticket`);
      expect(stored.status).toBe(200);
      expect(failures).toBe(0);
      expect((await getIssue(first!.issue_id))!.ticket_key).toBe(stored.body.ticket_key);

      failures = 1_000;
      const before = jira.received.length;
      const lost = await call(admin, 'POST', `/api/issues/${second!.issue_id}/create-ticket`);
      expect(lost.status).toBe(409);
      expect(lost.body).toMatchObject({ ticket_key: expect.stringMatching(/^OPS-\d+$/), ticket_url: expect.stringContaining('/browse/OPS-') });
      expect(lost.body.detail).toMatch(
        /^Ticket OPS-\d+ was created, but concurrent changes kept it from being recorded on the issue: link it with PATCH or close it\.$/,
      );
      expect(jira.received.length).toBe(before + 1);
      expect((await getIssue(second!.issue_id))!.ticket_key).toBeFalsy();
    } finally {
      stopConflicting();
    }
  });

  it('two concurrent calls make one ticket, and a viewer may not create one', async () => {
    configure();
    const [issue] = await untickted();
    expect((await call(viewer, 'POST', `/api/issues/${issue.issue_id}/create-ticket`)).status).toBe(403);
    const before = jira.received.length;
    jira.mode = 'slow'; // Jira takes 400 ms: the second call arrives while the first holds the claim
    const results = await Promise.all([1, 2].map(() => call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`)));
    jira.mode = 'ok';
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(jira.received.length).toBe(before + 1);
    expect((await getIssue(issue.issue_id))!.ticket_key).toBe(results.find((r) => r.status === 200)!.body.ticket_key);
  });

  it('a Jira refusal answers 502 and leaves the issue unchanged, so a retry succeeds; a Jira 500 marks that a ticket may exist', async () => {
    configure();
    const [issue] = await untickted();
    const stored = await getIssue(issue.issue_id);
    process.env.TICKET_API_TOKEN = 'wrong-token';
    const refused = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`);
    expect(refused.status).toBe(502);
    expect(refused.body.detail).toBe(
      'Jira refused the credentials (HTTP 401): check TICKET_USER_EMAIL and its API token (TICKET_API_TOKEN; on AWS the secret TicketCredentialArn names). Nothing was created; you can try again.',
    );
    expect(refused.body.ticket_may_exist).toBeUndefined();
    expect(await getIssue(issue.issue_id)).toEqual(stored);
    configure();
    jira.mode = 'error500';
    const failed = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`);
    jira.mode = 'ok';
    expect(failed.status).toBe(502);
    // A 500 does not say the ticket was refused: it may exist, and the answer says how to find it.
    expect(failed.body.detail).toMatch(/^Jira answered HTTP 500\. The ticket may have been created all the same: look for one labelled fleet-health-iss-/);
    expect(failed.body).toMatchObject({ ticket_may_exist: true, ticket_label: `fleet-health-${issue.issue_id}` });
    expect(JSON.stringify(failed.body)).not.toContain('jira-secret-token');
    expect(await getIssue(issue.issue_id)).toMatchObject({ ticket_key: '', ticket_claim: null, ticket_unconfirmed_at: expect.any(String) });
    // Looked for under its label and not found: another is created on purpose.
    expect((await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket?again=true`)).status).toBe(200);
  });

  it('a ticket Jira made but answered too late for: 502 says it may exist and names its label, and it is linked by PATCH', async () => {
    configure();
    process.env.TICKET_TIMEOUT_MS = '200'; // Jira answers after 400 ms
    const [issue] = await untickted();
    const stored = await getIssue(issue.issue_id);
    jira.mode = 'late';
    const made = jira.created.length;
    const failed = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`);
    jira.mode = 'ok';
    configure();
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ ticket_may_exist: true, ticket_label: `fleet-health-${issue.issue_id}` });
    expect(failed.body.detail).toMatch(/^Jira did not answer: no answer within 0\.2 s\. The ticket may have been created all the same/);
    // The issue says so, to every reader: no ticket linked, the create's time kept, the claim given up.
    const marked = (await call(admin, 'GET', `/api/issues/${issue.issue_id}`)).body.issue;
    expect(marked).toMatchObject({ ticket_key: '', ticket_unconfirmed_at: expect.any(String) });
    expect(await getIssue(issue.issue_id)).toMatchObject({ ticket_claim: null, ticket_key: stored!.ticket_key });
    // Another create (another admin, a reload) is refused until a ticket is linked or another is asked for on purpose.
    const second = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`);
    expect(second).toMatchObject({
      status: 409,
      body: { ticket_may_exist: true, ticket_label: failed.body.ticket_label, ticket_unconfirmed_at: marked.ticket_unconfirmed_at },
    });
    expect(jira.created.length).toBe(made + 1);
    // The ticket is in Jira under the label the answer named: the user finds it there and links it.
    const ticket = jira.created.slice(made).find((t) => t.labels.includes(failed.body.ticket_label))!;
    expect(ticket).toBeDefined();
    const url = `${jira.baseUrl}/browse/${ticket.key}`;
    expect((await call(admin, 'PATCH', `/api/issues/${issue.issue_id}`, { ticket_key: ticket.key, ticket_url: url })).status).toBe(200);
    expect((await call(admin, 'GET', `/api/issues/${issue.issue_id}`)).body.issue.ticket_unconfirmed_at).toBeUndefined();
    const again = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket?again=true`);
    expect(again).toMatchObject({ status: 409, body: { ticket_key: ticket.key, ticket_url: url } });
    expect(jira.created.length).toBe(made + 1);
  });

  it('after a create with no definite answer, again=true creates another on purpose, and the issue then holds it', async () => {
    configure();
    process.env.TICKET_TIMEOUT_MS = '200';
    const [issue] = await untickted();
    jira.mode = 'late';
    const made = jira.created.length;
    expect((await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`)).status).toBe(502);
    jira.mode = 'ok';
    configure();
    expect((await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket`)).status).toBe(409);
    const another = await call(admin, 'POST', `/api/issues/${issue.issue_id}/create-ticket?again=true`);
    expect(another).toMatchObject({ status: 200, body: { status: 'created' } });
    expect(jira.created.length).toBe(made + 2); // the late one and the one asked for
    const now = (await call(admin, 'GET', `/api/issues/${issue.issue_id}`)).body.issue;
    expect(now).toMatchObject({ ticket_key: another.body.ticket_key });
    expect(now.ticket_unconfirmed_at).toBeUndefined();
  });
});
