// Issue 6 end to end on the demo fleet: an admin proposes a threshold change,
// sees which clusters it would move, a superadmin approves, and the next
// dashboards show exactly those moves without anyone pressing refresh.
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let admin: string;
let superadmin: string;

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'approval-admin-password', demoClusters: 40 });
  admin = await userToken('admin', 'approval-admin');
  superadmin = await userToken('superadmin', 'approval-super');
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

async function call(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const byId = (items: any[], field: string) => new Map(items.map((i) => [i.cluster_id, i[field]]));

describe('proposing, previewing and approving a rule change', () => {
  it('health rules: the impact names the clusters whose classification the approval then changes', async () => {
    const before = byId((await call(admin, 'GET', '/api/fleet/scores')).body.scores, 'classification');

    // The admin tightens disk usage: above 20% is red, and disk weighs heavily.
    const live = parse((await call(admin, 'GET', '/api/settings/health-rules')).body.content);
    Object.assign(live.scoring.dimensions.find((d: any) => d.metric_key === 'disk_used_pct'), { green: 5, yellow: 10, red: 20, weight: 60 });
    const proposal = await call(admin, 'PUT', '/api/settings/health-rules', { content: stringify(live) });
    expect(proposal.body).toMatchObject({ status: 'pending', applied: false });

    // Nothing applies yet.
    expect(byId((await call(admin, 'GET', '/api/fleet/scores')).body.scores, 'classification')).toEqual(before);

    const detail = (await call(admin, 'GET', `/api/settings/config-changes/${proposal.body.change_id}`)).body;
    const impact = detail.impact;
    expect(impact).toMatchObject({ measure: 'classification', clusters_total: before.size });
    expect(impact.changed_count).toBeGreaterThan(0);
    expect(impact.changes).toHaveLength(impact.changed_count);
    expect(impact.changes.every((c: any) => c.direction === 'worse' && before.get(c.cluster_id) === c.from)).toBe(true);
    expect(impact.before.Healthy + impact.before.Warning + impact.before.Critical).toBe(before.size);
    expect(impact.after.Healthy).toBe(impact.before.Healthy - impact.changes.filter((c: any) => c.from === 'Healthy').length);

    const review = await call(superadmin, 'POST', `/api/settings/config-changes/${proposal.body.change_id}/review`, { action: 'approve', note: 'disk is tight this quarter' });
    expect(review.body).toMatchObject({ status: 'approved', applied: true });

    // The very next read recomputes (the generation marker moved): exactly the previewed moves.
    const after = byId((await call(admin, 'GET', '/api/fleet/scores')).body.scores, 'classification');
    const moved = [...after].filter(([id, cls]) => before.get(id) !== cls).map(([id, cls]) => ({ cluster_id: id, from: before.get(id), to: cls }));
    expect(new Set(moved.map((m) => JSON.stringify(m)))).toEqual(new Set(impact.changes.map((c: any) => JSON.stringify({ cluster_id: c.cluster_id, from: c.from, to: c.to }))));
    expect((await call(admin, 'GET', '/api/fleet/rules')).body.dimensions.find((d: any) => d.metric_key === 'disk_used_pct').red).toBe(20);
  });

  it('risk rules: the impact names the clusters whose risk level the approval then changes', async () => {
    const before = byId((await call(admin, 'GET', '/api/risk/snapshots')).body.clusters, 'risk_level');
    const live = parse((await call(admin, 'GET', '/api/settings/risk-rules')).body.content);
    // Memory above 50% is critical now.
    const memory = live.risk.rules.find((r: any) => r.metric_key === 'memory_pct');
    Object.assign(memory, { warning: 40, critical: 50 });
    const proposal = (await call(admin, 'PUT', '/api/settings/risk-rules', { content: stringify(live) })).body;
    const impact = (await call(superadmin, 'GET', `/api/settings/config-changes/${proposal.change_id}`)).body.impact;
    expect(impact.measure).toBe('risk_level');
    expect(impact.changed_count).toBeGreaterThan(0);

    await call(superadmin, 'POST', `/api/settings/config-changes/${proposal.change_id}/review`, { action: 'approve', note: '' });
    const after = byId((await call(admin, 'GET', '/api/risk/snapshots')).body.clusters, 'risk_level');
    const moved = [...after].filter(([id, level]) => before.get(id) !== level).map(([id]) => id).sort();
    expect(moved).toEqual(impact.changes.map((c: any) => c.cluster_id).sort());
  });

  it('issue rules have no impact preview, and say so with null', async () => {
    const content = (await call(admin, 'GET', '/api/settings/issue-rules')).body.content.replace('quiet_minutes: 30', 'quiet_minutes: 45');
    const proposal = (await call(admin, 'PUT', '/api/settings/issue-rules', { content })).body;
    expect((await call(admin, 'GET', `/api/settings/config-changes/${proposal.change_id}`)).body).toMatchObject({ rule_set: 'issue-rules', impact: null });
  });
});
