// The AI issues list's per-container cache behind the AI issues' generation
// marker (as the rule issues' one, test/issues/list-cache.test.ts), through
// DynamoDB Local with every request to the AI issues table counted: a repeated
// list or KPI read costs one marker read, a triage and a regrouping that
// writes are on the very next read, and the answers are an uncached read's.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { aiIssueKpis, dropAiIssueListCache, listAiIssues, updateAiTriage } from '../../shared/ai-issues/queries.js';
import { regroupAiClusters, regroupAiRecent } from '../../shared/ai-issues/regroup.js';
import type { Principal } from '../../shared/auth/principal.js';
import { currentAiIssuesGeneration, getAiGroupingState, NO_FINGERPRINT } from '../../shared/db/ai-issues.js';
import { listClusters } from '../../shared/db/clusters.js';
import { ingestAlerts } from '../../shared/fleet/ingest.js';
import { IssueListQuery } from '../../shared/routes/common.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';
import { cacheReads, countCacheReads, useFreshIssueCache } from '../support/issue-cache.js';

const ADMIN: Principal = { userId: 'u-admin', username: 'admin', name: 'Admin', email: 'admin@example.com', role: 'admin' };
const CALLER = { ip: '127.0.0.1', userAgent: 'vitest' };

const query = (q: Record<string, string> = {}) => IssueListQuery.parse({ days: '30', ...q });
let requests: ReturnType<typeof countCacheReads>;
let clusterIds: string[];
let proxy: DynamoProxy;

/** A new firing alert on `cluster`, named `name`. */
const fire = (cluster: string, name: string) =>
  ingestAlerts([
    {
      status: 'firing',
      labels: { alertname: name, cluster_id: cluster, severity: 'critical' },
      annotations: {},
      startsAt: new Date(Date.now() - 5 * 60_000).toISOString(),
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus/graph',
    },
  ]);

const refused = { type: 'ValidationException', message: 'refused by the test' };
const aiTable = (input: Record<string, any>) => String(input.TableName ?? '').endsWith('ai-issues');

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  requests = countCacheReads(proxy, 'ai-issues');
  await loadDemoFleet(6);
  clusterIds = (await listClusters()).map((c) => c.cluster_id);
  // No provider configured: grouped by rules.
  expect((await regroupAiRecent()).regrouped).toBeGreaterThan(0);
});

useFreshIssueCache(dropAiIssueListCache, () => requests.reset());

describe('an AI issues read with nothing changed', () => {
  it('reads the marker only: not the window, not the page; the KPIs read the same held window', async () => {
    const now = new Date();
    const first = await listAiIssues(ADMIN, query({ page_size: '5' }), now);
    expect(first.total).toBeGreaterThan(5);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 1, records: 1 });
    requests.reset();
    expect(await listAiIssues(ADMIN, query({ page_size: '5' }), now)).toEqual(first);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 0 });
    requests.reset();
    expect((await aiIssueKpis(30, now)).total).toBe(first.total);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 0 });
    requests.reset();
    // Another page of the held window reads only its own records.
    await listAiIssues(ADMIN, query({ page_size: '5', page: '2' }), now);
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 0, records: 1 });
  });

  it('answers what a new container answers, for filters and pages', async () => {
    const now = new Date();
    const cases: Record<string, string>[] = [{ page_size: '4', page: '2' }, { status: 'Ongoing' }, { severity: 'Critical' }, { days: '3' }, { search: 'prod' }];
    for (const q of cases) await listAiIssues(ADMIN, query(q), now); // held
    for (const q of cases) {
      const held = await listAiIssues(ADMIN, query(q), now);
      dropAiIssueListCache();
      expect(held, JSON.stringify(q)).toEqual(await listAiIssues(ADMIN, query(q), now));
    }
  });
});

