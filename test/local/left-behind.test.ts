// A service stopped hard (npm start killed: SIGKILL, an out-of-memory) in the middle of a refresh, a patrol scan
// and a metrics pull leaves each one's lease held and its record `running`. Its workers ran in-process, so the
// next start on the same tables ends them: the runs are recorded failed, saying why, and the work can be started
// again at once. The state the stopped process left is made by the very steps its workers had taken (the claim,
// the record, the worker's take-up), then the service is started again on the same tables, as npm start is.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listClusters } from '../../shared/db/clusters.js';
import { claimTask, createTask, getTask } from '../../shared/db/investigations.js';
import { acquireLock, lockHolder } from '../../shared/db/locks.js';
import { recordUsage } from '../../shared/db/llm-usage.js';
import { claimReport, createReport } from '../../shared/db/patrol.js';
import { createRefresh, getRefresh, type SnapshotKind } from '../../shared/db/scores.js';
import { PULL_LOCK } from '../../shared/metric-pull/lock.js';
import { PATROL_LOCK, takeLock } from '../../shared/patrol/lock.js';
import { claimRefresh, currentRuleVersions, refreshLockName, takeUpRefresh } from '../../shared/scoring/refresh-claim.js';
import { localWorkersSettled } from '../../shared/worker-invoke.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';

const PASSWORD = 'left-behind-password';
const tablePrefix = `left${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}-`;
const FLEET_KINDS: SnapshotKind[] = ['fleet', 'health', 'risk'];
const refreshId = randomUUID();
const riskId = randomUUID();
const queuedId = randomUUID();
const reportId = randomUUID();
const taskId = randomUUID();
const attemptId = randomUUID();
/** A model call the dead run had made, as the ledger recorded it (its run id: the report's, the attempt's). */
const paidCall = (runId: string) =>
  recordUsage({
    run_id: runId,
    source: 'agent',
    model: 'm',
    input_tokens: 100_000,
    output_tokens: 1_000,
    total_tokens: 101_000,
    cost_usd: 0.084,
    duration_ms: 900,
    error: false,
    user: 'patrol',
  });
let service: LocalService;
let token: string;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  // The first start: its tables, admin and a small fleet.
  const first = await startTestService({ tablePrefix, adminPassword: PASSWORD, demoClusters: 4 });
  await first.startupRuns;
  await first.stop();

  // What the killed process had done when it died. A fleet refresh its worker had taken up:
  const rules = await currentRuleVersions();
  expect(await claimRefresh(refreshId, FLEET_KINDS, rules)).toBeUndefined();
  await createRefresh(refreshId, FLEET_KINDS, { rules });
  expect(await takeUpRefresh(refreshId, FLEET_KINDS)).toBe('started');
  // A recompute-risk run and a run queued after it (a rule changed meanwhile), neither computed yet:
  expect(await claimRefresh(riskId, ['risk'], rules)).toBeUndefined();
  await createRefresh(riskId, ['risk'], { rules });
  expect(await takeUpRefresh(riskId, ['risk'])).toBe('started');
  expect(await claimRefresh(queuedId, ['risk'], { health: rules.health, risk: rules.risk + 1 })).toEqual({ after: riskId });
  await createRefresh(queuedId, ['risk'], { rules, after: riskId });
  // A patrol scan its worker had claimed:
  expect(await takeLock(reportId)).toBe(true);
  await createReport({ report_id: reportId, report_type: 'on_demand', triggered_by: 'admin' });
  await claimReport(reportId, randomUUID());
  await paidCall(reportId);
  await paidCall(reportId);
  // An agent task its worker had claimed (a cluster of the fleet, past the cooldown the first start's task began):
  const [cluster] = await listClusters();
  const task = {
    task_id: taskId,
    cluster_id: cluster!.cluster_id,
    cluster_name: cluster!.cluster_name,
    customer_name: cluster!.customer_name,
    customer_tier: cluster!.customer_tier,
    trigger_reason: 'score below the trigger',
    priority: 300,
    created_at: new Date().toISOString(),
  };
  expect(await createTask(task, '9999-12-31T00:00:00.000Z')).toBe(true);
  expect((await claimTask(taskId, randomUUID(), 600_000, new Date(), attemptId))?.status).toBe('running');
  await paidCall(attemptId);
  // A metrics pull under way:
  expect((await acquireLock(PULL_LOCK, randomUUID(), 11 * 60_000)).acquired).toBe(true);

  // npm start again on the same tables.
  process.env.REFRESH_WAIT_SECONDS = '20';
  service = await startTestService({ tablePrefix, adminPassword: PASSWORD, demoClusters: 4 });
  await service.startupRuns;
  const login = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  token = ((await login.json()) as { access_token: string }).access_token;
}, 180_000);

afterAll(async () => {
  delete process.env.REFRESH_WAIT_SECONDS;
  await localWorkersSettled();
  await service?.stop();
});

describe('a start after a service was killed mid-work', () => {
  it('records the refresh runs the dead process left failed, saying why, and lets go of their claims', async () => {
    for (const id of [refreshId, riskId, queuedId]) {
      const run = await getRefresh(id);
      expect(run?.status, id).toBe('failed');
      expect(run?.error).toMatch(/service stopped/);
    }
    expect(await lockHolder(refreshLockName(FLEET_KINDS))).toBeUndefined();
    expect(await lockHolder(refreshLockName(['risk']))).toBeUndefined();
    const followed = await call('GET', `/api/fleet/refresh/${refreshId}`);
    expect(followed.status, JSON.stringify(followed.body)).toBe(503);
  });

  it('a refresh after the restart runs at once rather than join the dead run', async () => {
    const res = await call('POST', '/api/fleet/refresh');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', clusters_scored: 4 });
    const risk = await call('POST', '/api/settings/recompute-risk');
    expect(risk.status, JSON.stringify(risk.body)).toBe(200);
  });

  it('the patrol report the dead scan left is failed, and a new scan can be triggered', async () => {
    const report = await call('GET', `/api/patrol/${reportId}`);
    expect(report.status).toBe(200);
    expect(report.body.status).toBe('failed');
    expect(report.body.error).toMatch(/service stopped/);
    // What its model calls cost is the report's, as the ledger charged it (a restart had left it at 0).
    expect(report.body).toMatchObject({ total_tokens: 202_000, cost_usd: 0.168 });
    const triggered = await call('POST', '/api/patrol/trigger', { report_type: 'on_demand' });
    expect(triggered.body.status, JSON.stringify(triggered.body)).toBe('completed');
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
  });

  it('ends the agent task attempt the dead worker held as a failed one: pending again at once, the attempt counted', async () => {
    const task = await getTask(taskId);
    expect(task, JSON.stringify(task)).toMatchObject({ status: 'pending', owner: null, attempts: 1 });
    expect(task?.last_error).toMatch(/attempt 1 stopped without finishing: the service stopped/);
    // Its spend stays the task's, for the investigation that ends it to count.
    expect(task).toMatchObject({ spent_input_tokens: 100_000, spent_output_tokens: 1_000, spent_cost_usd: 0.084 });
    expect(Date.parse(task!.not_before!)).toBeLessThanOrEqual(Date.now());
  });

  it('Pull now starts a pull rather than follow the dead one', async () => {
    const res = await call('POST', '/api/metric-sources/pull');
    expect(res.body.status, JSON.stringify(res.body)).not.toBe('already_running');
  });
});
