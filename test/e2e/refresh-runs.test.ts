// Refresh and recompute in the recompute worker (issue 21 §2), through the local
// server (the worker runs in-process, as registerLocalWorkers starts it): with
// REFRESH_WAIT_SECONDS=0 every refresh route answers 202 `running` at once, and
// GET <route>/{refresh_id} answers the run until it is done, then exactly the
// route's contract answer; concurrent requests of the same kinds join one run.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { putItem } from '../../shared/db/client.js';
import { getCurrentRuleSet } from '../../shared/db/rules.js';
import { getRefresh } from '../../shared/db/scores.js';
import { checkRuleText } from '../../shared/rules/check.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import { RefreshRunning } from '../../shared/routes/dashboard-schemas.js';
import * as z from '../../shared/zod.js';
import { allRoutes } from '../../shared/routes/all-groups.js';
import { routeKey } from '../../shared/http/route.js';
import { localWorkersSettled } from '../../shared/worker-invoke.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';

let service: LocalService;
let token: string;

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'refresh-admin-password', demoClusters: 12 });
  const res = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'refresh-admin-password' }),
  });
  token = ((await res.json()) as { access_token: string }).access_token;
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

afterEach(async () => {
  delete process.env.REFRESH_WAIT_SECONDS;
  await localWorkersSettled();
});

async function call(method: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, { method, headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

const ROUTES = ['/api/fleet/refresh', '/api/health/refresh', '/api/settings/recompute', '/api/settings/recompute-risk'];
const responseOf = (method: string, path: string) => allRoutes().find((r) => routeKey(r.route) === `${method} ${path}`)!.route.response!;

describe('refresh runs in the recompute worker', () => {
  it.each(ROUTES)('%s with REFRESH_WAIT_SECONDS=0 answers 202 at once, and its follow route answers the contract when done', async (path) => {
    process.env.REFRESH_WAIT_SECONDS = '0';
    const started = await call('POST', path);
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(z.strictObject(RefreshRunning.shape).safeParse(started.body).success, JSON.stringify(started.body)).toBe(true);
    const id = started.body.refresh_id as string;
    expect(started.body.message).toContain(`GET ${path}/${id}`);

    // Running: the follow route answers the same 202 (nothing has awaited the worker yet).
    const running = await call('GET', `${path}/${id}`);
    expect([200, 202]).toContain(running.status);
    if (running.status === 202) expect(running.body).toEqual(started.body);

    await localWorkersSettled();
    expect((await getRefresh(id))?.status).toBe('done');
    const done = await call('GET', `${path}/${id}`);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    // Exactly the contract's answer of the POST (strict: no running fields).
    const schema = responseOf('POST', path) as any;
    const parsed = (schema.strict ? schema.strict() : schema).safeParse(done.body);
    expect(parsed.success ? [] : parsed.error.issues.slice(0, 3)).toEqual([]);
    if (path === '/api/health/refresh') {
      expect(done.body.scores).toHaveLength(12);
      const overall = done.body.scores.map((s: any) => s.overall_score);
      expect(overall).toEqual([...overall].sort((a, b) => a - b));
    } else if (path === '/api/settings/recompute' || path === '/api/settings/recompute-risk') {
      expect(done.body.cluster_count).toBe(12);
    } else {
      expect(done.body.clusters_scored).toBe(12);
    }
  });

  it('answers 200 with the contract fields when the worker finishes within the wait (the default)', async () => {
    const res = await call('POST', '/api/fleet/refresh');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['clusters_scored', 'critical', 'status', 'warning']);
  });

  it('a request while a refresh of the same kinds runs joins it; other kinds start their own', async () => {
    process.env.REFRESH_WAIT_SECONDS = '0';
    const [a, b, risk] = await Promise.all([
      call('POST', '/api/settings/recompute'),
      call('POST', '/api/settings/recompute'),
      call('POST', '/api/settings/recompute-risk'),
    ]);
    expect([a.status, b.status, risk.status]).toEqual([202, 202, 202]);
    expect(b.body.refresh_id).toBe(a.body.refresh_id);
    expect(risk.body.refresh_id).not.toBe(a.body.refresh_id);
    await localWorkersSettled();
    // Once it is done, the next request starts a new run.
    const next = await call('POST', '/api/settings/recompute');
    expect(next.body.refresh_id).not.toBe(a.body.refresh_id);
  });

  it('answers 404 for an unknown id, and for a run of other kinds than the route refreshes', async () => {
    expect((await call('GET', '/api/fleet/refresh/no-such-run')).status).toBe(404);
    process.env.REFRESH_WAIT_SECONDS = '0';
    const risk = await call('POST', '/api/settings/recompute-risk');
    await localWorkersSettled();
    expect((await call('GET', `/api/settings/recompute-risk/${risk.body.refresh_id}`)).status).toBe(200);
    expect((await call('GET', `/api/health/refresh/${risk.body.refresh_id}`)).status).toBe(404);
  });

  it('a failed run answers 503 with a sentence, on the POST and on its follow route; the cause stays in the log', async () => {
    // A stored rule set that no longer validates (written around the API) makes computing fail in the worker.
    const current = await getCurrentRuleSet('health-rules');
    const rules = (version: number, content: string, parsed?: unknown) =>
      putItem('rules', {
        pk: 'RULESET#health-rules',
        sk: 'CURRENT',
        version,
        content,
        ...(parsed ? { parsed: JSON.stringify(parsed) } : {}),
        updated_at: new Date().toISOString(),
        updated_by: 'test',
      });
    const text = defaultRuleText('health-rules');
    const shipped = checkRuleText('health-rules', text);
    if (!shipped.ok) throw new Error(shipped.message);
    await rules((current?.version ?? 0) + 1, 'scoring: {}');
    try {
      const res = await call('POST', '/api/fleet/refresh');
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/could not be refreshed/);
      expect(JSON.stringify(res.body)).not.toMatch(/validat/);

      process.env.REFRESH_WAIT_SECONDS = '0';
      const started = await call('POST', '/api/settings/recompute');
      expect(started.status).toBe(202);
      await localWorkersSettled();
      expect((await getRefresh(started.body.refresh_id))?.status).toBe('failed');
      const followed = await call('GET', `/api/settings/recompute/${started.body.refresh_id}`);
      expect(followed.status).toBe(503);
      expect(followed.body.detail).toMatch(/could not be recomputed/);
    } finally {
      await rules((current?.version ?? 0) + 2, text, shipped.value);
    }
  });
});
