// An agent worker killed mid-attempt (test/support/agent-child.ts, SIGKILL: Lambda's timeout, out of memory), on
// DynamoDB Local with a local OpenAI-compatible server: its model calls are in the usage ledger under the attempt's
// id, which its claim put on the task, so whoever finds the attempt stopped puts that spend on the task: the worker
// that takes the task over (the investigation that ends it counts it) or, after the last attempt, the failed task.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { runAgentTasks } from '../../shared/agents/run-tasks.js';
import { leaseMs } from '../../shared/agents/tasks.js';
import { updateItem } from '../../shared/db/client.js';
import { claimTask, createTask, getInvestigation, getTask, MAX_ATTEMPTS } from '../../shared/db/investigations.js';
import { listUsage } from '../../shared/db/llm-usage.js';
import { dropFleetViewCache, fleetView, type FleetView } from '../../shared/scoring/fleet-view.js';
import { useTestTables } from '../support/dynamo.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';

const ENV = ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_MAX_ATTEMPTS', 'LLM_RETRY_BASE_MS', 'AGENT_RETRY_SECONDS'];
let openai: FakeOpenAi;
let child: ChildProcess | undefined;
let view: FleetView;
beforeAll(async () => {
  await useTestTables();
  await loadDemoFleet(6);
  dropFleetViewCache();
  view = await fleetView();
  openai = await startFakeOpenAi();
  Object.assign(process.env, {
    LLM_PROVIDER: 'openai',
    LLM_MODEL: 'gpt-4o-mini',
    LLM_BASE_URL: openai.baseUrl,
    LLM_MAX_ATTEMPTS: '1',
    LLM_RETRY_BASE_MS: '5',
    AGENT_RETRY_SECONDS: '0',
  });
}, 120_000);
afterAll(async () => {
  child?.kill('SIGKILL');
  for (const v of ENV) delete process.env[v];
  await openai?.close();
});

const until = async (done: () => boolean | Promise<boolean>) => {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 100));
};
const agentCalls = async () => (await listUsage(1)).filter((u) => u.source === 'agent');

let clusters = 0;
/** A pending task for a cluster of the fleet (one cluster per test: its guard admits one open task). */
async function newTask() {
  const c = view.scores[clusters++]!;
  const task = {
    task_id: randomUUID(),
    cluster_id: c.cluster_id,
    cluster_name: c.cluster_name,
    customer_name: c.customer_name,
    customer_tier: c.customer_tier,
    trigger_reason: 'test',
    priority: 100,
    created_at: new Date().toISOString(),
  };
  expect(await createTask(task, new Date(0).toISOString())).toBe(true);
  return task.task_id;
}

/** Dates a task's claim back to `at`, as the lease passing leaves it. */
const ageClaim = (taskId: string, at: number) =>
  updateItem(
    'investigations',
    { pk: `TASK#${taskId}`, sk: 'TASK' },
    {
      UpdateExpression: 'SET claimed_at = :at',
      ExpressionAttributeValues: { ':at': new Date(at).toISOString() },
      ReturnValues: 'NONE',
    },
  );
/** Claims at these times, each after the one before lapsed: attempts whose workers died before any model call. */
async function deadClaims(taskId: string, count: number) {
  const step = leaseMs() + 60_000;
  for (let i = 1; i <= count; i++) expect(await claimTask(taskId, `dead-${i}`, leaseMs(), new Date(Date.now() - step * (count + 1 - i)))).toBeDefined();
}

