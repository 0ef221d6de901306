// What finding the next agent task reads from DynamoDB, seen on the wire through the proxy. An
// outage opens one task per cluster (thousands, about a kilobyte each), and the worker looks for
// the next claimable task before every claim, as the refresh does before starting the worker: each
// look reads the open index a page at a time up to the first task it can take, never every open
// task. The worker still takes what a read of every open task would pick, in the same order.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentTasks } from '../../shared/agents/run-tasks.js';
import { createAgentTasks, leaseMs } from '../../shared/agents/tasks.js';
import { claimTask, createTask, failTaskAttempt, getTask, isStale, listOpenTasks, type AgentTask } from '../../shared/db/investigations.js';
import type { FleetView } from '../../shared/scoring/fleet-view.js';
import { localWorkersSettled, registerLocalWorker } from '../../shared/worker-invoke.js';
import { useTestTables } from '../support/dynamo.js';
import { requestsOf, tableOf, type DynamoProxy, type WireRequest } from '../support/dynamo-proxy.js';

const MINUTE = 60_000;
/** A look may read this many open tasks (a page or two), however many are open. */
const BOUND = 100;
const TRIGGER = { tiers: ['S', 'A', 'B'], below_score: 60, cooldown_hours: 24 };
/** A refresh that creates no task: only the "are tasks waiting?" check runs. */
const noNewTasks = { health: { rules: { ai_trigger: TRIGGER } }, scores: [] } as unknown as FleetView;

let proxy: DynamoProxy;
const invocations: unknown[] = [];
const started = Date.now();
let serial = 0;

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  delete process.env.LLM_PROVIDER; // the rules engine: a task whose cluster is not in the fleet fails at once, not retried
  registerLocalWorker('agent-worker', async (event) => void invocations.push(event));
});
afterAll(() => proxy.close());

/** An open task of this priority (its cluster is in no fleet), created `serial` seconds apart: never a tie in the index. */
async function openTask(priority: number): Promise<string> {
  const at = new Date(started - 3_600_000 + serial++ * 1000).toISOString();
  const task = {
    task_id: randomUUID(),
    cluster_id: randomUUID(),
    cluster_name: `gone-${serial}`,
    customer_name: 'Customer G',
    customer_tier: 'S',
    trigger_reason: `reason ${serial} `.repeat(80), // about a kilobyte, as real ones
    priority,
    created_at: at,
  };
  expect(await createTask(task, at)).toBe(true);
  return task.task_id;
}

/** Queries of the open tasks' index. */
const isOpenQuery = (r: WireRequest) => r.operation === 'Query' && tableOf(r).endsWith('investigations') && r.input.IndexName === 'gsi1';
/** How many open tasks a set of queries may send back: the sum of their Limits (none: every one). */
const itemsAskedFor = (requests: WireRequest[]) => requests.filter(isOpenQuery).reduce((sum, r) => sum + (r.input.Limit ?? Number.POSITIVE_INFINITY), 0);

describe('finding the next agent task reads a page or two of the open index, not every open task', () => {
  it('the refresh starts the worker only while a task waits, reading up to the first waiting one', async () => {
    // 40 tasks running under live claims, the most urgent: nothing waits yet.
    for (let n = 0; n < 40; n++) expect(await claimTask(await openTask(399), 'live-worker', leaseMs())).toBeDefined();
    invocations.length = 0;
    await createAgentTasks(noNewTasks);
    await localWorkersSettled();
    expect(invocations).toHaveLength(0);

    // 260 pending tasks below them: the worker is started, having read past the 40 running ones only.
    for (let n = 0; n < 260; n++) await openTask(100 + ((n * 37) % 290));
    expect(await listOpenTasks()).toHaveLength(300);
    const { requests } = await requestsOf(proxy, () => createAgentTasks(noNewTasks));
    await localWorkersSettled();
    expect(invocations).toHaveLength(1);
    expect(requests.filter(isOpenQuery).length).toBeGreaterThan(0);
    expect(itemsAskedFor(requests)).toBeLessThanOrEqual(BOUND);
  });

  it('a worker run takes the claimable tasks most urgent first, then oldest, reading a page or two before each', async () => {
    // Beside the 300 above: 10 retries not yet due (skipped), 5 claims past the lease (taken over),
    // 3 past the lease on their last attempt (expired), all as urgent as it gets.
    for (let n = 0; n < 10; n++) {
      const claimed = (await claimTask(await openTask(398), 'failed-once', leaseMs()))!;
      expect(await failTaskAttempt(claimed, 'the language model failed: 500', true, new Date(), new Date(Date.now() + 60 * MINUTE))).toBe('pending');
    }
    for (let n = 0; n < 5; n++) expect(await claimTask(await openTask(397 - n), 'dead-worker', leaseMs(), new Date(Date.now() - 20 * MINUTE))).toBeDefined();
    for (let n = 0; n < 3; n++) {
      const id = await openTask(350 + n);
      for (const [i, ago] of [40, 25, 12].entries())
        expect((await claimTask(id, `dead-${i}`, leaseMs(), new Date(Date.now() - ago * MINUTE)))?.attempts).toBe(i + 1);
    }
    // What a read of every open task picks, in order: the index is most urgent first, then oldest.
    const open = await listOpenTasks();
    expect(open).toHaveLength(318);
    const now = new Date();
    const claimable = (t: AgentTask) => (t.status === 'pending' && (!t.not_before || t.not_before <= now.toISOString())) || isStale(t, leaseMs(), now);
    const expected = open.filter(claimable).map((t) => t.task_id);
    expect(expected).toHaveLength(268);

    const { result: run, requests } = await requestsOf(proxy, () => runAgentTasks({ budgetMs: 10 * MINUTE }));
    // The tasks' clusters are in no fleet: the 265 claimed are dropped; the 3 expired on their last attempt failed.
    expect(run).toMatchObject({ stopped: 'empty', claimed: 265, dropped: 265, failed: 3, done: 0, retried: 0, lost: 0 });

    // The worker's decisions on the wire: a claim (conditional update) or an expiry (a closing transaction).
    const taskOf = (key: { pk: { S: string } }) => key.pk.S.replace(/^TASK#/, '');
    const decided = (r: WireRequest): string | undefined => {
      if (r.operation === 'UpdateItem' && /attempts < :max/.test(r.input.ConditionExpression ?? '')) return taskOf(r.input.Key);
      const close = r.operation === 'TransactWriteItems' ? r.input.TransactItems[0].Update : undefined;
      return close && /claimed_at = :claimed/.test(close.ConditionExpression) ? taskOf(close.Key) : undefined;
    };
    const order: string[] = [];
    let look: WireRequest[] = [];
    for (const r of requests) {
      look.push(r);
      const task = decided(r);
      if (!task) continue;
      order.push(task);
      expect(itemsAskedFor(look), `before taking task ${order.length}`).toBeLessThanOrEqual(BOUND);
      look = [];
    }
    expect(order).toEqual(expected);
    // The last look finds none: it reads the 50 left (open, none claimable).
    expect(itemsAskedFor(look)).toBeLessThanOrEqual(BOUND);

    const left = await listOpenTasks();
    expect(left.map((t) => t.status).sort()).toEqual([...Array(40).fill('running'), ...Array(10).fill('pending')].sort());
    for (const id of expected.slice(0, 8)) expect((await getTask(id))!.status).toBe('failed');
  }, 120_000);
});