describe('every AI issue write is on the very next read', () => {
  it('a triage PATCH moves the marker in its transaction', async () => {
    const before = await listAiIssues(ADMIN, query({ page_size: '5' }));
    const target = before.issues[0]!;
    const generation = await currentAiIssuesGeneration();
    const notes = `on it ${randomUUID().slice(0, 6)}`;
    await updateAiTriage(ADMIN, target.issue_id, { notes, triage_status: 'Acknowledged' }, CALLER);
    expect(await currentAiIssuesGeneration()).toBe(generation + 1);
    requests.reset();
    const after = await listAiIssues(ADMIN, query({ page_size: '5' }));
    expect(cacheReads(requests.counts)).toEqual({ marker: 1, window: 1, records: 1 });
    expect(after.issues.find((i) => i.issue_id === target.issue_id)).toMatchObject({ notes, triage_status: 'Acknowledged', updated_by: 'admin' });
  });

  it("a new alert's regrouping is listed at once; a regrouping that writes nothing moves nothing", async () => {
    const cluster = clusterIds[0]!;
    const name = `AiCacheProbe${randomUUID().slice(0, 6)}`;
    expect((await listAiIssues(ADMIN, query({ search: name }))).total).toBe(0);
    await listAiIssues(ADMIN, query({ search: name })); // held
    await fire(cluster, name);
    const generation = await currentAiIssuesGeneration();
    expect(await regroupAiClusters([cluster])).toMatchObject({ regrouped: 1, failed: 0 });
    expect(await currentAiIssuesGeneration()).toBe(generation + 1);
    const listed = await listAiIssues(ADMIN, query({ search: name }));
    expect(listed.total).toBe(1);
    expect(listed.issues[0]).toMatchObject({ issue_name: expect.stringContaining(name), status: 'Ongoing' });

    expect(await regroupAiClusters([cluster])).toMatchObject({ unchanged: 1 });
    expect(await currentAiIssuesGeneration()).toBe(generation + 1);
  });

  it('a regrouping that fails after writing its issues still moves the marker', async () => {
    const cluster = clusterIds[1]!;
    const name = `AiCacheFail${randomUUID().slice(0, 6)}`;
    await listAiIssues(ADMIN, query({ search: name })); // held
    await fire(cluster, name);
    const generation = await currentAiIssuesGeneration();
    // The run's last write, its state with the new fingerprint, is refused: the issues are written, the run fails.
    const stop = proxy.watch(({ operation, input }) =>
      operation === 'PutItem' && aiTable(input) && String(input.Item?.pk?.S).startsWith('AISTATE#') && input.Item?.fingerprint?.S !== NO_FINGERPRINT
        ? refused
        : undefined,
    );
    try {
      expect(await regroupAiClusters([cluster])).toMatchObject({ regrouped: 0, failed: 1 });
    } finally {
      stop();
    }
    expect(await currentAiIssuesGeneration()).toBe(generation + 1);
    expect((await listAiIssues(ADMIN, query({ search: name }))).total).toBe(1);
  });

  it('a marker that cannot move leaves the cluster to the next pass, which moves it', async () => {
    const cluster = clusterIds[2]!;
    const name = `AiCacheMarker${randomUUID().slice(0, 6)}`;
    await fire(cluster, name);
    const generation = await currentAiIssuesGeneration();
    const stop = proxy.watch(({ operation, input }) => (operation === 'UpdateItem' && aiTable(input) && input.Key?.pk?.S === 'CACHE' ? refused : undefined));
    try {
      expect(await regroupAiClusters([cluster])).toMatchObject({ regrouped: 0, failed: 1 });
    } finally {
      stop();
    }
    expect(await currentAiIssuesGeneration()).toBe(generation);
    expect((await getAiGroupingState(cluster))?.fingerprint).toBe(NO_FINGERPRINT);
    expect(await regroupAiClusters([cluster])).toMatchObject({ regrouped: 1, failed: 0 });
    expect(await currentAiIssuesGeneration()).toBe(generation + 1);
    expect((await listAiIssues(ADMIN, query({ search: name }))).total).toBe(1);
  });
});
