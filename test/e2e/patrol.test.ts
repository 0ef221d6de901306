// Patrol scans (issue 9) through the local server on the demo fleet: one at a
// time under the lease lock (10 simultaneous triggers, a crashed worker, a
// failing LLM), a full LLM scan against a local OpenAI-compatible server with
// tools and a repair round, the rules engine, and every list/KPI figure
// against a brute-force computation.
import { DATA_NOT_INSTRUCTIONS } from '../../shared/llm/tool-loop.js';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { listUsage } from '../../shared/db/llm-usage.js';
import { withAgentBudgetSpent } from '../support/agent-budget.js';
import { listAudit } from '../../shared/db/audit.js';
import { acquireLock, lockHolder, releaseLock, takeOverLock } from '../../shared/db/locks.js';
import { claimReport, createReport, finishReport, getReport } from '../../shared/db/patrol.js';
import { createUser } from '../../shared/db/users.js';
import { signAccessToken } from '../../shared/auth/jwt.js';
import { leaseMs, PATROL_LOCK } from '../../shared/patrol/lock.js';
import { SCHEDULE_TRIGGER } from '../../shared/patrol/schedule.js';
import { patrolGroup } from '../../shared/routes/patrol.js';
import type { LocalService } from '../../infra/local/service.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';
import { getItem } from '../../shared/db/client.js';
import { startDynamoProxy, type DynamoProxy } from '../support/dynamo-proxy.js';

let service: LocalService;
let proxy: DynamoProxy;
let openai: FakeOpenAi;
let admin: string;
let viewer: string;

beforeAll(async () => {
  // Through a proxy: a test can make DynamoDB answer a request itself.
  proxy = await startDynamoProxy(inject('dynamoEndpoint'));
  service = await startTestService({ adminPassword: 'patrol-admin-password', demoClusters: 16, dynamoEndpoint: proxy.endpoint });
  openai = await startFakeOpenAi();
  admin = await userToken('admin', 'patrol-admin');
  viewer = await userToken('viewer', 'patrol-viewer');
}, 120_000);

