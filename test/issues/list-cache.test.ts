// The issues list's per-container cache behind the issues' generation marker
// (issue 21 §3), through DynamoDB Local with every request it receives
// counted: a repeated read costs one marker read, every kind of issue
// write is on the very next read (in this container and in another one), the
// answers are those of an uncached read, and the bounds hold.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import { upsertClusters } from '../../shared/db/clusters.js';
import {
  claimTicket,
  currentIssuesGeneration,
  getIssue,
  listClusterIssues,
  listIssueSummariesSince,
  putIssues,
  releaseTicketClaim,
  type IssueRecord,
} from '../../shared/db/issues.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { dropIssueListCache, issueCacheSettings } from '../../shared/issues/list-cache.js';
import { activeUsernames } from '../../shared/issues/assignee.js';
import { distinct, issueKpis, kpiCounts, listIssues, matches, newestFirst, windowStart } from '../../shared/issues/queries.js';
import { regroupClusters } from '../../shared/issues/regroup.js';
import { updateTriage } from '../../shared/issues/triage.js';
import { IssueListQuery } from '../../shared/routes/common.js';
import { useTestTables } from '../support/dynamo.js';
import { cacheReads, countCacheReads, useFreshIssueCache } from '../support/issue-cache.js';

const ADMIN: Principal = { userId: 'u-admin', username: 'admin', name: 'Admin', email: 'admin@example.com', role: 'admin' };
const CALLER = { ip: '127.0.0.1', userAgent: 'vitest' };

const query = (q: Record<string, string> = {}) => IssueListQuery.parse(q);
const ids = (issues: readonly { issue_id: string }[]) => issues.map((i) => i.issue_id);

let requests: ReturnType<typeof countCacheReads>;
/** The cluster of the seeded issues (no alerts: never regrouped here, which would remove them). */
const clusterId = randomUUID();
/** A cluster of the inventory that receives alerts. */
const liveCluster = randomUUID();

/** A stored issue `hoursAgo` hours old, resolved 30 minutes after its last alert unless ongoing. */
function issue(n: number, hoursAgo: number, over: Partial<IssueRecord> = {}): IssueRecord {
  const first = new Date(Date.now() - hoursAgo * 3_600_000);
  const last = new Date(first.getTime() + 20 * 60_000);
  const ongoing = n % 7 === 0;
  return {
    issue_id: `iss-${clusterId.slice(0, 8)}-${String(n).padStart(3, '0')}`,
    group_key: `cluster=${clusterId}|alert_name=Alert${n % 5}`,
    issue_name: `Alert${n % 5}`,
    severity: n % 3 === 0 ? 'Critical' : 'Warning',
    status: ongoing ? 'Ongoing' : 'Resolved',
    cluster_id: clusterId,
    alert_count: 1 + (n % 4),
    alert_names: [`Alert${n % 5}`],
    first_seen: first.toISOString(),
    last_seen: last.toISOString(),
    resolved_at: ongoing ? null : new Date(last.getTime() + 30 * 60_000).toISOString(),
    cluster_name: `prod-${n % 4}`,
    customer_name: `Customer ${n % 3}`,
    triage_status: n % 4 === 0 ? 'Investigating' : '',
    disposition_status: '',
    assignee: n % 5 === 0 ? 'oncall' : '',
    notes: '',
    ticket_key: '',
    ticket_url: '',
    updated_at: '',
    updated_by: '',
    grouped_at: new Date().toISOString(),
    grouping_version: 1,
    triage_version: 0,
    superseded_by: null,
    ticket_claim: null,
    ticket_claimed_at: null,
    ...over,
  };
}

