// Scoring and dashboards through the real local server on the demo fleet.
import { randomUUID } from 'node:crypto';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putItem } from '../../shared/db/client.js';
import { getCurrentRuleSet, writeRuleSetVersion } from '../../shared/db/rules.js';
import { bumpGeneration } from '../../shared/db/scores.js';
import { routeKey } from '../../shared/http/route.js';
import { allRoutes } from '../../shared/routes/all-groups.js';
import { checkRuleText } from '../../shared/rules/check.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';

let service: LocalService;

function checked(text: string): Record<string, unknown> {
  const result = checkRuleText('health-rules', text);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}
let token: string;

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'dash-admin-password', demoClusters: 24 });
  const res = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'dash-admin-password' }),
  });
  token = ((await res.json()) as { access_token: string }).access_token;
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

async function call(method: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, { method, headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

const DASHBOARD_GROUPS = ['fleet', 'health', 'risk', 'analysis', 'critical-clusters'];

describe('dashboards on the demo fleet', () => {
  it('answers every dashboard endpoint with every field of the spec, typed', async () => {
    // Following a refresh (GET …/{refresh_id}, issue 21 §2) needs a run's id: test/e2e/refresh-runs.test.ts.
    const routes = allRoutes().filter(
      (r) =>
        (DASHBOARD_GROUPS.includes(r.group.name) || ['POST /api/settings/recompute', 'POST /api/settings/recompute-risk'].includes(routeKey(r.route))) &&
        !r.route.path.endsWith('/{refresh_id}'),
    );
    expect(routes).toHaveLength(17);
    for (const { route } of routes) {
      const { status, body } = await call(route.method, route.path);
      expect(status, routeKey(route)).toBe(200);
      expect(route.response, `${routeKey(route)} declares its response`).toBeDefined();
      const parsed = route.response!.safeParse(body);
      expect(parsed.success ? [] : parsed.error.issues.slice(0, 3), routeKey(route)).toEqual([]);
    }
  });

  it('orders worst first and makes the KPIs add up', async () => {
    const { body } = await call('GET', '/api/fleet/scores');
    expect(body.source).toBe('unified');
    expect(body.scores).toHaveLength(24);
    const adjusted = body.scores.map((s: any) => s.tier_adjusted_score);
    expect(adjusted).toEqual([...adjusted].sort((a, b) => a - b));
    const { body: k } = await call('GET', '/api/fleet/kpis');
    expect(k.kpis.healthy_count + k.kpis.warning_count + k.kpis.critical_count).toBe(k.kpis.total_clusters);
    expect(k.kpis.total_clusters).toBe(24);
    // most healthy, some not
    expect(k.kpis.healthy_count).toBeGreaterThan(12);
    expect(k.kpis.warning_count + k.kpis.critical_count).toBeGreaterThan(0);
    const { body: critical } = await call('GET', '/api/fleet/critical');
    expect(critical.total).toBe(k.kpis.warning_count + k.kpis.critical_count);
    expect(critical.clusters.every((c: any) => c.classification !== 'Healthy')).toBe(true);
    const { body: cc } = await call('GET', '/api/critical-clusters');
    const scores = cc.clusters.map((c: any) => c.severity_score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('serves from the cache until a refresh, here or in another container (generation marker)', async () => {
    const first = (await call('GET', '/api/health/scores')).body.generated_at;
    expect((await call('GET', '/api/health/kpis')).body.generated_at).toBe(first);
    const refreshed = await call('POST', '/api/health/refresh');
    expect(refreshed.body.refreshed).toBe(true);
    expect(refreshed.body.generated_at > first).toBe(true);
    expect((await call('GET', '/api/health/scores')).body.generated_at).toBe(refreshed.body.generated_at);
    // another container's refresh bumps the marker: this container recomputes on its next GET
    await bumpGeneration();
    expect((await call('GET', '/api/health/scores')).body.generated_at > refreshed.body.generated_at).toBe(true);
  });

  it('changing a threshold in the rules and refreshing changes the classification it should', async () => {
    const before = (await call('GET', '/api/fleet/scores')).body.scores as any[];
    const healthyBefore = before.filter((s) => s.classification === 'Healthy').length;
    // Disk above 20% is now red: every cluster's disk dimension drops, so fewer are Healthy.
    const rules = parse(defaultRuleText('health-rules'));
    const disk = rules.scoring.dimensions.find((d: any) => d.metric_key === 'disk_used_pct');
    Object.assign(disk, { green: 5, yellow: 10, red: 20, weight: 60 });
    const current = await getCurrentRuleSet('health-rules');
    const text = stringify(rules);
    await writeRuleSetVersion('health-rules', text, checked(text), current?.version ?? 0, 'test');

    expect((await call('GET', '/api/fleet/rules')).body.dimensions.find((d: any) => d.metric_key === 'disk_used_pct').red).toBe(20);
    const refresh = await call('POST', '/api/fleet/refresh');
    expect(refresh.body).toMatchObject({ status: 'ok', clusters_scored: 24 });
    const after = (await call('GET', '/api/fleet/scores')).body.scores as any[];
    expect(after.filter((s) => s.classification === 'Healthy').length).toBeLessThan(healthyBefore);
    const sample = after.find((s) => s.metrics.disk_used_pct > 30)!;
    expect(sample.top_risk).toBe('Disk Usage (0)');
    expect(sample.risk_reasons[0]).toMatch(/^Disk Usage at [\d.]+ \(red >= 20\)$/);
    // restore the shipped rules for the tests after this one
    await writeRuleSetVersion(
      'health-rules',
      defaultRuleText('health-rules'),
      checked(defaultRuleText('health-rules')),
      (await getCurrentRuleSet('health-rules'))!.version,
      'test',
    );
    await call('POST', '/api/fleet/refresh');
  });

  it('scores a cluster without metrics on what it has and names what is missing', async () => {
    const id = randomUUID();
    const ingest = await fetch(`${service.url}/api/ingest/clusters`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.ingestToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        clusters: [
          {
            cluster_id: id,
            cluster_name: 'zz-new-cluster',
            customer_name: 'Oceanic Air',
            account_id: '999',
            account_name: 'Oceanic',
            email: 'ops@oceanic.example.com',
            customer_tier: 'B',
            cluster_type: 'ELASTIC',
            region: 'US East (us-east-1)',
            engine_version: '3.3.5',
            resource_state: 'RUNNING',
            node_count: 3,
          },
        ],
      }),
    });
    expect(ingest.status).toBe(200);
    await call('POST', '/api/settings/recompute');
    const score = ((await call('GET', '/api/fleet/scores')).body.scores as any[]).find((s) => s.cluster_id === id);
    expect(score).toMatchObject({ dimension_scores: [], metrics_score: 100, metrics: { disk_used_pct: null, node_count: 3 } });
    expect(score.risk_reasons).toContain('No Disk Usage data in the last 7 days');
    const snapshot = ((await call('GET', '/api/risk/snapshots')).body.clusters as any[]).find((s) => s.cluster_id === id);
    expect(snapshot).toMatchObject({ risk_level: 'Healthy', metrics: {} });
  });

  it('answers 503 when the health refresh fails, and keeps serving the cached scores', async () => {
    await call('GET', '/api/health/scores');
    // A stored rule set that no longer validates (written around the API) makes computing fail.
    const current = await getCurrentRuleSet('health-rules');
    await putItem('rules', {
      pk: 'RULESET#health-rules',
      sk: 'CURRENT',
      version: (current?.version ?? 0) + 1,
      content: 'scoring: {}',
      updated_at: new Date().toISOString(),
      updated_by: 'test',
    });
    try {
      const res = await call('POST', '/api/health/refresh');
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/could not be refreshed/);
      expect(JSON.stringify(res.body)).not.toMatch(/no longer validates/);
      // the last good scores are still served from the cache
      expect((await call('GET', '/api/health/scores')).status).toBe(200);
    } finally {
      const text = defaultRuleText('health-rules');
      await putItem('rules', {
        pk: 'RULESET#health-rules',
        sk: 'CURRENT',
        version: (current?.version ?? 0) + 2,
        content: text,
        parsed: JSON.stringify(checked(text)),
        updated_at: new Date().toISOString(),
        updated_by: 'test',
      });
    }
  });
});
