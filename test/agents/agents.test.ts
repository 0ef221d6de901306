// Agent tasks and investigations (issue 10) against DynamoDB Local and a local
// OpenAI-compatible server: task creation (tiers, threshold, cooldown, never a
// duplicate, concurrent creators), claiming (two workers, one claim; the lease
// of a crashed worker), retries ending in `failed` after 3 attempts, an LLM
// investigation with a tool call and a repair round (tokens, cost and ledger
// exact), and the rules-based investigation.
import { DATA_NOT_INSTRUCTIONS } from '../../shared/llm/tool-loop.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { rulesInvestigation, clusterFacts, InvestigationAnswer, RULES_CONFIDENCE } from '../../shared/agents/investigate.js';
import { runAgentTasks } from '../../shared/agents/run-tasks.js';
import { createAgentTasks, investigationMs, leaseMs, retryDelayMs, taskPriority, triggerReason } from '../../shared/agents/tasks.js';
import { dropFleetDatabase } from '../../shared/chat/tools.js';
import {
  claimTask,
  completeTask,
  createTask,
  failTaskAttempt,
  getInvestigation,
  getTask,
  listInvestigationsSince,
  listOpenTasks,
  MAX_ATTEMPTS,
  type AgentTask,
} from '../../shared/db/investigations.js';
import { listUsage } from '../../shared/db/llm-usage.js';
import { budgetSpentWords } from '../../shared/llm/agent-budget.js';
import { withAgentBudgetSpent } from '../support/agent-budget.js';
import type { FleetClusterScore } from '../../shared/scoring/fleet-score.js';
import { dropFleetViewCache, fleetView, type FleetView } from '../../shared/scoring/fleet-view.js';
import { registerLocalWorker } from '../../shared/worker-invoke.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy, Watcher } from '../support/dynamo-proxy.js';
import { openAiReply, startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { getItem } from '../../shared/db/client.js';

const HOUR = 3_600_000;
const TRIGGER = { tiers: ['S', 'A'] as ('S' | 'A' | 'B')[], below_score: 60, cooldown_hours: 24 };

let openai: FakeOpenAi;
const invocations: unknown[] = [];

beforeAll(async () => {
  process.env.AGENT_RETRY_SECONDS = '0'; // retries at once here; spacing is tested on its own
  openai = await startFakeOpenAi();
  // createAgentTasks starts the worker: here it is only counted, the tests run the worker themselves.
  registerLocalWorker('agent-worker', async (event) => void invocations.push(event));
});
afterAll(async () => {
  for (const v of ['LLM_PROVIDER', 'LLM_MODEL', 'LLM_BASE_URL', 'LLM_MAX_ATTEMPTS', 'LLM_RETRY_BASE_MS', 'AGENT_RETRY_SECONDS']) delete process.env[v];
  await openai?.close();
});
beforeEach(() => {
  openai.reset();
  invocations.length = 0;
});

const useLlm = () =>
  Object.assign(process.env, { LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini', LLM_BASE_URL: openai.baseUrl, LLM_MAX_ATTEMPTS: '1', LLM_RETRY_BASE_MS: '5' });
const noLlm = () => delete process.env.LLM_PROVIDER;

/** A scored cluster as the fleet view holds it (only what task creation reads matters). */
function scored(tier: string, tierAdjusted: number, reasons = ['Disk Usage at 93 (red ≥ 90)', '3 alerts fired in the last 7 days']): FleetClusterScore {
  const id = randomUUID();
  return {
    cluster_id: id,
    cluster_name: `c-${id.slice(0, 8)}`,
    customer_name: `Customer ${tier}`,
    account_id: 'acct',
    customer_tier: tier,
    overall_score: tierAdjusted,
    metrics_score: tierAdjusted,
    alerts_score: 100,
    tier_adjusted_score: tierAdjusted,
    classification: tierAdjusted < 60 ? 'Critical' : tierAdjusted < 80 ? 'Warning' : 'Healthy',
    top_risk: 'Disk Usage (12)',
    cluster_type: 'ELASTIC',
    region: 'US East (us-east-1)',
    dimension_scores: [],
    risk_reasons: reasons,
    suggested_actions: [],
    firing_alert_count_7d: 3,
    metrics: { compaction_score: null, disk_used_pct: 93, query_errors_7d: null, query_error_pct: null, qps: null, node_count: 3 },
    last_metric_at: new Date().toISOString(),
    metrics_stale: false,
  };
}
const viewOf = (scores: FleetClusterScore[], trigger = TRIGGER) => ({ health: { rules: { ai_trigger: trigger } }, scores }) as unknown as FleetView;
const openFor = async (scores: FleetClusterScore[]) => {
  const ids = new Set(scores.map((s) => s.cluster_id));
  return (await listOpenTasks()).filter((t) => ids.has(t.cluster_id));
};
/** Runs a task through one claim to `failed` (no retry), freeing its cluster's guard. */
async function closeAsFailed(task: AgentTask) {
  const claimed = await claimTask(task.task_id, 'test-closer', leaseMs());
  expect(await failTaskAttempt(claimed!, 'closed by the test', false)).toBe('failed');
}

describe('task creation', () => {
  beforeAll(async () => {
    await useTestTables();
  });

  it('creates a pending task for each cluster of a trigger tier below the threshold, with reason and priority, and starts the worker once', async () => {
    const s41 = scored('S', 41.2);
    const a59 = scored('A', 59.9);
    const others = [scored('A', 60), scored('B', 10), scored('S', 80)];
    const now = new Date();
    expect(await createAgentTasks(viewOf([s41, a59, ...others]), now)).toEqual({ created: 2, skipped: 0 });
    const tasks = await openFor([s41, a59, ...others]);
    expect(tasks.map((t) => t.cluster_id)).toEqual([s41.cluster_id, a59.cluster_id]); // most urgent first
    expect(tasks[0]).toMatchObject({
      cluster_name: s41.cluster_name,
      customer_name: 'Customer S',
      customer_tier: 'S',
      status: 'pending',
      attempts: 0,
      last_error: null,
      created_at: now.toISOString(),
      priority: 319,
      trigger_reason: 'tier S, tier-adjusted score 41.2 < 60: Disk Usage at 93 (red ≥ 90); 3 alerts fired in the last 7 days',
    });
    expect(tasks[1]!.priority).toBe(200);
    expect(invocations).toEqual([{}]);
  });

  it('priority puts tier first, then how far below the threshold; the reason lists at most three risks', () => {
    expect(taskPriority(scored('S', 59), TRIGGER)).toBeGreaterThan(taskPriority(scored('A', 0), TRIGGER));
    expect(taskPriority(scored('A', 10), TRIGGER)).toBeGreaterThan(taskPriority(scored('A', 50), TRIGGER));
    expect(taskPriority(scored('S', 0), { ...TRIGGER, below_score: 100 })).toBe(399);
    expect(triggerReason(scored('A', 30, ['r1', 'r2', 'r3', 'r4']), TRIGGER)).toBe('tier A, tier-adjusted score 30 < 60: r1; r2; r3; …');
    expect(triggerReason(scored('A', 30, []), TRIGGER)).toBe('tier A, tier-adjusted score 30 < 60: top risk Disk Usage (12)');
  });

  it('never a second task while one is pending or running, nor within the cooldown after it ends', async () => {
    const s = scored('S', 30);
    const t0 = new Date();
    expect(await createAgentTasks(viewOf([s]), t0)).toEqual({ created: 1, skipped: 0 });
    expect(await createAgentTasks(viewOf([s]), t0)).toEqual({ created: 0, skipped: 1 });
    const [task] = await openFor([s]);
    await claimTask(task!.task_id, 'some-worker', leaseMs());
    // running, even past the cooldown: still no second task
    expect(await createAgentTasks(viewOf([s]), new Date(t0.getTime() + 30 * HOUR))).toEqual({ created: 0, skipped: 1 });
    const running = (await getTask(task!.task_id))!;
    expect(await failTaskAttempt(running, 'gave up', false)).toBe('failed');
    expect(await createAgentTasks(viewOf([s]), new Date(t0.getTime() + 23 * HOUR))).toEqual({ created: 0, skipped: 1 });
    expect(await createAgentTasks(viewOf([s]), new Date(t0.getTime() + 24 * HOUR + 1000))).toEqual({ created: 1, skipped: 0 });
    expect(await openFor([s])).toHaveLength(1);
  });

  it('with no cooldown, a new task as soon as the last one ends', async () => {
    const s = scored('A', 20);
    const trigger = { ...TRIGGER, cooldown_hours: 0 };
    expect((await createAgentTasks(viewOf([s], trigger))).created).toBe(1);
    expect((await createAgentTasks(viewOf([s], trigger))).created).toBe(0);
    await closeAsFailed((await openFor([s]))[0]!);
    expect((await createAgentTasks(viewOf([s], trigger))).created).toBe(1);
  });

  it('concurrent creators (a refresh and the schedule at once) make exactly one task per cluster', async () => {
    const scores = Array.from({ length: 8 }, (_, i) => scored(i % 2 ? 'S' : 'A', 10 + i));
    const results = await Promise.all(Array.from({ length: 6 }, () => createAgentTasks(viewOf(scores))));
    expect(results.reduce((n, r) => n + r.created, 0)).toBe(8);
    expect(results.every((r) => r.created + r.skipped === 8)).toBe(true);
    const tasks = await openFor(scores);
    expect(tasks).toHaveLength(8);
    expect(new Set(tasks.map((t) => t.cluster_id)).size).toBe(8);
  });

  it('starts the worker again while tasks are waiting, and not when there is nothing to do', async () => {
    const s = scored('S', 5);
    await createAgentTasks(viewOf([s]));
    invocations.length = 0;
    expect(await createAgentTasks(viewOf([s]))).toEqual({ created: 0, skipped: 1 });
    expect(invocations).toHaveLength(1); // pending tasks wait: the worker is started again
    for (const t of await listOpenTasks()) await closeAsFailed(t);
    invocations.length = 0;
    expect(await createAgentTasks(viewOf([s]))).toEqual({ created: 0, skipped: 1 }); // in cooldown
    expect(invocations).toHaveLength(0);
  });
});

describe('claiming', () => {
  beforeAll(async () => {
    await useTestTables();
  });

  const newTask = async () => {
    const s = scored('S', 30);
    await createAgentTasks(viewOf([s]));
    return (await openFor([s]))[0]!;
  };

  it('two workers claiming the same task at once: exactly one gets it', async () => {
    for (let i = 0; i < 5; i++) {
      const task = await newTask();
      const claims = await Promise.all([claimTask(task.task_id, 'worker-1', leaseMs()), claimTask(task.task_id, 'worker-2', leaseMs())]);
      const won = claims.filter(Boolean);
      expect(won).toHaveLength(1);
      expect(won[0]).toMatchObject({ status: 'running', attempts: 1, owner: expect.stringMatching(/^worker-[12]$/) });
      expect(await getTask(task.task_id)).toMatchObject({ status: 'running', attempts: 1, owner: won[0]!.owner });
    }
  });

  it('a running task is taken over only once its claim is older than the lease, and the crashed attempt counts', async () => {
    const task = await newTask();
    const now = Date.now();
    expect(await claimTask(task.task_id, 'crashed', leaseMs(), new Date(now - leaseMs() - 60_000))).toBeDefined();
    const taken = await claimTask(task.task_id, 'rescuer', leaseMs(), new Date(now));
    expect(taken).toMatchObject({ owner: 'rescuer', attempts: 2, last_error: expect.stringMatching(/stopped without finishing/) });
    expect(await claimTask(task.task_id, 'third', leaseMs(), new Date(now + 1000))).toBeUndefined();
    // the crashed worker coming back cannot finish what is no longer its claim
    await expect(failTaskAttempt({ ...taken!, owner: 'crashed', attempts: 1 }, 'late')).rejects.toThrow(/conditional/);
    expect(await getTask(task.task_id)).toMatchObject({ status: 'running', owner: 'rescuer', last_error: expect.stringMatching(/attempt 1 stopped/) });
  });

  it('a failed attempt goes back to pending with the reason; the third ends failed and frees the cluster', async () => {
    const task = await newTask();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const claimed = await claimTask(task.task_id, `w${attempt}`, leaseMs());
      expect(claimed!.attempts).toBe(attempt);
      expect(await failTaskAttempt(claimed!, `boom ${attempt}`)).toBe(attempt < MAX_ATTEMPTS ? 'pending' : 'failed');
      expect(await getTask(task.task_id)).toMatchObject({ status: attempt < MAX_ATTEMPTS ? 'pending' : 'failed', last_error: `boom ${attempt}` });
    }
    expect(await claimTask(task.task_id, 'w4', leaseMs())).toBeUndefined();
    expect((await listOpenTasks()).map((t) => t.task_id)).not.toContain(task.task_id);
  });

  it('the worker fails a task whose worker died on its last attempt', async () => {
    // Only this task is open in these tables now (the others are running under live claims or closed).
    for (const t of await listOpenTasks()) if (t.status === 'pending') await closeAsFailed(t);
    const task = await newTask();
    const now = Date.now();
    for (const [i, ago] of [40, 25, 12].entries())
      expect((await claimTask(task.task_id, `dead-${i}`, leaseMs(), new Date(now - ago * 60_000)))?.attempts).toBe(i + 1);
    const run = await runAgentTasks({ budgetMs: 30_000 });
    expect(run).toMatchObject({ claimed: 0, failed: 1 });
    expect(await getTask(task.task_id)).toMatchObject({
      status: 'failed',
      attempts: 3,
      last_error: expect.stringMatching(/attempt 3 of 3 stopped without finishing/),
    });
  });
});

describe('the worker on a fleet', () => {
  let view: FleetView;
  let proxy: DynamoProxy;
  beforeAll(async () => {
    ({ proxy } = await useTestTables({ proxy: true }));
    await loadDemoFleet(12);
    dropFleetViewCache();
    await dropFleetDatabase();
    view = await fleetView();
  }, 120_000);

  /** A task for each of these clusters (any tier, any score), created through createAgentTasks. */
  async function tasksFor(scores: FleetClusterScore[]) {
    const result = await createAgentTasks(viewOf(scores, { tiers: ['S', 'A', 'B'], below_score: 101, cooldown_hours: 0 }));
    expect(result.created).toBe(scores.length);
    return openFor(scores);
  }

  it('two workers at once: every task is investigated exactly once (rules engine)', async () => {
    noLlm();
    const tasks = await tasksFor(view.scores.slice(0, 6));
    const runs = await Promise.all([runAgentTasks(), runAgentTasks()]);
    expect(runs[0]!.done + runs[1]!.done).toBe(6);
    expect(runs.every((r) => r.stopped === 'empty' && r.failed === 0)).toBe(true);
    const done = await Promise.all(tasks.map((t) => getTask(t.task_id)));
    expect(done.every((t) => t!.status === 'done' && t!.attempts === 1)).toBe(true);
    const investigations = (await listInvestigationsSince(new Date(Date.now() - HOUR))).filter((i) => tasks.some((t) => t.task_id === i.task_id));
    expect(investigations).toHaveLength(6);
    expect(new Set(investigations.map((i) => i.task_id)).size).toBe(6);
    expect(done.map((t) => t!.investigation_id).sort()).toEqual(investigations.map((i) => i.investigation_id).sort());
  });

  it('the rules-based investigation names the breached thresholds, the matching runbooks and the actions, with low confidence', async () => {
    noLlm();
    const worst = view.scores.find((s) => s.dimension_scores.some((d) => d.status !== 'healthy'))!;
    const [task] = await tasksFor([worst]);
    const run = await runAgentTasks();
    expect(run.done).toBe(1);
    const investigation = (await getInvestigation(run.investigations[0]!))!;
    const severity = { Critical: 'critical', Warning: 'warning', Healthy: 'info' }[worst.classification];
    expect(investigation).toMatchObject({
      task_id: task!.task_id,
      cluster_id: worst.cluster_id,
      cluster_name: worst.cluster_name,
      customer_name: worst.customer_name,
      severity,
      confidence: RULES_CONFIDENCE.withThresholds,
      model: 'rules',
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      cost_usd: 0,
    });
    expect(investigation.root_cause).toContain(worst.risk_reasons[0]);
    expect(investigation.full_report).toMatch(/Rule-based investigation: no LLM provider is configured/);
    // The scores table has a header of words (an empty one rendered as a blank strip) and one-decimal scores, as the console writes them.
    expect(investigation.full_report).toContain('## Scores\n| Score | Value |\n|---|---|\n');
    expect(investigation.full_report).toContain(`| Tier-adjusted score | ${worst.tier_adjusted_score.toFixed(1)} |`);
    // firing_alert_count_7d counts resolved alerts of the 7 days too: not called "firing", as if all still fired.
    expect(investigation.full_report).toContain(`| Alerts fired in the last 7 days (still firing or resolved) | ${worst.firing_alert_count_7d} |`);
    expect(investigation.full_report).toContain(
      `| Overall / metrics / alerts score | ${[worst.overall_score, worst.metrics_score, worst.alerts_score].map((s) => s.toFixed(1)).join(' / ')} |`,
    );
    for (const reason of worst.risk_reasons) expect(investigation.full_report).toContain(reason);
    for (const action of worst.suggested_actions) expect(investigation.recommended_actions).toContain(`- ${action}`);
    // the runbook of the worst dimension
    const runbookOf: Record<string, string> = {
      'Disk Usage': 'disk-full.md',
      'Compaction Score': 'compaction-backlog.md',
      'Query Error Rate': 'query-error-spike.md',
      'Peak JVM Heap': 'jvm-heap-pressure.md',
      'P99 Latency': 'slow-queries.md',
      'Slow Queries (7 days)': 'slow-queries.md',
    };
    const top = worst.dimension_scores.filter((d) => d.status !== 'healthy').sort((a, b) => a.score - b.score)[0]!.name;
    expect(investigation.full_report).toContain(runbookOf[top]!);
    expect(investigation.recommended_actions).toMatch(/Follow the runbook/);
  });

  it('a healthy cluster with nothing breached: info, and a lower confidence', async () => {
    const healthy = view.scores.find((s) => s.classification === 'Healthy' && s.dimension_scores.every((d) => d.status === 'healthy'))!;
    const facts = await clusterFacts({ task_id: 't', cluster_id: healthy.cluster_id, cluster_name: healthy.cluster_name, trigger_reason: 'test' } as AgentTask);
    const findings = await rulesInvestigation({ ...facts, risk: facts.risk && { ...facts.risk, risk_signals: [] } });
    expect(findings).toMatchObject({ severity: 'info', confidence: RULES_CONFIDENCE.without, model: 'rules' });
  });

  it('investigates with the LLM: a tool call, a repair round, tokens and cost exact, ledger rows with source agent', async () => {
    useLlm();
    const cluster = view.scores[0]!;
    const [task] = await tasksFor([cluster]);
    const answer = {
      severity: 'Critical',
      confidence: 0.8,
      root_cause: 'The disk is filling with expired partitions.',
      recommended_actions: ['Drop expired partitions', 'Expand storage'],
      full_report: '## Findings\nDisk at 93%.',
    };
    openai
      .enqueueToolUse({ name: 'cluster_info', input: { cluster: cluster.cluster_name } }, { usage: { input_tokens: 3000, output_tokens: 50 } })
      .enqueueText('My findings: {"severity": "critical"}', { usage: { input_tokens: 4000, output_tokens: 120 } })
      .enqueueText(JSON.stringify(answer), { usage: { input_tokens: 5000, output_tokens: 400 } });
    const run = await runAgentTasks();
    expect(run).toMatchObject({ claimed: 1, done: 1 });
    const investigation = (await getInvestigation(run.investigations[0]!))!;
    expect(investigation).toMatchObject({
      task_id: task!.task_id,
      severity: 'critical',
      confidence: 0.8,
      root_cause: answer.root_cause,
      recommended_actions: '- Drop expired partitions\n- Expand storage',
      full_report: answer.full_report,
      model: 'gpt-4o-mini',
      input_tokens: 12_000,
      output_tokens: 570,
      total_tokens: 12_570,
    });
    expect(investigation.cost_usd).toBeCloseTo((12_000 * 0.15 + 570 * 0.6) / 1e6, 9);
    const ledger = (await listUsage(1)).filter((u) => u.run_id === investigation.investigation_id);
    expect(ledger.map((u) => [u.source, u.user, u.error])).toEqual(Array(3).fill(['agent', 'agent-worker', false]));
    expect(ledger.reduce((s, u) => s + u.total_tokens, 0)).toBe(12_570);
    expect(investigation.cost_usd).toBeCloseTo(
      ledger.reduce((s, u) => s + u.cost_usd, 0),
      9,
    );
    const [first, second, repair] = openai.answered();
    expect(first!.body.messages.at(-1)!.content).toContain(`Investigate cluster ${cluster.cluster_name}`);
    expect(first!.body.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining(DATA_NOT_INSTRUCTIONS) }); // logs are others' words
    expect(first!.body.tools!.map((t) => t.function.name).sort()).toEqual(['analyze_logs', 'cluster_info', 'run_sql', 'search_knowledge']);
    const toolResult = second!.body.messages.find((m) => m.role === 'tool')!;
    expect(JSON.parse(toolResult.content!).inventory.cluster_id).toBe(cluster.cluster_id); // the tool really ran
    expect(repair!.body.messages.at(-1)!.content).toMatch(/did not validate/);
    expect(await getTask(task!.task_id)).toMatchObject({ status: 'done', investigation_id: investigation.investigation_id, attempts: 1 });
  });

  it('records an internal failure by its kind only: the error text, which may name the account, stays in the log', async () => {
    useLlm();
    const [task] = await tasksFor(view.scores.slice(3, 4));
    // DynamoDB refusing the investigation's write the way IAM does, naming the role and the table.
    const denial =
      'AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role/fleet-agent/x is not authorized to perform: dynamodb:TransactWriteItems';
    const deny: Watcher = ({ input }) =>
      input.TransactItems && JSON.stringify(input).includes('root_cause') ? { type: 'AccessDeniedException', message: denial } : undefined;
    // Every task this run claims gets a valid answer, and every one's write is refused.
    openai.defaultReply = openAiReply.text(
      JSON.stringify({ severity: 'warning', confidence: 0.5, root_cause: 'Cause.', recommended_actions: 'Act.', full_report: 'Report.' }),
    );
    const stopDenying = proxy.watch(deny);
    try {
      expect((await runAgentTasks()).retried).toBeGreaterThanOrEqual(1);
    } finally {
      stopDenying();
    }
    expect((await getTask(task!.task_id))!.last_error).toBe('internal error (see the agent-worker logs)');
  });

  it('holds the actions to 8,000 characters whichever form the model answers them in', () => {
    const answer = { severity: 'warning', confidence: 0.5, root_cause: 'Cause.', full_report: 'Report.' };
    const actions = Array.from({ length: 30 }, (_, i) => `${i} ${'x'.repeat(990)}`);
    expect(InvestigationAnswer.safeParse({ ...answer, recommended_actions: actions }).success).toBe(false);
    expect(InvestigationAnswer.safeParse({ ...answer, recommended_actions: actions.join('\n') }).success).toBe(false);
    const fits = InvestigationAnswer.safeParse({ ...answer, recommended_actions: actions.slice(0, 7) });
    expect(fits.success && fits.data.recommended_actions).toBe(
      actions
        .slice(0, 7)
        .map((a) => `- ${a}`)
        .join('\n'),
    );
  });

  it('keeps a confidence to three decimals, so one DynamoDB cannot store as given (1e-200) is stored as 0', async () => {
    useLlm();
    const clusters = view.scores.slice(1, 3);
    await tasksFor(clusters);
    const answer = (confidence: number) =>
      JSON.stringify({ severity: 'warning', confidence, root_cause: 'Cause.', recommended_actions: 'Act.', full_report: 'Report.' });
    openai.enqueueText(answer(1e-200)).enqueueText(answer(0.12345));
    const run = await runAgentTasks();
    expect(run).toMatchObject({ claimed: 2, done: 2 });
    const confidences = await Promise.all(run.investigations.map(async (id) => (await getInvestigation(id))!.confidence));
    expect(confidences.sort()).toEqual([0, 0.123]);
  });

  it('counts what a failed attempt spent in the investigation that ends the task, as the ledger does', async () => {
    useLlm();
    const [task] = await tasksFor([view.scores[3]!]);
    const answer = { severity: 'warning', confidence: 0.5, root_cause: 'Cause.', recommended_actions: 'Act.', full_report: 'Report.' };
    openai
      // Attempt 1: an answer and its repair that never validate, both paid.
      .enqueueText('no JSON here', { usage: { input_tokens: 1000, output_tokens: 10 } })
      .enqueueText('still none', { usage: { input_tokens: 1100, output_tokens: 20 } })
      // Attempt 2: a valid answer.
      .enqueueText(JSON.stringify(answer), { usage: { input_tokens: 2000, output_tokens: 300 } });
    const run = await runAgentTasks();
    expect(run).toMatchObject({ claimed: 2, retried: 1, done: 1 });
    const investigation = (await getInvestigation(run.investigations[0]!))!;
    expect(investigation).toMatchObject({ task_id: task!.task_id, input_tokens: 4100, output_tokens: 330, total_tokens: 4430 });
    // Kept 400 days (reads reach 365 back), then DynamoDB's TTL removes them: the investigation and its closed task.
    const expiry = (item: Record<string, unknown> | undefined) => (Number(item?.ttl) * 1000 - Date.now()) / 86_400_000;
    expect(expiry(await getItem('investigations', { pk: `INV#${investigation.investigation_id}`, sk: 'INV' }, true))).toBeCloseTo(400, 0);
    expect(expiry(await getItem('investigations', { pk: `TASK#${task!.task_id}`, sk: 'TASK' }, true))).toBeCloseTo(400, 0);
    const charged = (await listUsage(1)).filter((u) => u.source === 'agent' && u.input_tokens >= 1000 && u.input_tokens <= 2000);
    expect(investigation.cost_usd).toBeCloseTo((4100 * 0.15 + 330 * 0.6) / 1e6, 6);
    expect(charged.length).toBeGreaterThanOrEqual(3);
  });

  it("once the day's AI budget is spent, investigates by the rules and says why; under it, asks the model", async () => {
    useLlm();
    await withAgentBudgetSpent(async (spent) => {
      const [task] = await tasksFor([view.scores[4]!]);
      const run = await runAgentTasks();
      expect(run.done).toBeGreaterThanOrEqual(1);
      const investigation = (await Promise.all(run.investigations.map(async (id) => (await getInvestigation(id))!))).find((i) => i.task_id === task!.task_id)!;
      expect(investigation).toMatchObject({ model: 'rules', cost_usd: 0, total_tokens: 0 });
      expect(investigation.full_report).toContain(`_Rule-based investigation: ${budgetSpentWords(spent)}, so this report applies`);
      expect(openai.received).toHaveLength(0);

      // A budget above the day's spend: the model is asked again.
      process.env.AGENT_DAILY_BUDGET_USD = (spent.spentUsd + 1).toFixed(6);
      const answer = { severity: 'info', confidence: 0.6, root_cause: 'Nothing urgent.', recommended_actions: 'Watch it.', full_report: 'Calm.' };
      openai.enqueueText(JSON.stringify(answer), { usage: { input_tokens: 100, output_tokens: 10 } });
      const [next] = await tasksFor([view.scores[5]!]);
      const asked = await runAgentTasks();
      const modelled = (await Promise.all(asked.investigations.map(async (id) => (await getInvestigation(id))!))).find((i) => i.task_id === next!.task_id)!;
      expect(modelled).toMatchObject({ model: 'gpt-4o-mini', root_cause: 'Nothing urgent.' });
    });
  });

  it('a failing LLM: retried, then failed after 3 attempts with the reason; every failed call is in the ledger', async () => {
    useLlm();
    const [task] = await tasksFor([view.scores[1]!]);
    openai.enqueueError(500).enqueueError(500).enqueueError(500);
    const run = await runAgentTasks();
    expect(run).toMatchObject({ claimed: 3, retried: 2, failed: 1, done: 0 });
    expect(await getTask(task!.task_id)).toMatchObject({ status: 'failed', attempts: 3, last_error: expect.stringMatching(/^the language model failed/) });
    const errors = (await listUsage(1)).filter((u) => u.error && u.source === 'agent');
    expect(errors.length).toBeGreaterThanOrEqual(3);
  });

  it('the worker throws when a task failed for good (its failure queue and Errors alarm see it), and completes when none did', async () => {
    useLlm();
    const { handler, AgentTasksFailed } = await import('../../functions/agent-worker.js');
    const [task] = await tasksFor([view.scores[2]!]);
    openai.enqueueError(500).enqueueError(500).enqueueError(500);
    const failed = await handler({}).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(AgentTasksFailed);
    expect((failed as Error).message).toBe('1 agent task(s) failed on their last attempt (the log names why)');
    expect(await getTask(task!.task_id)).toMatchObject({ status: 'failed', attempts: 3 });
    expect(await handler({})).toMatchObject({ status: 'completed', failed: 0 });
  });

  it('refuses an investigation time that leaves the worker no time to claim a task before its timeout', () => {
    Object.assign(process.env, { AGENT_INVESTIGATION_SECONDS: '870', AGENT_TASK_LEASE_SECONDS: '1800' });
    try {
      expect(() => investigationMs()).toThrow(/AGENT_INVESTIGATION_SECONDS must be a number of seconds from 120 to 600/);
      process.env.AGENT_INVESTIGATION_SECONDS = '600';
      expect(investigationMs()).toBe(600_000);
    } finally {
      delete process.env.AGENT_INVESTIGATION_SECONDS;
      delete process.env.AGENT_TASK_LEASE_SECONDS;
    }
  });

  it('refuses timings that leave an investigation no time for tools before the minute kept for its answer', () => {
    try {
      process.env.AGENT_INVESTIGATION_SECONDS = '45';
      expect(() => investigationMs()).toThrow(/AGENT_INVESTIGATION_SECONDS must be a number of seconds from 120 to 600/);
      // A 60 s lease capped the investigation at 30 s.
      Object.assign(process.env, { AGENT_INVESTIGATION_SECONDS: '240', AGENT_TASK_LEASE_SECONDS: '60' });
      expect(() => investigationMs()).toThrow(/AGENT_TASK_LEASE_SECONDS must be a number of seconds from 240 to 86400/);
      process.env.AGENT_TASK_LEASE_SECONDS = '240';
      expect(investigationMs()).toBe(120_000);
    } finally {
      delete process.env.AGENT_INVESTIGATION_SECONDS;
      delete process.env.AGENT_TASK_LEASE_SECONDS;
    }
  });

  it('spaces retries out: a failed attempt is not claimed again before its delay has passed', async () => {
    useLlm();
    process.env.AGENT_RETRY_SECONDS = '60';
    try {
      const [task] = await tasksFor([view.scores.at(-1)!]); // a cluster of its own: this task stays pending
      openai.enqueueError(500);
      expect(await runAgentTasks()).toMatchObject({ claimed: 1, retried: 1, failed: 0 });
      const waiting = (await getTask(task!.task_id))!;
      expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });
      expect(Date.parse(waiting.not_before!) - Date.now()).toBeGreaterThan(50_000);
      expect(await runAgentTasks()).toMatchObject({ claimed: 0 }); // not due yet
      expect(retryDelayMs(1)).toBe(60_000);
      expect(retryDelayMs(2)).toBe(120_000);
      // once due it is claimed again (closed here, so later tests see no open task)
      const later = (await claimTask(task!.task_id, 'later', leaseMs(), new Date(Date.now() + 61_000)))!;
      expect(later.attempts).toBe(2);
      expect(await failTaskAttempt(later, 'closed by the test', false)).toBe('failed');
    } finally {
      process.env.AGENT_RETRY_SECONDS = '0';
    }
  });

  it('an answer that still does not validate after the repair round fails the attempt with that reason', async () => {
    useLlm();
    const [task] = await tasksFor([view.scores[2]!]);
    for (let i = 0; i < MAX_ATTEMPTS; i++) openai.enqueueText('not json').enqueueText('{"severity": "bad"}');
    const run = await runAgentTasks();
    expect(run).toMatchObject({ failed: 1, retried: 2 });
    expect(await getTask(task!.task_id)).toMatchObject({
      status: 'failed',
      last_error: expect.stringMatching(/did not validate after one repair round: severity/),
    });
  });

  it('a task whose cluster left the fleet fails at once (no retry can help), and the worker does not throw for it: a decommission pages nobody', async () => {
    noLlm();
    const { handler } = await import('../../functions/agent-worker.js');
    const gone = scored('S', 10);
    const [task] = await tasksFor([gone]);
    expect(await handler({})).toMatchObject({ status: 'completed', claimed: 1, failed: 0, dropped: 1, retried: 0 });
    expect(await getTask(task!.task_id)).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.stringMatching(/no longer in the fleet/) });
  });

  it('a finished task no longer blocks its cluster: completeTask freed the guard', async () => {
    noLlm();
    const cluster = view.scores[3]!;
    await tasksFor([cluster]);
    await runAgentTasks();
    const again = await createAgentTasks(viewOf([cluster], { tiers: ['S', 'A', 'B'], below_score: 101, cooldown_hours: 0 }));
    expect(again.created).toBe(1);
    await runAgentTasks();
    expect(await listOpenTasks()).toEqual([]);
    // and a claim that was taken over cannot complete
    const [task] = await tasksFor([cluster]);
    const claimed = (await claimTask(task!.task_id, 'slow', leaseMs(), new Date(Date.now() - leaseMs() - 1000)))!;
    await claimTask(task!.task_id, 'fast', leaseMs());
    const investigation = { ...(await getInvestigation((await listInvestigationsSince(new Date(0)))[0]!.investigation_id))!, investigation_id: randomUUID() };
    await expect(completeTask(claimed, investigation)).rejects.toThrow(/conditional/);
    expect(await getInvestigation(investigation.investigation_id)).toBeUndefined();
  });
});

// createTask is the guard's only writer; a direct call obeys the same conditions.
describe('the guard', () => {
  it('refuses a task for a cluster with an open one', async () => {
    const s = scored('S', 1);
    const base = {
      cluster_id: s.cluster_id,
      cluster_name: s.cluster_name,
      customer_name: s.customer_name,
      customer_tier: 'S',
      trigger_reason: 'r',
      priority: 1,
      created_at: new Date().toISOString(),
    };
    const cooldown = new Date().toISOString();
    const made = await Promise.all([createTask({ ...base, task_id: randomUUID() }, cooldown), createTask({ ...base, task_id: randomUUID() }, cooldown)]);
    expect(made.filter(Boolean)).toHaveLength(1);
  });
});
