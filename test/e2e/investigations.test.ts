// Agent tasks and investigations (issue 10) through the local server on the
// demo fleet, without an LLM provider: a refresh creates tasks for the
// clusters meeting ai_trigger, the worker turns them into rules-based
// investigations, and every list, KPI and pending-task figure matches a
// brute-force computation and the routes' response schemas.
import { randomUUID } from 'node:crypto';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentTasks, leaseMs } from '../../shared/agents/tasks.js';
import { claimTask, completeTask, createTask, getTask } from '../../shared/db/investigations.js';
import { investigationsGroup } from '../../shared/routes/investigations.js';
import { fleetView, refreshFleetView } from '../../shared/scoring/fleet-view.js';
import { registerLocalWorker } from '../../shared/worker-invoke.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let superadmin: string;
let viewer: string;
const started: unknown[] = [];

beforeAll(async () => {
  delete process.env.LLM_PROVIDER;
  service = await startTestService({ adminPassword: 'investigations-admin-password', demoClusters: 16 });
  superadmin = await userToken('superadmin', 'inv-super');
  viewer = await userToken('viewer', 'inv-viewer');
  // The worker createAgentTasks starts is only counted until the last test: the tests run it themselves.
  registerLocalWorker('agent-worker', async (event) => void started.push(event));
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
const get = (path: string) => call(viewer, 'GET', path).then((r) => r.body);

/** The answer validates against the route's declared response schema. */
function conforms(route: keyof typeof investigationsGroup.routes, body: unknown) {
  const parsed = investigationsGroup.routes[route].response.safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues.slice(0, 3), route).toEqual([]);
}

/** A score refresh, then the task creation that follows every refresh. */
async function refreshAndCreate() {
  return createAgentTasks(await refreshFleetView(['fleet', 'health', 'risk']));
}

/** Brute force: the clusters the live rules' ai_trigger selects, from the API's own scores and rules. */
async function dueClusters(): Promise<any[]> {
  const [{ scores }, rules] = await Promise.all([get('/api/fleet/scores'), get('/api/fleet/rules')]);
  const t = rules.ai_trigger;
  return scores.filter((s: any) => t.tiers.includes(s.customer_tier) && s.tier_adjusted_score < t.below_score);
}

const SPEC_LIST_FIELDS = [
  'investigation_id',
  'cluster_name',
  'customer_name',
  'severity',
  'confidence',
  'root_cause',
  'recommended_actions',
  'model',
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'cost_usd',
  'duration_seconds',
];
const SPEC_TASK_FIELDS = ['task_id', 'cluster_id', 'cluster_name', 'customer_name', 'customer_tier', 'trigger_reason', 'priority', 'status', 'created_at'];

describe('before any task', () => {
  it('empty list, zero KPIs, no pending tasks, 404 for an unknown investigation', async () => {
    const list = await get('/api/investigations');
    expect(list).toMatchObject({ investigations: [], total: 0, page: 1, page_size: 20, source: 'live' });
    conforms('list', list);
    const kpis = await get('/api/investigations/kpis');
    expect(kpis).toMatchObject({
      total_investigations: 0,
      critical_count: 0,
      warning_count: 0,
      info_count: 0,
      total_tokens: 0,
      avg_confidence: 0,
      avg_duration_s: 0,
      total_cost_usd: 0,
    });
    conforms('kpis', kpis);
    const pending = await get('/api/investigations/pending-tasks');
    expect(pending).toMatchObject({ tasks: [], total: 0 });
    conforms('pendingTasks', pending);
    expect((await call(viewer, 'GET', '/api/investigations/no-such-id')).status).toBe(404);
    expect((await call(viewer, 'GET', '/api/investigations?days=0')).status).toBe(422);
    expect((await call(viewer, 'GET', '/api/investigations?severity=bad')).status).toBe(422);
  });
});

let taskIds: string[] = [];

describe('tasks from the refresh', () => {
  it('the default trigger (tiers S and A, below 60) makes a task for each cluster it selects, and starts the worker', async () => {
    const due = await dueClusters();
    expect(due.length).toBeGreaterThan(0);
    const result = await refreshAndCreate();
    expect(result).toEqual({ created: due.length, skipped: 0 });
    const pending = await get('/api/investigations/pending-tasks');
    expect(started).toEqual([{}]); // invoked without waiting: it ran on a later tick
    expect(pending.tasks.map((t: any) => t.cluster_id).sort()).toEqual(due.map((s) => s.cluster_id).sort());
    expect(pending.tasks.every((t: any) => t.status === 'pending')).toBe(true);
    // a second refresh while they are open adds nothing
    expect(await refreshAndCreate()).toEqual({ created: 0, skipped: due.length });
  });

  it('a wider trigger set by the superadmin adds the newly selected clusters; pending-tasks shows pending and running only, most urgent first', async () => {
    const live = parse((await call(superadmin, 'GET', '/api/settings/health-rules')).body.content);
    const before = new Set((await get('/api/investigations/pending-tasks')).tasks.map((t: any) => t.cluster_id));
    live.scoring.ai_trigger = { tiers: ['S', 'A', 'B'], below_score: 90, cooldown_hours: 0 };
    expect((await call(superadmin, 'PUT', '/api/settings/health-rules', { content: stringify(live) })).body).toMatchObject({ applied: true });
    const due = await dueClusters();
    expect(due.length).toBeGreaterThan(before.size + 1);
    expect(await refreshAndCreate()).toEqual({ created: due.length - before.size, skipped: before.size });

    // one task is taken by a worker that then crashes: it shows as running
    const open = await get('/api/investigations/pending-tasks');
    const crashed = open.tasks.at(-1);
    expect(await claimTask(crashed.task_id, 'crashed-worker', leaseMs(), new Date(Date.now() - leaseMs() - 60_000))).toBeDefined();

    const pending = await get('/api/investigations/pending-tasks');
    conforms('pendingTasks', pending);
    expect(pending.total).toBe(due.length);
    expect(pending.tasks.map((t: any) => t.cluster_id).sort()).toEqual(due.map((s) => s.cluster_id).sort());
    for (const task of pending.tasks) for (const field of SPEC_TASK_FIELDS) expect(task, field).toHaveProperty(field);
    expect(pending.tasks.filter((t: any) => t.status === 'running').map((t: any) => t.task_id)).toEqual([crashed.task_id]);
    expect(pending.tasks.every((t: any) => t.status === 'pending' || t.status === 'running')).toBe(true);
    const priorities = pending.tasks.map((t: any) => t.priority);
    expect(priorities).toEqual([...priorities].sort((a, b) => b - a));
    // brute force: tier first, then points below the threshold in force when the task was made
    const tierWeight: Record<string, number> = { S: 300, A: 200, B: 100 };
    for (const t of pending.tasks) {
      const s = due.find((d) => d.cluster_id === t.cluster_id);
      const threshold = before.has(t.cluster_id) ? 60 : 90;
      expect(t.priority).toBe(tierWeight[s.customer_tier]! + Math.min(99, Math.round(threshold - s.tier_adjusted_score)));
      expect(t.trigger_reason).toMatch(new RegExp(`^tier ${s.customer_tier}, tier-adjusted score ${s.tier_adjusted_score} < ${threshold}: `));
    }
    taskIds = pending.tasks.map((t: any) => t.task_id);
  });

  it('the worker handler turns every task into a rules-based investigation, taking over the crashed one', async () => {
    const { handler } = await import('../../functions/agent-worker.js');
    const summary = (await handler({})) as any;
    expect(summary).toMatchObject({ status: 'completed', claimed: taskIds.length, done: taskIds.length, failed: 0, stopped: 'empty' });
    expect(await get('/api/investigations/pending-tasks')).toMatchObject({ tasks: [], total: 0 });
    const tasks = await Promise.all(taskIds.map((id) => getTask(id)));
    expect(tasks.every((t) => t!.status === 'done' && t!.investigation_id)).toBe(true);
    expect(tasks.filter((t) => t!.attempts === 2).map((t) => t!.last_error)).toEqual([expect.stringMatching(/stopped without finishing/)]);
  });
});

describe('investigations', () => {
  it('every list field of the spec is present, the full report only in the detail, and each is rules-based', async () => {
    const list = await get('/api/investigations?page_size=100');
    conforms('list', list);
    expect(list.total).toBe(taskIds.length);
    const { scores } = await get('/api/fleet/scores');
    const severityOf: Record<string, string> = { Critical: 'critical', Warning: 'warning', Healthy: 'info' };
    for (const item of list.investigations) {
      for (const field of SPEC_LIST_FIELDS) expect(item, field).toHaveProperty(field);
      expect(item).not.toHaveProperty('full_report');
      const score = scores.find((s: any) => s.cluster_name === item.cluster_name);
      expect(item).toMatchObject({
        model: 'rules',
        cost_usd: 0,
        input_tokens: 0,
        output_tokens: 0,
        total_tokens: 0,
        severity: severityOf[score.classification],
        customer_name: score.customer_name,
      });
      expect(item.confidence).toBeGreaterThanOrEqual(0.3);
      expect(item.confidence).toBeLessThanOrEqual(0.5);
      const detail = await get(`/api/investigations/${item.investigation_id}`);
      conforms('get', detail);
      expect(detail).toMatchObject(item);
      expect(detail.full_report).toMatch(/Rule-based investigation: no LLM provider is configured/);
      expect(detail.full_report).toContain(score.cluster_name);
    }
    expect(list.investigations.map((i: any) => i.created_at)).toEqual([...list.investigations.map((i: any) => i.created_at)].sort().reverse());
  });

  it('filters, pages and KPIs match a brute-force computation', async () => {
    const all = (await get('/api/investigations?page_size=100')).investigations as any[];
    for (const severity of ['critical', 'warning', 'info']) {
      const res = await get(`/api/investigations?severity=${severity}&page_size=100`);
      expect(res.investigations.map((i: any) => i.investigation_id)).toEqual(all.filter((i) => i.severity === severity).map((i) => i.investigation_id));
      expect(res.total).toBe(all.filter((i) => i.severity === severity).length);
    }
    const customer = all[0].customer_name as string;
    const part = customer.slice(1, -1).toUpperCase(); // case-insensitive substring
    const byPart = await get(`/api/investigations?customer=${encodeURIComponent(part)}&page_size=100`);
    expect(byPart.investigations.map((i: any) => i.investigation_id)).toEqual(
      all.filter((i) => i.customer_name.toLowerCase().includes(part.toLowerCase())).map((i) => i.investigation_id),
    );
    expect(byPart.total).toBeGreaterThan(0);
    const pattern = `${customer[0]}%${customer.at(-1)}`; // LIKE wildcard
    const byPattern = await get(`/api/investigations?customer=${encodeURIComponent(pattern)}&page_size=100`);
    const re = new RegExp(`${customer[0]!.toLowerCase()}.*${customer.at(-1)!.toLowerCase()}`);
    expect(byPattern.investigations.map((i: any) => i.investigation_id)).toEqual(
      all.filter((i) => re.test(i.customer_name.toLowerCase())).map((i) => i.investigation_id),
    );
    expect((await get('/api/investigations?customer=no-such-customer')).total).toBe(0);
    // One cluster's, by its id (beyond the contract: the console's cluster page).
    const cluster = all[0].cluster_id as string;
    const byCluster = await get(`/api/investigations?cluster_id=${encodeURIComponent(cluster)}&page_size=100`);
    expect(byCluster.investigations.map((i: any) => i.investigation_id)).toEqual(all.filter((i) => i.cluster_id === cluster).map((i) => i.investigation_id));
    expect(new Set(all.map((i) => i.cluster_id)).size).toBeGreaterThan(1); // so the filter leaves some out
    expect((await get(`/api/investigations?cluster_id=${encodeURIComponent(cluster.toUpperCase())}x`)).total).toBe(0);

    const page2 = await get('/api/investigations?page=2&page_size=2');
    expect(page2).toMatchObject({ page: 2, page_size: 2, total: all.length });
    expect(page2.investigations.map((i: any) => i.investigation_id)).toEqual(all.slice(2, 4).map((i) => i.investigation_id));

    const kpis = await get('/api/investigations/kpis');
    conforms('kpis', kpis);
    const count = (s: string) => all.filter((i) => i.severity === s).length;
    expect(kpis).toMatchObject({
      total_investigations: all.length,
      critical_count: count('critical'),
      warning_count: count('warning'),
      info_count: count('info'),
      total_tokens: 0,
      total_cost_usd: 0,
      source: 'live',
    });
    expect(kpis.avg_confidence).toBeCloseTo(all.reduce((s, i) => s + i.confidence, 0) / all.length, 3);
    expect(kpis.avg_duration_s).toBeCloseTo(all.reduce((s, i) => s + i.duration_seconds, 0) / all.length, 2);
  });

  it('the days window reads created_at: a 40-day-old investigation is outside 30 days and inside 60', async () => {
    const { scores } = await get('/api/fleet/scores');
    const healthy = scores.at(-1);
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const task = {
      task_id: randomUUID(),
      cluster_id: healthy.cluster_id,
      cluster_name: healthy.cluster_name,
      customer_name: healthy.customer_name,
      customer_tier: healthy.customer_tier,
      trigger_reason: 'old',
      priority: 100,
      created_at: old,
    };
    expect(await createTask(task, old)).toBe(true);
    const claimed = (await claimTask(task.task_id, 'old-worker', leaseMs()))!;
    const investigation = {
      investigation_id: randomUUID(),
      task_id: task.task_id,
      cluster_id: task.cluster_id,
      cluster_name: task.cluster_name,
      customer_name: task.customer_name,
      severity: 'info' as const,
      confidence: 0.3,
      root_cause: 'old',
      recommended_actions: '- none',
      full_report: '# old',
      model: 'rules',
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      cost_usd: 0,
      duration_seconds: 1,
      created_at: old,
    };
    await completeTask(claimed, investigation);
    expect((await get('/api/investigations')).total).toBe(taskIds.length);
    expect((await get('/api/investigations?days=60')).total).toBe(taskIds.length + 1);
    expect((await get('/api/investigations/kpis?days=60')).total_investigations).toBe(taskIds.length + 1);
    expect((await get('/api/investigations/kpis')).total_investigations).toBe(taskIds.length);
    expect((await get(`/api/investigations/${investigation.investigation_id}`)).full_report).toBe('# old');
  });
});

describe('in the local runtime', () => {
  it('createAgentTasks starts the real worker in the background, which investigates the new tasks', async () => {
    const { handler } = await import('../../functions/agent-worker.js');
    registerLocalWorker('agent-worker', handler); // as the local service registers it
    const before = (await get('/api/investigations')).total;
    const { created } = await createAgentTasks(await fleetView()); // cooldown 0: the selected clusters again
    expect(created).toBe(taskIds.length);
    let pending: any;
    for (let i = 0; i < 100 && pending?.total !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      pending = await get('/api/investigations/pending-tasks');
    }
    expect(pending.total).toBe(0);
    expect((await get('/api/investigations')).total).toBe(before + created);
  });
});