beforeAll(async () => {
  const { proxy } = await useTestTables({ proxy: true });
  requests = countCacheReads(proxy, 'issues');
  await upsertClusters([
    {
      cluster_id: liveCluster,
      cluster_name: 'prod-live',
      customer_name: 'Acme',
      account_id: '1',
      account_name: 'Acme',
      email: 'ops@acme.example',
      customer_tier: 'A',
      cluster_type: 'ELASTIC',
      region: 'EU (eu-west-1)',
      engine_version: '3.3.1',
      resource_state: 'RUNNING',
      node_count: 3,
    },
  ]);
  // 60 issues over 20 days: every window below holds some and leaves some out.
  await putIssues(Array.from({ length: 60 }, (_, n) => issue(n, n * 8 + 1)));
});

useFreshIssueCache(dropIssueListCache, () => requests.reset());

describe('a list read with nothing changed', () => {
  it('reads the marker only: not the window, not the page', async () => {
    const now = new Date();
    const first = await listIssues(ADMIN, query({ days: '7' }), now);
    expect(first.total).toBeGreaterThan(10);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 1, records: 1 });
    requests.reset();
    expect(await listIssues(ADMIN, query({ days: '7' }), now)).toEqual(first);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 0 });
    expect(requests.counts.other).toBe(0);
    // The KPIs of the window read the same held summaries.
    requests.reset();
    const kpis = await issueKpis(7, now);
    expect(kpis.total).toBe(first.total);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 0 });
  });

  it('simultaneous misses in one container share one read of the window', async () => {
    const now = new Date();
    const answers = await Promise.all([1, 2, 3].map(() => listIssues(ADMIN, query({ days: '7' }), now)));
    expect(answers[1]).toEqual(answers[0]);
    expect(requests.counts.window).toBe(1);
    expect(requests.counts.marker).toBe(3);
  });

  it('another page or filter of the window reads only the records not held', async () => {
    const now = new Date();
    await listIssues(ADMIN, query({ days: '7', page_size: '5' }), now);
    requests.reset();
    await listIssues(ADMIN, query({ days: '7', page_size: '5', page: '2' }), now);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 1 });
    requests.reset();
    await listIssues(ADMIN, query({ days: '7', page_size: '10' }), now); // pages 1 and 2 of 5: held
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 0 });
  });

  it('answers exactly what an uncached read answers, and what the window read by hand gives, for every filter and page', async () => {
    const now = new Date();
    const queries: Record<string, string>[] = [
      {},
      { days: '0' },
      { days: '0.25' },
      { days: '3' },
      { days: '30', page: '2', page_size: '7' },
      { days: '30', page: '99' },
      { days: '30', severities: 'critical' },
      { days: '30', status: 'Ongoing' },
      { days: '30', status: 'Resolved', customer: 'Customer 1' },
      { days: '30', cluster: 'prod-2', triage: 'Investigating' },
      { days: '30', search: 'alert3' },
      { days: '365', search: 'nothing matches this' },
    ];
    for (const q of queries) {
      const parsed = query(q);
      dropIssueListCache();
      const uncached = await listIssues(ADMIN, parsed, now);
      const cached = await listIssues(ADMIN, parsed, now);
      expect(cached, JSON.stringify(q)).toEqual(uncached);
      // By hand, as the list was computed before the cache: filter the window, sort, slice.
      const inWindow = await listIssueSummariesSince(windowStart(parsed.days, now));
      const found = inWindow.filter((i) => matches(i, parsed)).sort(newestFirst);
      const start = (parsed.page - 1) * parsed.page_size;
      expect(ids(cached.issues), JSON.stringify(q)).toEqual(ids(found.slice(start, start + parsed.page_size)));
      expect(cached).toMatchObject({
        total: found.length,
        total_pages: Math.ceil(found.length / parsed.page_size),
        customers: distinct(inWindow.map((i) => i.customer_name)),
        clusters: distinct(inWindow.map((i) => i.cluster_name)),
      });
      expect(await issueKpis(parsed.days, now)).toEqual({ ...kpiCounts(inWindow, now, await activeUsernames()), source: 'live' });
    }
  });

  it('a later read of the same window is served from the held one, without what left the window meanwhile', async () => {
    const now = new Date();
    const cached = await listIssues(ADMIN, query({ days: '1', page_size: '100' }), now);
    // Eight hours later the window starts eight hours later: issues resolved in those hours are out of it.
    const later = new Date(now.getTime() + 8 * 3_600_000);
    requests.reset();
    const fromHeld = await listIssues(ADMIN, query({ days: '1', page_size: '100' }), later);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 0 });
    dropIssueListCache();
    expect(fromHeld).toEqual(await listIssues(ADMIN, query({ days: '1', page_size: '100' }), later));
    expect(fromHeld.total).toBeLessThan(cached.total);
    // An earlier start than the held window's is read afresh.
    requests.reset();
    await listIssues(ADMIN, query({ days: '1', page_size: '100' }), later);
    await listIssues(ADMIN, query({ days: '1', page_size: '100' }), now);
    expect(requests.counts.window).toBe(1);
  });
});

