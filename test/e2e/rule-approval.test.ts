// Issue 6 end to end on the demo fleet: an admin proposes a threshold change,
// sees which clusters it would move, a superadmin approves, and the next
// dashboards show exactly those moves without anyone pressing refresh.
// Issue 15: two superadmins editing the same version (If-Match / base_version,
// 409 with current_version), and extreme-but-valid rules never break a refresh.
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let admin: string;
let superadmin: string;
let superadminB: string;

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'approval-admin-password', demoClusters: 40 });
  admin = await userToken('admin', 'approval-admin');
  superadmin = await userToken('superadmin', 'approval-super');
  superadminB = await userToken('superadmin', 'approval-super-b');
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

async function call(
  token: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

const byId = (items: any[], field: string) => new Map(items.map((i) => [i.cluster_id, i[field]]));

describe('proposing, previewing and approving a rule change', () => {
  it('health rules: the impact names the clusters whose classification the approval then changes', async () => {
    const before = byId((await call(admin, 'GET', '/api/fleet/scores')).body.scores, 'classification');

    // The admin tightens disk usage: above 20% is red, and disk weighs heavily.
    const live = parse((await call(admin, 'GET', '/api/settings/health-rules')).body.content);
    Object.assign(
      live.scoring.dimensions.find((d: any) => d.metric_key === 'disk_used_pct'),
      { green: 5, yellow: 10, red: 20, weight: 60 },
    );
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

    const review = await call(superadmin, 'POST', `/api/settings/config-changes/${proposal.body.change_id}/review`, {
      action: 'approve',
      note: 'disk is tight this quarter',
    });
    expect(review.body).toMatchObject({ status: 'approved', applied: true });

    // The very next read recomputes (the generation marker moved): exactly the previewed moves.
    const after = byId((await call(admin, 'GET', '/api/fleet/scores')).body.scores, 'classification');
    const moved = [...after].filter(([id, cls]) => before.get(id) !== cls).map(([id, cls]) => ({ cluster_id: id, from: before.get(id), to: cls }));
    expect(new Set(moved.map((m) => JSON.stringify(m)))).toEqual(
      new Set(impact.changes.map((c: any) => JSON.stringify({ cluster_id: c.cluster_id, from: c.from, to: c.to }))),
    );
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
    const moved = [...after]
      .filter(([id, level]) => before.get(id) !== level)
      .map(([id]) => id)
      .sort();
    expect(moved).toEqual(impact.changes.map((c: any) => c.cluster_id).sort());
  });

  it('issue rules have no impact preview, and say so with null', async () => {
    const content = (await call(admin, 'GET', '/api/settings/issue-rules')).body.content.replace('quiet_minutes: 30', 'quiet_minutes: 45');
    const proposal = (await call(admin, 'PUT', '/api/settings/issue-rules', { content })).body;
    expect((await call(admin, 'GET', `/api/settings/config-changes/${proposal.change_id}`)).body).toMatchObject({ rule_set: 'issue-rules', impact: null });
  });
});

describe('previewing a rule text before it is saved or proposed (POST …/impact)', () => {
  const withoutTime = ({ computed_at: _at, ...rest }: any) => rest;

  it('answers anyone what a proposal of the same text would show, and writes nothing', async () => {
    const viewer = await userToken('viewer', 'approval-viewer');
    const live = (await call(admin, 'GET', '/api/settings/health-rules')).body;
    const edited = parse(live.content);
    Object.assign(
      edited.scoring.dimensions.find((d: any) => d.metric_key === 'memory_pct'),
      { green: 10, yellow: 20, red: 30, weight: 60 },
    );
    const content = stringify(edited);
    const changesBefore = (await call(superadmin, 'GET', '/api/settings/config-changes')).body.total;

    const preview = await call(viewer, 'POST', '/api/settings/health-rules/impact', { content });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ measure: 'classification' });
    expect(preview.body.changed_count).toBeGreaterThan(0);
    expect(preview.body.changes).toHaveLength(preview.body.changed_count);
    // Nothing saved, nothing proposed.
    expect((await call(admin, 'GET', '/api/settings/health-rules')).body.version).toBe(live.version);
    expect((await call(superadmin, 'GET', '/api/settings/config-changes')).body.total).toBe(changesBefore);

    // The same text proposed shows the same impact on its page.
    const proposal = (await call(admin, 'PUT', '/api/settings/health-rules', { content })).body;
    const detail = (await call(admin, 'GET', `/api/settings/config-changes/${proposal.change_id}`)).body;
    expect(withoutTime(detail.impact)).toEqual(withoutTime(preview.body));
    await call(admin, 'POST', `/api/settings/config-changes/${proposal.change_id}/withdraw`);

    const risk = parse((await call(admin, 'GET', '/api/settings/risk-rules')).body.content);
    Object.assign(
      risk.risk.rules.find((r: any) => r.metric_key === 'disk_used_pct'),
      { warning: 1, critical: 2 },
    );
    const riskPreview = await call(viewer, 'POST', '/api/settings/risk-rules/impact', { content: stringify(risk) });
    expect(riskPreview.body).toMatchObject({ measure: 'risk_level' });
    expect(riskPreview.body.changed_count).toBeGreaterThan(0);
  });

  it('refuses a text a save would refuse (422 naming the content), and has no preview for rule sets that move no class', async () => {
    const bad = await call(admin, 'POST', '/api/settings/health-rules/impact', { content: 'scoring: [' });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect(bad.body.errors?.[0]?.loc ?? bad.body.detail).toBeTruthy();
    expect(JSON.stringify(bad.body)).toContain('content');
    const weights = parse((await call(admin, 'GET', '/api/settings/health-rules')).body.content);
    weights.scoring.weights.metrics = 1e308;
    expect((await call(admin, 'POST', '/api/settings/health-rules/impact', { content: stringify(weights) })).status).toBe(422);
    for (const set of ['issue-rules', 'metric-sources']) {
      expect((await call(admin, 'POST', `/api/settings/${set}/impact`, { content: 'x: 1' })).status).toBe(404);
    }
  });
});