afterAll(async () => {
  for (const v of ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_MAX_ATTEMPTS', 'LLM_RETRY_BASE_MS', 'PATROL_LEASE_SECONDS', 'PATROL_WAIT_SECONDS'])
    delete process.env[v];
  await openai?.close();
  await service?.stop();
  await proxy?.close();
});

beforeEach(() => openai.reset());

const useLlm = () =>
  Object.assign(process.env, { LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl, LLM_MAX_ATTEMPTS: '2', LLM_RETRY_BASE_MS: '5' });
const noLlm = () => delete process.env.LLM_PROVIDER;

async function call(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
const trigger = () => call(admin, 'POST', '/api/patrol/trigger', { report_type: 'on_demand' });

/** A structured answer that validates, naming two of the fleet's clusters. */
async function validAnswer() {
  const scores = (await call(viewer, 'GET', '/api/fleet/scores')).body.scores as any[];
  const { kpis } = (await call(viewer, 'GET', '/api/fleet/kpis')).body;
  const [a, b] = scores;
  return {
    fleet_summary: {
      total_clusters: kpis.total_clusters,
      critical: kpis.critical_count,
      warning: kpis.warning_count,
      healthy: kpis.healthy_count,
      headline: 'Two clusters need attention.',
    },
    clusters_flagged: [a, b].map((c, i) => ({
      cluster_id: c.cluster_id,
      cluster_name: c.cluster_name,
      customer_name: c.customer_name,
      severity: i ? 'Warning' : 'Critical',
      reason: c.top_risk,
      recommended_action: 'Follow the runbook.',
    })),
    // Counted as the fleet counts them (the scan keeps the fleet's counts, not the model's).
    customer_summaries: [
      {
        customer_name: a.customer_name,
        clusters: scores.filter((c) => c.customer_name === a.customer_name).length,
        flagged: [a, b].filter((c) => c.customer_name === a.customer_name).length,
        summary: 'One cluster at risk.',
      },
    ],
    narrative: '## Patrol\nTwo clusters need attention.',
  };
}

describe('before any scan', () => {
  it('latest is 404, the KPIs are zero', async () => {
    expect((await call(viewer, 'GET', '/api/patrol/latest')).status).toBe(404);
    expect((await call(viewer, 'GET', '/api/patrol/kpis/summary')).body).toMatchObject({
      total_reports: 0,
      total_tokens: 0,
      latest_report_at: null,
      scheduled_every_minutes: 360,
      last_scheduled_at: null,
      next_scheduled_at: null,
    });
  });
});

describe('a scan with the rules engine (no provider)', () => {
  it('completes with a useful report: model rules, cost 0, the flagged clusters the scores and risks say', async () => {
    noLlm();
    const res = await trigger();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', tool_rounds: 0, total_tokens: 0 });
    const report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
    expect(report).toMatchObject({ status: 'completed', model: 'rules', cost_usd: 0, report_type: 'on_demand', triggered_by: 'patrol-admin' });
    expect(report.fleet_narrative).toMatch(/^_Rules-engine patrol: no LLM provider is configured/);
    // brute force: a cluster is flagged when not Healthy, at Warning/Critical risk, or with an open issue
    const scores = (await call(viewer, 'GET', '/api/fleet/scores')).body.scores as any[];
    const risks = new Map(((await call(viewer, 'GET', '/api/risk/snapshots')).body.clusters as any[]).map((r) => [r.cluster_id, r.risk_level]));
    const open = new Set(((await call(viewer, 'GET', '/api/issues?status=Ongoing&days=30&page_size=100')).body.issues as any[]).map((i) => i.cluster_id));
    const expected = scores
      .filter((s) => s.classification !== 'Healthy' || risks.get(s.cluster_id) !== 'Healthy' || open.has(s.cluster_id))
      .map((s) => s.cluster_id);
    expect(report.clusters_flagged_parsed.map((f: any) => f.cluster_id).sort()).toEqual(expected.sort());
    expect(report.flagged_count).toBe(expected.length);
    expect(report.fleet_summary_parsed).toMatchObject({
      total_clusters: scores.length,
      critical: scores.filter((s) => s.classification === 'Critical').length,
    });
    expect(report.customer_summaries_parsed.reduce((n: number, c: any) => n + c.clusters, 0)).toBe(scores.length);
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
  });
});

describe("a scan once the day's AI budget is spent", () => {
  it('runs the rules engine though a provider is configured, and its report says why', async () => {
    useLlm();
    await withAgentBudgetSpent(async () => {
      const res = await trigger();
      expect(res.body).toMatchObject({ status: 'completed', tool_rounds: 0, total_tokens: 0 });
      const report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
      expect(report).toMatchObject({ status: 'completed', model: 'rules', cost_usd: 0 });
      expect(report.fleet_narrative).toMatch(
        /^_Rules-engine patrol: the day's AI budget is spent \(US\$[\d.]+ of AGENT_DAILY_BUDGET_USD's US\$[\d.]+; the model is asked again after 00:00 UTC\), so this report/,
      );
      expect(openai.received).toHaveLength(0);
    });
  });
});

describe('a scan with the LLM (OpenAI-compatible server)', () => {
  it('uses tools, validates the structured answer, and records tokens and cost as the ledger has them', async () => {
    useLlm();
    const answer = await validAnswer();
    openai
      .enqueueToolUse(
        { name: 'run_sql', input: { sql: "SELECT cluster_name FROM scores WHERE classification <> 'Healthy'" } },
        { usage: { input_tokens: 5000, output_tokens: 100 } },
      )
      .enqueueText(JSON.stringify(answer), { usage: { input_tokens: 7000, output_tokens: 900 } });
    const res = await trigger();
    expect(res.body).toMatchObject({ status: 'completed', tool_rounds: 1, total_tokens: 13_000 });
    const report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
    expect(report).toMatchObject({
      model: 'gpt-4o-mini',
      input_tokens: 12_000,
      output_tokens: 1000,
      total_tokens: 13_000,
      tool_rounds: 1,
      flagged_count: 2,
      fleet_narrative: answer.narrative,
      fleet_summary_parsed: answer.fleet_summary,
      clusters_flagged_parsed: answer.clusters_flagged,
      customer_summaries_parsed: answer.customer_summaries,
    });
    const ledger = (await listUsage(1)).filter((u) => u.run_id === res.body.report_id);
    expect(ledger.map((u) => u.source)).toEqual(['agent', 'agent']);
    expect(report.cost_usd).toBeCloseTo(
      ledger.reduce((s, u) => s + u.cost_usd, 0),
      6,
    );
    expect(report.cost_usd).toBeCloseTo((12_000 * 0.15 + 1000 * 0.6) / 1e6, 6);
    // the model was given the fleet and the tools
    expect(openai.answered()[0]!.body.messages.at(-1)!.content).toMatch(/^Fleet at /);
    expect(openai.answered()[0]!.body.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining(DATA_NOT_INSTRUCTIONS) });
  });

  it('keeps only flagged clusters the fleet has, once each, named as the inventory names them, whatever names the model gave', async () => {
    useLlm();
    const answer = await validAnswer();
    const [real, other] = answer.clusters_flagged;
    // The first under another cluster's name (a link that would open the wrong cluster), the second one the fleet does
    // not have, the third the first again.
    answer.clusters_flagged = [
      { ...real!, cluster_name: other!.cluster_name, customer_name: 'Someone Else' },
      { ...other!, cluster_id: 'no-such-cluster' },
      { ...real!, reason: 'the same cluster again' },
    ];
    openai.enqueueText(JSON.stringify(answer));
    const res = await trigger();
    expect(res.body.status).toBe('completed');
    const report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
    expect(report.clusters_flagged_parsed).toEqual([{ ...real }]);
    expect(report.flagged_count).toBe(1);
  });

  it("keeps one summary per customer the fleet has, with the fleet's counts, whatever the model wrote", async () => {
    useLlm();
    const answer = await validAnswer();
    const [summary] = answer.customer_summaries;
    answer.customer_summaries = [
      { ...summary!, clusters: 1, flagged: 0, summary: 'the first' },
      { ...summary!, summary: 'the same customer again' },
      { customer_name: 'Evil Corp <b>x</b>', clusters: 2, flagged: 2, summary: 'no customer of ours' },
    ];
    openai.enqueueText(JSON.stringify(answer));
    const res = await trigger();
    expect(res.body.status).toBe('completed');
    const scores = (await call(viewer, 'GET', '/api/fleet/scores')).body.scores as { customer_name: string }[];
    const report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
    expect(report.customer_summaries_parsed).toEqual([
      {
        customer_name: summary!.customer_name,
        clusters: scores.filter((c) => c.customer_name === summary!.customer_name).length,
        flagged: answer.clusters_flagged.filter((f) => f.customer_name === summary!.customer_name).length,
        summary: 'the first',
      },
    ]);
  });

  it("publishes the scores' fleet counts, not the model's arithmetic; its headline stays", async () => {
    useLlm();
    const answer = await validAnswer();
    const counted = answer.fleet_summary;
    expect(counted.total_clusters).toBeGreaterThan(2);
    // Within the fleet's size (so valid), but wrong and not adding up.
    answer.fleet_summary = { total_clusters: 2, critical: 0, warning: 2, healthy: 2, headline: 'All quiet.' };
    openai.enqueueText(JSON.stringify(answer));
    const res = await trigger();
    expect(res.body.status).toBe('completed');
    const report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
    expect(report.fleet_summary_parsed).toEqual({ ...counted, headline: 'All quiet.' });
    // Kept 400 days (reads reach 365 back), then DynamoDB's TTL removes it.
    const stored = await getItem('patrol', { pk: `REPORT#${res.body.report_id}`, sk: 'REPORT' }, true);
    expect((Number(stored?.ttl) * 1000 - Date.now()) / 86_400_000).toBeCloseTo(400, 0);
  });

  it('repairs an answer that does not validate, once', async () => {
    useLlm();
    openai.enqueueText('Here is my report: {"fleet_summary": {}}').enqueueText(JSON.stringify(await validAnswer()));
    const res = await trigger();
    expect(res.body.status).toBe('completed');
    expect(JSON.stringify(openai.answered()[1]!.body.messages.at(-1))).toMatch(/did not validate/);
  });

  it('takes no count beyond the fleet it showed the model: repaired once, then the scan fails saying why', async () => {
    useLlm();
    const answer = await validAnswer();
    const inflated = { ...answer, fleet_summary: { ...answer.fleet_summary, total_clusters: Number.MAX_SAFE_INTEGER } };
    openai.enqueueText(JSON.stringify(inflated)).enqueueText(JSON.stringify(inflated));
    const res = await trigger();
    expect(res.body.status).toBe('failed');
    expect(JSON.stringify(openai.answered()[1]!.body.messages.at(-1))).toMatch(/fleet_summary\.total_clusters/);
    const report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
    expect(report).toMatchObject({ status: 'failed', error: expect.stringMatching(/did not validate/) });
  });

  it('a failing LLM marks the report failed with the reason and frees the lock', async () => {
    useLlm();
    openai.enqueueError(500).enqueueError(500);
    const res = await trigger();
    expect(res.body).toMatchObject({ status: 'failed' });
    expect(res.body.message).toMatch(/language model failed/);
    expect((await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/language model failed/),
    });
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
    openai.enqueueText('not json').enqueueText('still not json');
    const invalid = await trigger();
    expect(invalid.body).toMatchObject({ status: 'failed', message: expect.stringMatching(/did not validate after one repair round/) });
  });
});

