// Conditional reads of the watch pages (RFC 9110 §8.8.3, §13.1.2; RFC 9111) through the real local server on
// the demo fleet: a weak ETag and `private, no-cache` on the reads a console asks again every minute, 304 with no
// body to an If-None-Match that names it (or `*`), a new validator once the answer changes (an ingest, a refresh,
// a triage), one per query, HEAD as its GET; every other answer stays `no-store`. Decision: shared/http/README.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { dropFleetViewCache } from '../../shared/scoring/fleet-view.js';
import { allRoutes } from '../../shared/routes/all-groups.js';
import { routeKey } from '../../shared/http/route.js';
import { clusterRecord } from '../scoring/fixtures.js';
import { addUser, apiLogin } from '../support/browser.js';
import { startTestService } from '../support/local-service.js';

const PASSWORD = 'conditional-admin-password';
let service: LocalService;
let admin: string;
let viewer: string;

beforeAll(async () => {
  service = await startTestService({ adminPassword: PASSWORD, demoClusters: 12 });
  admin = await apiLogin(service.url, 'admin', PASSWORD);
  await addUser(service.url, admin, { email: 'cond-viewer@example.com', name: 'Cond Viewer', role: 'viewer', password: 'cond-viewer-password' });
  viewer = await apiLogin(service.url, 'cond-viewer@example.com', 'cond-viewer-password');
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

interface Answer {
  status: number;
  etag: string | null;
  cacheControl: string | null;
  text: string;
}

async function get(path: string, ifNoneMatch?: string, { method = 'GET', token = admin }: { method?: string; token?: string } = {}): Promise<Answer> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch }) },
  });
  return { status: res.status, etag: res.headers.get('etag'), cacheControl: res.headers.get('cache-control'), text: await res.text() };
}

const REVALIDATING = [
  '/api/fleet/scores',
  '/api/fleet/kpis',
  '/api/fleet/critical',
  '/api/health/scores',
  '/api/health/kpis',
  '/api/health/enrichment',
  '/api/risk/snapshots',
  '/api/critical-clusters',
  '/api/issues',
  '/api/issues/kpis',
  '/api/ai-issues',
  '/api/ai-issues/kpis',
];