describe('two superadmins editing the same version (optimistic concurrency)', () => {
  it.each([
    ['If-Match', (version: number) => ({ headers: { 'If-Match': `"v${version}"` }, body: {} })],
    ['base_version', (version: number) => ({ headers: {}, body: { base_version: version } })],
  ] as const)('both read version n, B writes n+1, A writing on n with %s gets 409 naming n+1, and nothing changes', async (_how, basedOn) => {
    const a = await call(superadmin, 'GET', '/api/settings/issue-rules');
    const b = await call(superadminB, 'GET', '/api/settings/issue-rules');
    const n = a.body.version as number;
    expect(b.body.version).toBe(n);
    expect(a.headers.get('etag')).toBe(`"v${n}"`);

    const bWrite = await call(
      superadminB,
      'PUT',
      '/api/settings/issue-rules',
      { content: `${b.body.content}\n# B's edit of v${n}\n`, ...basedOn(n).body },
      basedOn(n).headers,
    );
    expect(bWrite.status).toBe(200);
    expect(bWrite.body).toEqual({ status: 'ok', applied: true, version: n + 1 });
    expect(bWrite.headers.get('etag')).toBe(`"v${n + 1}"`);

    const aWrite = await call(
      superadmin,
      'PUT',
      '/api/settings/issue-rules',
      { content: `${a.body.content}\n# A's edit of v${n}\n`, ...basedOn(n).body },
      basedOn(n).headers,
    );
    expect(aWrite.status).toBe(409);
    expect(aWrite.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(aWrite.body).toMatchObject({ status: 409, current_version: n + 1, base_version: n });
    expect(aWrite.body.detail).toMatch(new RegExp(`at version ${n + 1}, not version ${n}.*nothing was changed`));

    const now = await call(admin, 'GET', '/api/settings/issue-rules');
    expect(now.body).toMatchObject({ version: n + 1, content: `${b.body.content}\n# B's edit of v${n}\n`, updated_by: 'approval-super-b' });
    expect(now.headers.get('etag')).toBe(`"v${n + 1}"`);

    // With the current version, A's edit applies.
    const retry = await call(
      superadmin,
      'PUT',
      '/api/settings/issue-rules',
      { content: `${now.body.content}# A's edit, again on v${n + 1}\n`, ...basedOn(n + 1).body },
      basedOn(n + 1).headers,
    );
    expect(retry.body).toEqual({ status: 'ok', applied: true, version: n + 2 });
  });

  it('of many writers racing on the same version with If-Match, exactly one applies and the rest get 409', async () => {
    const live = await call(superadmin, 'GET', '/api/settings/risk-rules');
    const n = live.body.version as number;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(
          i % 2 ? superadmin : superadminB,
          'PUT',
          '/api/settings/risk-rules',
          { content: `${live.body.content}\n# racer ${i}\n` },
          { 'If-Match': `"v${n}"` },
        ),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    for (const r of answers.filter((x) => x.status === 409)) expect(r.body.current_version).toBe(n + 1);
    expect((await call(admin, 'GET', '/api/settings/risk-rules')).body.version).toBe(n + 1);
  });

  it('a PUT naming no version keeps the last-writer-wins behaviour', async () => {
    const live = await call(superadmin, 'GET', '/api/settings/issue-rules');
    await call(superadminB, 'PUT', '/api/settings/issue-rules', { content: `${live.body.content}\n# B\n` });
    const a = await call(superadmin, 'PUT', '/api/settings/issue-rules', { content: `${live.body.content}\n# A\n` });
    expect(a.body).toEqual({ status: 'ok', applied: true, version: live.body.version + 2 });
  });

  it('a proposal naming a stale version is refused with 409; naming the current one records it as base_version', async () => {
    const live = await call(admin, 'GET', '/api/settings/issue-rules');
    const n = live.body.version as number;
    const content = live.body.content.replace('quiet_minutes: 30', 'quiet_minutes: 33');
    const stale = await call(admin, 'PUT', '/api/settings/issue-rules', { content, base_version: n - 1 });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ current_version: n, base_version: n - 1 });
    const fresh = await call(admin, 'PUT', '/api/settings/issue-rules', { content }, { 'If-Match': `"v${n}"` });
    expect(fresh.body).toMatchObject({ status: 'pending', applied: false, base_version: n });
  });

  it.each([
    ['a weak ETag', { 'If-Match': 'W/"v1"' }, {}],
    ['no quotes', { 'If-Match': 'v1' }, {}],
    ['a list', { 'If-Match': '"v1", "v2"' }, {}],
    ['garbage', { 'If-Match': '"version five"' }, {}],
    // ETags compare as strings: "v01" is not the "v1" GET answered, and was read as version 1
    ['a number with a leading zero', { 'If-Match': '"v01"' }, {}],
    ['zero with a leading zero', { 'If-Match': '"v00"' }, {}],
    ['If-Match and base_version disagreeing', { 'If-Match': '"v1"' }, { base_version: 2 }],
  ])('a malformed version (%s) is a clear 400 and nothing changes', async (_what, headers, body) => {
    const live = await call(superadmin, 'GET', '/api/settings/issue-rules');
    const put = await call(superadmin, 'PUT', '/api/settings/issue-rules', { content: `${live.body.content}\n# x\n`, ...body }, headers);
    expect(put.status).toBe(400);
    expect(put.body.detail).toMatch(/If-Match/);
    expect((await call(superadmin, 'GET', '/api/settings/issue-rules')).body.version).toBe(live.body.version);
  });

  it.each([-1, 1.5, 'v1', 1e12])('base_version %s is refused with 422', async (base) => {
    const live = await call(superadmin, 'GET', '/api/settings/issue-rules');
    const put = await call(superadmin, 'PUT', '/api/settings/issue-rules', { content: live.body.content, base_version: base });
    expect(put.status).toBe(422);
    expect(put.body.errors[0].loc).toEqual(['body', 'base_version']);
  });
});