/** Starts a worker on the open task, lets it make two answered model calls, kills it in its third; returns what the ledger charged. */
async function killedAfterTwoCalls(taskId: string) {
  openai.reset();
  openai
    .enqueueToolUse({ name: 'no_such_tool', input: {} }, { usage: { input_tokens: 1_000, output_tokens: 50 } })
    .enqueueToolUse({ name: 'no_such_tool', input: {} }, { usage: { input_tokens: 1_500, output_tokens: 70 } })
    .enqueue({ kind: 'delay', ms: 120_000, then: { kind: 'text', text: 'too late' } });
  const before = (await agentCalls()).length;
  child = spawn(process.execPath, ['--import', 'tsx', 'test/support/agent-child.ts'], { env: process.env, stdio: 'ignore' });
  await until(async () => (await agentCalls()).length === before + 2 && openai.received.length === 3);
  child.kill('SIGKILL');
  await new Promise((resolve) => child!.once('exit', resolve));
  child = undefined;
  const task = (await getTask(taskId))!;
  expect(task.status).toBe('running');
  const calls = (await agentCalls()).slice(before);
  expect(calls.every((c) => c.run_id === task.attempt_id)).toBe(true);
  const cost = Math.round(calls.reduce((n, c) => n + c.cost_usd, 0) * 1e6) / 1e6;
  expect(cost).toBeGreaterThan(0);
  // Its lease passes (the claim is dated back by a lease: no test waits ten minutes).
  await ageClaim(taskId, Date.parse(task.claimed_at!) - leaseMs() - 1_000);
  return { input_tokens: 2_500, output_tokens: 120, cost_usd: cost };
}

const ANSWER = JSON.stringify({ severity: 'warning', confidence: 0.5, root_cause: 'Cause.', recommended_actions: 'Act.', full_report: 'Report.' });

describe('an agent worker killed after some model calls', () => {
  it('the worker taking the task over counts that spend: the investigation ending the task carries it', { timeout: 60_000 }, async () => {
    const taskId = await newTask();
    const killed = await killedAfterTwoCalls(taskId);
    openai.reset();
    openai.enqueueText(ANSWER, { usage: { input_tokens: 2_000, output_tokens: 300 } });
    const run = await runAgentTasks();
    expect(run).toMatchObject({ claimed: 1, done: 1 });
    const task = (await getTask(taskId))!;
    expect(task).toMatchObject({ status: 'done', attempts: 2, last_error: expect.stringMatching(/attempt 1 stopped without finishing/) });
    expect(task).toMatchObject({ spent_input_tokens: 2_500, spent_output_tokens: 120, spent_cost_usd: killed.cost_usd });
    const investigation = (await getInvestigation(run.investigations[0]!))!;
    expect(investigation).toMatchObject({ input_tokens: 4_500, output_tokens: 420, total_tokens: 4_920 });
    expect(investigation.cost_usd).toBeGreaterThan(killed.cost_usd);
  });

  it('killed on its last attempt: the failed task carries that attempt’s tokens and cost', { timeout: 60_000 }, async () => {
    const taskId = await newTask();
    // Its first attempts' workers died before any model call (claims long past the lease).
    await deadClaims(taskId, MAX_ATTEMPTS - 1);
    const killed = await killedAfterTwoCalls(taskId);
    expect((await getTask(taskId))!.attempts).toBe(MAX_ATTEMPTS);
    expect(await runAgentTasks()).toMatchObject({ claimed: 0, failed: 1 });
    expect(await getTask(taskId)).toMatchObject({
      status: 'failed',
      last_error: expect.stringMatching(/attempt 3 of 3 stopped without finishing/),
      spent_input_tokens: killed.input_tokens,
      spent_output_tokens: killed.output_tokens,
      spent_cost_usd: killed.cost_usd,
    });
  });

  it('a task claimed before the attempt’s id was kept is still failed, with no spend, as before', { timeout: 60_000 }, async () => {
    const taskId = await newTask();
    await deadClaims(taskId, MAX_ATTEMPTS);
    await updateItem('investigations', { pk: `TASK#${taskId}`, sk: 'TASK' }, { UpdateExpression: 'REMOVE attempt_id', ReturnValues: 'NONE' });
    expect((await getTask(taskId))!.attempt_id).toBeUndefined();
    expect(await runAgentTasks()).toMatchObject({ failed: 1 });
    const task = (await getTask(taskId))!;
    expect(task).toMatchObject({ status: 'failed', last_error: expect.stringMatching(/attempt 3 of 3 stopped/) });
    expect(task.spent_input_tokens).toBeUndefined();
  });
});