describe('every issue write is on the very next read', () => {
  it('a triage PATCH, with the window read again', async () => {
    const before = await listIssues(ADMIN, query({ days: '7' }));
    const target = before.issues.find((i) => i.triage_status !== 'Acknowledged')!;
    await updateTriage(ADMIN, target.issue_id, { triage_status: 'Acknowledged', notes: 'on it' }, CALLER);
    requests.reset();
    const after = await listIssues(ADMIN, query({ days: '7' }));
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 1, records: 1 });
    expect(after.issues.find((i) => i.issue_id === target.issue_id)).toMatchObject({ triage_status: 'Acknowledged', notes: 'on it', updated_by: 'admin' });
    expect(ids((await listIssues(ADMIN, query({ days: '7', triage: 'Acknowledged', page_size: '100' }))).issues)).toContain(target.issue_id);
  });

  it('simultaneous triage of 20 different issues all apply (the marker in every transaction costs retries, not failures)', async () => {
    const targets = (await listIssues(ADMIN, query({ days: '30', page_size: '20' }))).issues;
    expect(targets).toHaveLength(20);
    const before = await currentIssuesGeneration();
    const notes = `batch ${randomUUID().slice(0, 6)}`;
    await Promise.all(targets.map((t) => updateTriage(ADMIN, t.issue_id, { notes }, CALLER)));
    expect(await currentIssuesGeneration()).toBe(before + 20);
    const after = await listIssues(ADMIN, query({ days: '30', page_size: '20' }));
    expect(after.issues.map((i) => i.notes)).toEqual(targets.map(() => notes));
  });

  it("a new alert's grouping through the ingest, and its resolution by the quiet period", async () => {
    const startsAt = new Date(Date.now() - 40 * 60_000).toISOString();
    const endsAt = new Date(Date.now() - 10 * 60_000).toISOString();
    const name = `CacheProbe${randomUUID().slice(0, 6)}`;
    const notice = (status: 'firing' | 'resolved') => ({
      status,
      labels: { alertname: name, cluster_id: liveCluster, severity: 'warning' },
      annotations: {},
      startsAt,
      endsAt: status === 'resolved' ? endsAt : '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus/graph',
    });
    expect((await listIssues(ADMIN, query({ search: name }))).total).toBe(0);
    await listIssues(ADMIN, query({ search: name })); // held
    expect((await ingestAlerts([notice('firing')])).issues.created).toBe(1);
    const listed = await listIssues(ADMIN, query({ search: name }));
    expect(listed.issues).toEqual([expect.objectContaining({ issue_name: name, status: 'Ongoing', cluster_name: 'prod-live' })]);

    // Resolved 10 minutes ago: Ongoing through the 30 minutes' quiet period, then a grouping run resolves it.
    await ingestAlerts([notice('resolved')]);
    expect((await listIssues(ADMIN, query({ search: name }))).issues[0]).toMatchObject({ status: 'Ongoing' });
    const later = new Date(Date.now() + 25 * 60_000);
    await listIssues(ADMIN, query({ search: name }), later); // held at this generation
    expect(await regroupClusters([liveCluster], later)).toMatchObject({ updated: 1, removed: 0, failed: 0 });
    expect((await listIssues(ADMIN, query({ search: name }), later)).issues[0]).toMatchObject({ status: 'Resolved', resolved_at: endsAt });
  });

  it('a ticket claim and its release move the marker; a failed claim and a regrouping that writes nothing do not', async () => {
    const generation = async () => currentIssuesGeneration();
    let g = await generation();
    const target = (await listIssues(ADMIN, query({ days: '7' }))).issues[0]!;
    await claimTicket(target.issue_id, 'token-1', new Date(Date.now() - 60_000));
    expect(await generation()).toBe(g + 1);
    expect((await getIssue(target.issue_id))?.ticket_claim).toBe('token-1');
    await releaseTicketClaim(target.issue_id, 'token-1');
    expect(await generation()).toBe(g + 2);
    g += 2;
    // A failed claim (the issue holds a claim) moves nothing.
    await claimTicket(target.issue_id, 'token-2', new Date(Date.now() - 60_000));
    await expect(claimTicket(target.issue_id, 'token-3', new Date(Date.now() - 60_000))).rejects.toThrow('conditional write failed');
    expect(await generation()).toBe(g + 1);
    await releaseTicketClaim(target.issue_id, 'token-2');
    g += 2;

    const quiet = randomUUID();
    expect(await regroupClusters([quiet])).toMatchObject({ created: 0, failed: 0 });
    expect(await generation()).toBe(g);
  });

  it('regrouping without alerts removes a stored untriaged issue, on the next read', async () => {
    const lone = randomUUID();
    const stored = { ...issue(1, 2), issue_id: `iss-lone-${lone.slice(0, 8)}`, cluster_id: lone, group_key: `cluster=${lone}|alert_name=Alert1` };
    await putIssues([{ ...stored, status: 'Ongoing', resolved_at: null }]);
    expect(ids((await listIssues(ADMIN, query({ days: '1', page_size: '100' }))).issues)).toContain(stored.issue_id);
    expect(await regroupClusters([lone])).toMatchObject({ removed: 1, failed: 0 });
    expect(await listClusterIssues(lone)).toEqual([]);
    expect(ids((await listIssues(ADMIN, query({ days: '1', page_size: '100' }))).issues)).not.toContain(stored.issue_id);
  });
});