describe('extreme but valid rules never break scoring', () => {
  it('the weights that broke refresh (1e308) are refused; the largest valid numbers refresh with every score a number in 0..100', async () => {
    const live = parse((await call(superadmin, 'GET', '/api/settings/health-rules')).body.content);
    live.scoring.weights = { metrics: 1.0e308, alerts: 1.0e308 };
    const refused = await call(superadmin, 'PUT', '/api/settings/health-rules', { content: stringify(live) });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/scoring\.weights\.metrics/);

    live.scoring.weights = { metrics: 100, alerts: 100 };
    live.scoring.tier_multipliers = { S: 10, A: 10, B: 0 };
    live.scoring.alert_bands = [
      { max_alerts: 1_000_000, score: 100 },
      { max_alerts: null, score: 0 },
    ];
    live.scoring.dimensions = live.scoring.dimensions.map((d: any, i: number) =>
      i % 2
        ? { ...d, green: -1e15, yellow: -1e15 + 0.25, red: 1e15, inverted: false, weight: 100 }
        : { ...d, green: 1e15, yellow: 1e-6, red: -1e15, inverted: true, weight: 0.001 },
    );
    const risk = parse((await call(superadmin, 'GET', '/api/settings/risk-rules')).body.content);
    risk.risk.rules = risk.risk.rules.map((r: any) => ({ ...r, warning: -1e15, critical: 1e15, inverted: false }));
    for (const [name, content] of [
      ['health-rules', stringify(live)],
      ['risk-rules', stringify(risk)],
    ]) {
      const put = await call(superadmin, 'PUT', `/api/settings/${name}`, { content });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
    }

    for (const path of ['/api/fleet/refresh', '/api/health/refresh', '/api/settings/recompute', '/api/settings/recompute-risk']) {
      const refresh = await call(superadmin, 'POST', path);
      expect(refresh.status, `${path}: ${JSON.stringify(refresh.body)}`).toBe(200);
    }
    const scores = (await call(admin, 'GET', '/api/fleet/scores')).body.scores as any[];
    expect(scores.length).toBeGreaterThan(0);
    for (const s of scores) {
      for (const n of [s.overall_score, s.metrics_score, s.alerts_score, s.tier_adjusted_score])
        expect(n >= 0 && n <= 100, `${s.cluster_name}: ${n}`).toBe(true);
    }
    const kpis = (await call(admin, 'GET', '/api/fleet/kpis')).body;
    expect(kpis.kpis.avg_score >= 0 && kpis.kpis.avg_score <= 100, JSON.stringify(kpis)).toBe(true);
    for (const path of ['/api/health/scores', '/api/risk/snapshots', '/api/critical-clusters']) expect((await call(admin, 'GET', path)).status, path).toBe(200);
  });
});