describe('a scan that fails after LLM calls (issue 16, deviation 6)', () => {
  it('keeps the model, tokens and cost the ledger charged, and the patrol KPIs count them', async () => {
    useLlm();
    const before = (await call(viewer, 'GET', '/api/patrol/kpis/summary')).body;
    openai
      .enqueueToolUse({ name: 'run_sql', input: { sql: 'SELECT COUNT(*) AS n FROM scores' } }, { usage: { input_tokens: 4000, output_tokens: 50 } })
      .enqueueError(500)
      .enqueueError(500);
    const res = await trigger();
    expect(res.body).toMatchObject({ status: 'failed' });
    const report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
    const ledger = (await listUsage(1)).filter((u) => u.run_id === res.body.report_id);
    const charged = ledger.reduce((s, u) => s + u.cost_usd, 0);
    expect(charged).toBeGreaterThan(0);
    expect(report).toMatchObject({ status: 'failed', model: 'gpt-4o-mini', input_tokens: 4000, output_tokens: 50, total_tokens: 4050 });
    expect(report.cost_usd).toBeCloseTo(charged, 6);
    const after = (await call(viewer, 'GET', '/api/patrol/kpis/summary')).body;
    expect(after.total_tokens - before.total_tokens).toBe(4050);
    expect(after.total_cost_usd - before.total_cost_usd).toBeCloseTo(charged, 6);
    expect(after.total_reports).toBe(before.total_reports); // completed reports only
  });
});