describe('two containers', () => {
  /** A fresh copy of the modules, with a cache and a DynamoDB client of its own: a second container. */
  async function container() {
    vi.resetModules();
    const queries = await import('../../shared/issues/queries.js');
    const triage = await import('../../shared/issues/triage.js');
    const cache = await import('../../shared/issues/list-cache.js');
    cache.issueCacheSettings.settleMs = 0;
    return { queries, triage };
  }

  it("see each other's writes through the marker, and hold their reads otherwise", async () => {
    const a = await container();
    const b = await container();
    const q = query({ days: '7', page_size: '100' });
    const first = await a.queries.listIssues(ADMIN, q);
    expect((await b.queries.listIssues(ADMIN, q)).total).toBe(first.total);
    // One container at a time, so what DynamoDB receives is that container's.
    for (const c of [a, b]) {
      requests.reset();
      await c.queries.listIssues(ADMIN, q);
      expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 0 });
    }

    // B triages: A's next read is afresh and shows it.
    const target = first.issues.find((i) => i.disposition_status !== 'False positive')!;
    await b.triage.updateTriage(ADMIN, target.issue_id, { disposition_status: 'False positive' }, CALLER);
    requests.reset();
    const seenByA = await a.queries.listIssues(ADMIN, q);
    expect(requests.counts.window).toBe(1);
    expect(seenByA.issues.find((i) => i.issue_id === target.issue_id)).toMatchObject({ disposition_status: 'False positive' });

    // A triages: B's next read shows it, and A's own too.
    await a.triage.updateTriage(ADMIN, target.issue_id, { disposition_status: 'Real issue' }, CALLER);
    for (const c of [a, b])
      expect((await c.queries.listIssues(ADMIN, q)).issues.find((i) => i.issue_id === target.issue_id)).toMatchObject({ disposition_status: 'Real issue' });

    // A write from this module instance (a third container: the ingest's grouping) reaches both.
    const extra = { ...issue(900, 1), issue_id: `iss-extra-${randomUUID().slice(0, 8)}` };
    await putIssues([extra]);
    for (const c of [a, b]) expect(ids((await c.queries.listIssues(ADMIN, q)).issues)).toContain(extra.issue_id);
  });
});