describe('the impact preview after a refresh', () => {
  it('a shorter lookback than the refreshed view (whose settled days are folded) is previewed from its own read', async () => {
    expect((await call(admin, 'POST', '/api/fleet/refresh')).status).toBe(200);
    const live = parse((await call(admin, 'GET', '/api/settings/health-rules')).body.content);
    const proposal = await call(admin, 'PUT', '/api/settings/health-rules', {
      content: stringify({ ...live, scoring: { ...live.scoring, lookback_days: 3 } }),
    });
    expect(proposal.body).toMatchObject({ status: 'pending' });
    const detail = await call(admin, 'GET', `/api/settings/config-changes/${proposal.body.change_id}`);
    expect(detail.status, JSON.stringify(detail.body)).toBe(200);
    expect(detail.body.impact).toMatchObject({ measure: 'classification', clusters_total: 40 });
  });
});

describe('a review or withdrawal of a proposal closed already (a retry whose answer was lost, or a stale list)', () => {
  const auditOf = async (action: string, target: string) =>
    (await call(superadmin, 'GET', `/api/settings/audit?action=${action}&page_size=100`)).body.entries.filter((e: any) => e.target === target);

  it('is 409 naming who closed it, how and when, with no second version or audit entry', async () => {
    const content = `${(await call(admin, 'GET', '/api/settings/issue-rules')).body.content}\n# approved, then reviewed again\n`;
    const id = (await call(admin, 'PUT', '/api/settings/issue-rules', { content })).body.change_id as string;
    const review = `/api/settings/config-changes/${id}/review`;
    expect((await call(superadmin, 'POST', review, { action: 'approve', note: 'ok' })).status).toBe(200);
    const version = (await call(admin, 'GET', '/api/settings/issue-rules')).body.version;
    const detail = (await call(superadmin, 'GET', `/api/settings/config-changes/${id}`)).body;

    for (const [token, body] of [
      [superadmin, { action: 'approve', note: 'ok' }],
      [superadmin, { action: 'reject', note: 'ok' }],
      [superadminB, { action: 'approve', note: 'ok' }],
    ] as const) {
      const again = await call(token, 'POST', review, body);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ status: 409, change_status: 'approved', reviewed_by: 'approval-super', reviewed_at: detail.reviewed_at });
      expect(again.body.detail).toContain(
        `(approved by approval-super at ${detail.reviewed_at.slice(0, 10)} ${detail.reviewed_at.slice(11, 19)} UTC); nothing was changed`,
      );
    }
    const withdraw = await call(admin, 'POST', `/api/settings/config-changes/${id}/withdraw`);
    expect(withdraw.status).toBe(409);
    expect(withdraw.body).toMatchObject({ change_status: 'approved', reviewed_by: 'approval-super' });
    expect((await call(admin, 'GET', '/api/settings/issue-rules')).body.version).toBe(version);
    expect(await auditOf('change_approve', id)).toHaveLength(1);
    expect(await auditOf('change_reject', id)).toHaveLength(0);
  });
});