describe('one scan at a time', () => {
  it('10 simultaneous triggers: exactly one scan runs, nine answer already_running', async () => {
    useLlm();
    openai.enqueue({ kind: 'delay', ms: 1500, then: { kind: 'text', text: JSON.stringify(await validAnswer()) } });
    const results = await Promise.all(Array.from({ length: 10 }, () => trigger()));
    const statuses = results.map((r) => r.body.status).sort();
    expect(statuses).toEqual(['already_running', ...Array(8).fill('already_running'), 'completed'].sort());
    const winner = results.find((r) => r.body.status === 'completed')!.body.report_id;
    expect(results.filter((r) => r.body.status === 'already_running').every((r) => r.status === 200 && r.body.report_id === winner)).toBe(true);
    expect(openai.answered()).toHaveLength(1);
  });

  it('a worker that died mid-scan blocks the next trigger for one lease only, and its report is marked failed', async () => {
    noLlm();
    await createReport({ report_id: 'dead-worker-report', report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER });
    expect((await acquireLock(PATROL_LOCK, 'dead-worker-report', leaseMs())).acquired).toBe(true); // and then it "crashes"
    expect((await trigger()).body).toMatchObject({ status: 'already_running', report_id: 'dead-worker-report' });
    // Its lease runs out unrenewed: the same lease, as if taken a lease and a second ago (no wait on the clock).
    expect(await takeOverLock(PATROL_LOCK, 'dead-worker-report', 'dead-worker-report', leaseMs(), Date.now() - leaseMs() - 1000)).toBe(true);
    expect((await trigger()).body.status).toBe('completed');
    expect((await call(viewer, 'GET', '/api/patrol/dead-worker-report')).body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/stopped without finishing/),
    });
  });

  it('a viewer may not trigger; an admin is audited', async () => {
    expect((await call(viewer, 'POST', '/api/patrol/trigger', {})).status).toBe(403);
    const entries = (await listAudit('patrol_trigger')).filter((e) => e.actor === 'patrol-admin');
    expect(entries.length).toBeGreaterThan(3);
    expect(entries[0]!.detail).toEqual({ report_type: 'on_demand' });
  });

  it('a scan longer than the wait answers 202 running, and the report completes for the poller', async () => {
    useLlm();
    process.env.PATROL_WAIT_SECONDS = '0.5';
    try {
      openai.enqueue({ kind: 'delay', ms: 1500, then: { kind: 'text', text: JSON.stringify(await validAnswer()) } });
      const res = await trigger();
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ status: 'running', report_id: expect.any(String) });
      let report: any;
      for (let i = 0; i < 40 && report?.status !== 'completed'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        report = (await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body;
      }
      expect(report.status).toBe('completed');
    } finally {
      delete process.env.PATROL_WAIT_SECONDS;
    }
  });

  it('the worker invoked directly (schedule, CLI through the SDK) takes the same lock', async () => {
    noLlm();
    const { handler } = await import('../../functions/patrol-worker.js');
    const ran = (await handler({ report_type: 'on_demand', triggered_by: 'cli-user' })) as { status: string; report_id: string };
    expect(ran.status).toBe('completed');
    expect((await call(viewer, 'GET', `/api/patrol/${ran.report_id}`)).body).toMatchObject({
      report_type: 'on_demand',
      triggered_by: 'cli-user',
      model: 'rules',
    });
    // A holder that renews on time (a whole lease left) is alive: the run answers at once.
    await acquireLock(PATROL_LOCK, 'someone-else', leaseMs());
    try {
      expect(await handler({ report_type: 'scheduled' })).toEqual({ status: 'already_running', report_id: 'someone-else' });
    } finally {
      await releaseLock(PATROL_LOCK, 'someone-else');
    }
    // One that missed its renewal (taken 119 s ago with the 120 s lease: a crashed scan) is waited out, and the
    // scan runs: Lambda's retry of a crashed scheduled scan comes while the dead lease still runs.
    await acquireLock(PATROL_LOCK, 'crashed-scan', leaseMs(), Date.now() - leaseMs() + 1000);
    const retried = (await handler({ report_type: 'scheduled' })) as { status: string; report_id: string };
    expect(retried.status).toBe('completed');
    expect(retried.report_id).not.toBe('crashed-scan');
    expect(await handler({ report_type: 'weekly' })).toMatchObject({ status: 'refused' });
    // The KPIs say when the timetable's next scan is due: six hours after the last scheduled one started.
    const reports = (await call(viewer, 'GET', '/api/patrol?days=30&page_size=100')).body.reports as {
      report_id: string;
      report_type: string;
      created_at: string;
      triggered_by: string;
    }[];
    const last = reports.find((r) => r.report_type === 'scheduled')!;
    expect(last.report_id).toBe(retried.report_id);
    // A person's trigger labelled `scheduled` is theirs (it names them), not the timer's: the timetable stays,
    // whatever their username (no username can be the timer's name).
    for (const [token, username] of [
      [admin, 'patrol-admin'],
      [await userToken('admin', 'schedule'), 'schedule'],
    ] as const) {
      const labelled = await call(token, 'POST', '/api/patrol/trigger', { report_type: 'scheduled' });
      expect(labelled.body).toMatchObject({ status: 'completed' });
      expect((await call(viewer, 'GET', `/api/patrol/${labelled.body.report_id}`)).body).toMatchObject({
        report_type: 'scheduled',
        triggered_by: username,
      });
    }
    expect(last).toMatchObject({ triggered_by: SCHEDULE_TRIGGER });
    expect((await call(viewer, 'GET', '/api/patrol/kpis/summary')).body).toMatchObject({
      scheduled_every_minutes: 360,
      last_scheduled_at: last.created_at,
      next_scheduled_at: new Date(Date.parse(last.created_at) + 6 * 3_600_000).toISOString(),
    });
  });

  it('an admin with a username as long as usernames may be (an invited user’s is their email) triggers a scan that completes', async () => {
    noLlm();
    const username = `ops@${'patrol.'.repeat(20)}example.com`;
    expect(username.length).toBeGreaterThan(128);
    const user = await createUser({ username, name: 'Long Name', email: username, role: 'admin', is_active: true });
    const longAdmin = await signAccessToken({ userId: user.id, username, name: user.name, email: username, role: 'admin' });
    const res = await call(longAdmin, 'POST', '/api/patrol/trigger', { report_type: 'on_demand' });
    expect(res.body).toMatchObject({ status: 'completed' });
    expect((await call(viewer, 'GET', `/api/patrol/${res.body.report_id}`)).body).toMatchObject({ status: 'completed', triggered_by: username });
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
  });

  it('a worker event the worker refuses fails the report the trigger made for it and frees the lock', async () => {
    await acquireLock(PATROL_LOCK, 'refused-event-report', 60_000);
    await createReport({ report_id: '7b0f3c1e-2a4d-4e5f-8a6b-9c0d1e2f3a4b', report_type: 'on_demand', triggered_by: 'patrol-admin' });
    await releaseLock(PATROL_LOCK, 'refused-event-report');
    await acquireLock(PATROL_LOCK, '7b0f3c1e-2a4d-4e5f-8a6b-9c0d1e2f3a4b', 60_000);
    const { handler } = await import('../../functions/patrol-worker.js');
    expect(await handler({ report_id: '7b0f3c1e-2a4d-4e5f-8a6b-9c0d1e2f3a4b', report_type: 'monthly' })).toMatchObject({ status: 'refused' });
    expect((await call(viewer, 'GET', '/api/patrol/7b0f3c1e-2a4d-4e5f-8a6b-9c0d1e2f3a4b')).body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^the worker refused its event: /),
    });
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
  });

  it('a refused event naming a report a worker has claimed leaves that scan alone: its report runs on and its lock stays', async () => {
    const id = '0c9e8d7f-6a5b-4c3d-8e2f-1a0b9c8d7e6f';
    await createReport({ report_id: id, report_type: 'on_demand', triggered_by: 'patrol-admin' });
    await acquireLock(PATROL_LOCK, id, 60_000);
    await claimReport(id, 'the-live-worker');
    try {
      const { handler } = await import('../../functions/patrol-worker.js');
      // A hand-made event with the running scan's id copied from the console.
      expect(await handler({ report_id: id, report_type: 'monthly' })).toMatchObject({ status: 'refused' });
      expect(await getReport(id)).toMatchObject({ status: 'running' });
      expect((await lockHolder(PATROL_LOCK))?.owner).toBe(id);
    } finally {
      await finishReport(id, { status: 'failed', error: 'closed by the test' });
      await releaseLock(PATROL_LOCK, id);
    }
  });

  it('a completed scan whose lock release fails is still completed, not thrown (Lambda retried it as a second scan); the lease frees the lock', async () => {
    noLlm();
    const { handler } = await import('../../functions/patrol-worker.js');
    let refused = 0;
    const stop = proxy.watch((request) => {
      if (request.operation !== 'DeleteItem' || !JSON.stringify(request.input.Key).includes('LOCK')) return undefined;
      refused++;
      return { type: 'InternalServerError', message: 'Internal server error', status: 500 };
    });
    let result: { status: string; report_id: string };
    try {
      result = (await handler({ report_type: 'scheduled' })) as typeof result;
    } finally {
      stop();
    }
    expect(refused).toBeGreaterThan(0);
    expect(result).toMatchObject({ status: 'completed' });
    expect(await getReport(result.report_id)).toMatchObject({ status: 'completed' });
    expect((await lockHolder(PATROL_LOCK))?.owner).toBe(result.report_id);
    await releaseLock(PATROL_LOCK, result.report_id);
  });

  it('a failed scan invoked as Lambda invokes it is recorded, then thrown: Lambda retries it, then its queue and alarms have it', async () => {
    useLlm();
    openai.enqueueError(500).enqueueError(500);
    const { handler } = await import('../../functions/patrol-worker.js');
    const failed = await handler({ report_type: 'scheduled' }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failed?.name).toBe('PatrolScanFailed');
    const reportId = /patrol scan (\S+) failed/.exec(failed!.message)![1]!;
    expect((await call(viewer, 'GET', `/api/patrol/${reportId}`)).body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/language model failed/),
    });
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
    noLlm();
  });

  it("Lambda's retry of a triggered scan that failed fails too, so the event reaches the failure queue", async () => {
    useLlm();
    openai.enqueueError(500).enqueueError(500);
    const res = await trigger();
    expect(res.body.status).toBe('failed');
    // The worker's event as the trigger sent it, delivered again (Lambda's one retry after the failure).
    const { handler } = await import('../../functions/patrol-worker.js');
    const again = await handler({ report_type: 'on_demand', triggered_by: 'patrol-admin', report_id: res.body.report_id }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(again?.name).toBe('PatrolScanFailed');
    expect(openai.answered()).toHaveLength(2); // no second scan
    noLlm();
  });
});