describe('bounds', () => {
  it('a read in the settling time after the marker moved is answered but not kept; one after it is kept', async () => {
    issueCacheSettings.settleMs = 2_000;
    const now = new Date();
    vi.useFakeTimers({ toFake: ['Date'], now });
    try {
      await listIssues(ADMIN, query({ days: '7' }), now); // this container sees the generation now
      vi.setSystemTime(now.getTime() + 1_999);
      await listIssues(ADMIN, query({ days: '7' }), now);
      expect(cacheReads(requests.counts)).toEqual({ marker: 2, window: 2, records: 2 });
      requests.reset();
      // A write: the new generation settles from when this container first sees it.
      await putIssues([{ ...issue(901, 1), issue_id: `iss-settle-${randomUUID().slice(0, 8)}` }]);
      requests.reset();
      vi.setSystemTime(now.getTime() + 10_000);
      await listIssues(ADMIN, query({ days: '7' }), now);
      vi.setSystemTime(now.getTime() + 11_999);
      await listIssues(ADMIN, query({ days: '7' }), now);
      expect(cacheReads(requests.counts)).toEqual({ marker: 2, window: 2, records: 2 });
      requests.reset();
      vi.setSystemTime(now.getTime() + 12_000);
      await listIssues(ADMIN, query({ days: '7' }), now);
      await listIssues(ADMIN, query({ days: '7' }), now);
      expect(cacheReads(requests.counts)).toEqual({ marker: 2, window: 1, records: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('the TTL bounds what is held even when the marker never moves', async () => {
    const now = new Date();
    vi.useFakeTimers({ toFake: ['Date'], now });
    try {
      await listIssues(ADMIN, query({ days: '7' }), now);
      vi.setSystemTime(now.getTime() + 59_999);
      requests.reset();
      await listIssues(ADMIN, query({ days: '7' }), now);
      expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 0 });
      vi.setSystemTime(now.getTime() + 60_000);
      await listIssues(ADMIN, query({ days: '7' }), now);
      expect(cacheReads(requests.counts)).toEqual({ marker: 2, window: 1, records: 1 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('at most `windows` windows, the least recently used dropped; a window over `summaries` is not kept', async () => {
    const now = new Date();
    for (const days of [1, 2, 3, 4, 5]) await listIssues(ADMIN, query({ days: String(days) }), now);
    requests.reset();
    for (const days of [2, 3, 4, 5]) await listIssues(ADMIN, query({ days: String(days) }), now);
    expect(requests.counts.window).toBe(0);
    await listIssues(ADMIN, query({ days: '1' }), now);
    expect(requests.counts.window).toBe(1);

    issueCacheSettings.summaries = 5;
    dropIssueListCache();
    requests.reset();
    await listIssues(ADMIN, query({ days: '30' }), now);
    await listIssues(ADMIN, query({ days: '30' }), now);
    expect(requests.counts.window).toBe(2);
  });

  it('at most `records` full records', async () => {
    issueCacheSettings.records = 5;
    const now = new Date();
    await listIssues(ADMIN, query({ days: '30', page_size: '5' }), now);
    await listIssues(ADMIN, query({ days: '30', page_size: '5', page: '2' }), now);
    requests.reset();
    await listIssues(ADMIN, query({ days: '30', page_size: '5', page: '2' }), now);
    expect(requests.counts.records).toBe(0);
    await listIssues(ADMIN, query({ days: '30', page_size: '5' }), now);
    expect(requests.counts.records).toBe(1);
  });
});