describe('conditional reads', { timeout: 90_000 }, () => {
  it('the route table declares exactly the watch pages’ reads as revalidating', () => {
    const declared = allRoutes()
      .filter((r) => r.route.revalidate)
      .map((r) => routeKey(r.route));
    expect(declared.sort()).toEqual(REVALIDATING.map((p) => `GET ${p}`).sort());
  });

  it('every watch read answers a weak ETag and private, no-cache, and 304 with no body while it holds', async () => {
    for (const path of REVALIDATING) {
      const first = await get(path);
      expect(first.status, path).toBe(200);
      expect(first.etag, path).toMatch(/^W\/"[!#-~]+"$/);
      expect(first.cacheControl, path).toBe('private, no-cache');
      const again = await get(path, first.etag!);
      expect([again.status, again.text, again.etag, again.cacheControl], path).toEqual([304, '', first.etag, 'private, no-cache']);
    }
    // Every other answer stays no-store, with no ETag: other reads (sent If-None-Match too), errors.
    const rules = await get('/api/fleet/rules', '*');
    expect([rules.status, rules.cacheControl, rules.etag]).toEqual([200, 'no-store', null]);
    const refused = await get('/api/fleet/scores', '*', { token: 'not-a-token' });
    expect([refused.status, refused.cacheControl]).toEqual([401, 'no-store']);
    const invalid = await get('/api/issues?days=abc', '*');
    expect([invalid.status, invalid.cacheControl]).toEqual([422, 'no-store']);
  });

  it('HEAD answers as its GET: the same ETag, and 304 to a matching If-None-Match', async () => {
    const full = await get('/api/fleet/scores');
    const head = await get('/api/fleet/scores', undefined, { method: 'HEAD' });
    expect([head.status, head.etag, head.cacheControl, head.text]).toEqual([200, full.etag, 'private, no-cache', '']);
    const conditional = await get('/api/fleet/scores', full.etag!, { method: 'HEAD' });
    expect([conditional.status, conditional.etag]).toEqual([304, full.etag]);
  });

  it('If-None-Match as RFC 9110 reads it: *, a list, weak comparison; a malformed field is ignored (full answer)', async () => {
    const { etag } = await get('/api/risk/snapshots');
    const opaque = etag!.slice(2);
    const status = async (header: string) => (await get('/api/risk/snapshots', header)).status;
    expect(await status('*')).toBe(304);
    expect(await status(`"other", ${etag}`)).toBe(304);
    expect(await status(`W/"a",,  ${etag} ,`)).toBe(304);
    // Weak comparison (§8.8.3.2): the opaque tags match whether either is weak.
    expect(await status(opaque)).toBe(304);
    expect(await status('"other"')).toBe(200);
    expect(await status('W/"other", "more"')).toBe(200);
    // Not a valid field value: evaluated as if absent.
    expect(await status(opaque.slice(1, -1))).toBe(200);
    expect(await status(`${etag} junk`)).toBe(200);
    expect(await status(`w/${opaque}`)).toBe(200);
    expect(await status(`${etag} ${etag}`)).toBe(200);
    expect(await status('')).toBe(200);
  });

  it('one validator per query: defaults applied, a different query never shares one', async () => {
    const week = await get('/api/issues?days=7');
    const same = await get('/api/issues?days=7&page=1&page_size=20');
    const month = await get('/api/issues?days=30');
    const kpisWeek = await get('/api/issues/kpis?days=7');
    const kpisMonth = await get('/api/issues/kpis?days=30');
    expect(same.etag).toBe(week.etag);
    expect(month.etag).not.toBe(week.etag);
    expect(kpisMonth.etag).not.toBe(kpisWeek.etag);
    expect((await get('/api/issues?days=30', week.etag!)).status).toBe(200);
    expect((await get('/api/issues?days=7&page=1', week.etag!)).status).toBe(304);
  });

  it("?cluster_id= answers one cluster's item of each whole-fleet answer, under a validator of its own; an unknown id none", async () => {
    dropFleetViewCache(); // every answer below from one view
    const lists = { '/api/fleet/scores': 'scores', '/api/health/scores': 'scores', '/api/risk/snapshots': 'clusters' } as const;
    for (const [path, key] of Object.entries(lists)) {
      const whole = await get(path);
      const items: { cluster_id: string }[] = JSON.parse(whole.text)[key];
      expect(items.length, path).toBeGreaterThan(2);
      const picked = items[1]!;
      // in any case, as the cluster page's path takes it
      const one = await get(`${path}?cluster_id=${picked.cluster_id.toUpperCase()}`);
      expect(one.status, path).toBe(200);
      const answer = JSON.parse(one.text);
      expect(answer[key], path).toEqual([picked]);
      expect(answer.generated_at, path).toBe(JSON.parse(whole.text).generated_at);
      expect(one.etag, path).toMatch(/^W\//);
      expect(one.etag, path).not.toBe(whole.etag);
      expect((await get(`${path}?cluster_id=${picked.cluster_id}`, one.etag!)).status, path).toBe(304);
      expect((await get(path, one.etag!)).status, path).toBe(200);
      const none = await get(`${path}?cluster_id=00000000-0000-4000-8000-000000000000`);
      expect([none.status, JSON.parse(none.text)[key]], path).toEqual([200, []]);
      expect(JSON.parse(none.text).source, path).toBe(JSON.parse(whole.text).source);
      expect((await get(`${path}?cluster_id=${'a'.repeat(129)}`)).status, path).toBe(422);
    }
    // the risk summary counts the cluster answered
    const [first] = JSON.parse((await get('/api/risk/snapshots')).text).clusters;
    const { summary } = JSON.parse((await get(`/api/risk/snapshots?cluster_id=${first.cluster_id}`)).text);
    const counts = { total: 1, critical: 0, warning: 0, healthy: 0, [String(first.risk_level).toLowerCase()]: 1 };
    expect(summary).toEqual(counts);
  });

  it('no answer of these reads depends on the role: a viewer and an admin get the same answer under the same validator', async () => {
    for (const path of ['/api/fleet/scores', '/api/issues?days=30']) {
      const a = await get(path);
      const v = await get(path, undefined, { token: viewer });
      expect(v.etag, path).toMatch(/^W\//);
      expect(v.etag, path).toBe(a.etag);
      expect(JSON.parse(v.text), path).toEqual(JSON.parse(a.text));
    }
  });

  it('a recomputation that changes nothing keeps the validator (generated_at is no part of it)', async () => {
    const before = await get('/api/fleet/kpis');
    // Another container, or this one past its 60 s: the view computed afresh from the same data, at another time.
    dropFleetViewCache();
    const after = await get('/api/fleet/kpis', before.etag!);
    expect([after.status, after.etag]).toEqual([304, before.etag]);
    dropFleetViewCache();
    const full = await get('/api/fleet/kpis');
    expect(JSON.parse(full.text).generated_at).not.toBe(JSON.parse(before.text).generated_at);
    expect(full.etag).toBe(before.etag);
  });

  it('an ingest that changes the fleet answers 200 with a new validator', async () => {
    const before = await get('/api/fleet/scores');
    const { created_at: _created, updated_at: _updated, ...cluster } = clusterRecord('cond-new-cluster');
    const res = await fetch(`${service.url}/api/ingest/clusters`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.ingestToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ clusters: [cluster] }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 1, rejected: [] });
    // The view is kept 60 s per container (shared/scoring/fleet-view.ts); past that, or in another one, it is computed afresh.
    dropFleetViewCache();
    const after = await get('/api/fleet/scores', before.etag!);
    expect(after.status).toBe(200);
    expect(after.etag).not.toBe(before.etag);
    expect(after.text).toContain('cond-new-cluster');
    expect((await get('/api/fleet/scores', after.etag!)).status).toBe(304);
  });

  it('a refresh answers 200 with a new validator and its generated_at', async () => {
    const before = await get('/api/health/scores');
    const refreshed = await fetch(`${service.url}/api/health/refresh`, { method: 'POST', headers: { Authorization: `Bearer ${admin}` } });
    expect(refreshed.status).toBe(200);
    const after = await get('/api/health/scores', before.etag!);
    expect(after.status).toBe(200);
    expect(after.etag).not.toBe(before.etag);
    expect(JSON.parse(after.text).generated_at).not.toBe(JSON.parse(before.text).generated_at);
  });

  it('a triage answers the issue list 200 with a new validator', async () => {
    const path = '/api/issues?days=365&status=Resolved';
    const before = await get(path);
    const issue = JSON.parse(before.text).issues[0];
    expect(issue, 'the demo fleet has a resolved issue').toBeDefined();
    expect((await get(path, before.etag!)).status).toBe(304);
    const patched = await fetch(`${service.url}/api/issues/${issue.issue_id}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ notes: `conditional ${before.etag}` }),
    });
    expect(patched.status).toBe(200);
    const after = await get(path, before.etag!);
    expect(after.status).toBe(200);
    expect(after.etag).not.toBe(before.etag);
    expect(after.text).toContain(`conditional ${before.etag!.replace(/"/g, '\\"')}`);
  });

  it('the OpenAPI document shows If-None-Match, the 304 and the headers', async () => {
    const doc = JSON.parse((await get('/api/openapi.json')).text);
    const op = doc.paths['/api/fleet/scores'].get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain('if-none-match');
    expect(Object.keys(op.responses['304'].headers).sort()).toEqual(['Cache-Control', 'ETag']);
    expect(Object.keys(op.responses['200'].headers).sort()).toEqual(['Cache-Control', 'ETag']);
    expect(doc.paths['/api/fleet/rules'].get.responses['304']).toBeUndefined();
  });
});