describe('reports whose scan died', () => {
  it('a running report whose scan no longer holds the lock reads as failed, and a repeated delivery does not scan twice', async () => {
    const old = new Date(Date.now() - 40 * 86_400_000);
    await createReport({ report_id: 'forgotten-report', report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER }, old);
    expect((await call(viewer, 'GET', '/api/patrol/forgotten-report')).body).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/stopped without finishing/),
    });
    // the days window: 40 days ago is in 90 days, not in 30
    expect((await call(viewer, 'GET', '/api/patrol?days=90&page_size=100')).body.reports.some((r: any) => r.report_id === 'forgotten-report')).toBe(true);
    expect((await call(viewer, 'GET', '/api/patrol?days=30&page_size=100')).body.reports.some((r: any) => r.report_id === 'forgotten-report')).toBe(false);

    noLlm();
    const done = (await trigger()).body;
    expect(done.status).toBe('completed');
    const { handler } = await import('../../functions/patrol-worker.js');
    expect(await handler({ report_type: 'on_demand', report_id: done.report_id })).toEqual({ status: 'already_running', report_id: done.report_id });
    expect((await call(viewer, 'GET', `/api/patrol/${done.report_id}`)).body.status).toBe('completed');
  });
});

describe('lists and KPIs', () => {
  it('match a brute-force computation over every report', async () => {
    const list = (await call(viewer, 'GET', '/api/patrol?days=90&page_size=100')).body;
    const reports = await Promise.all(list.reports.map(async (r: any) => (await call(viewer, 'GET', `/api/patrol/${r.report_id}`)).body));
    expect(list.total).toBe(reports.length);
    expect(list.reports.map((r: any) => r.created_at)).toEqual([...list.reports.map((r: any) => r.created_at)].sort().reverse());
    const completed = reports.filter((r) => r.status === 'completed');
    const finished = reports.filter((r) => r.status !== 'running');
    const kpis = (await call(viewer, 'GET', '/api/patrol/kpis/summary')).body;
    expect(kpis).toMatchObject({
      total_reports: completed.length,
      total_tokens: finished.reduce((s, r) => s + (r.total_tokens ?? 0), 0), // failed scans spent tokens too
      latest_report_at: completed[0].created_at,
    });
    expect(kpis.total_cost_usd).toBeCloseTo(
      finished.reduce((s, r) => s + (r.cost_usd ?? 0), 0),
      6,
    );
    expect(kpis.avg_duration_s).toBe(Math.round((completed.reduce((s, r) => s + r.duration_seconds, 0) / completed.length) * 100) / 100);
    const latest = (await call(viewer, 'GET', '/api/patrol/latest')).body;
    expect(latest.report_id).toBe(completed[0].report_id);
    const page2 = (await call(viewer, 'GET', '/api/patrol?page=2&page_size=2')).body;
    expect(page2.reports.map((r: any) => r.report_id)).toEqual(list.reports.slice(2, 4).map((r: any) => r.report_id));
    for (const [name, route] of Object.entries(patrolGroup.routes)) {
      if (route.method !== 'GET') continue;
      const { body } = await call(viewer, 'GET', route.path.replace('{report_id}', completed[0].report_id));
      const parsed = route.response!.safeParse(body);
      expect(parsed.success ? [] : parsed.error.issues.slice(0, 3), name).toEqual([]);
    }
  });
});
