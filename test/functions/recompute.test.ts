// The scheduled recompute Lambda: refreshes every view, persists the three
// snapshots and moves the cache generation. A route's run queued after another
// waits for it in invocations of a minute at most, and then runs.
import { beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/recompute.js';
import { RecomputePassFailed } from '../../shared/recompute.js';
import { loadDemoFleet } from '../../infra/local/demo-fleet.js';
import { lambdaContext } from '../../infra/local/functions.js';
import { resetSettings } from '../../shared/config/env.js';
import { getCluster, upsertClusters } from '../../shared/db/clusters.js';
import { METRIC_SHARDS } from '../../shared/db/metrics.js';
import { createRefresh, currentGeneration, finishRefresh, getRefresh, listSnapshots, readSnapshot, startRefreshRun } from '../../shared/db/scores.js';
import { meetsTrigger } from '../../shared/agents/tasks.js';
import { loadHealthRules } from '../../shared/rules/load.js';
import type { ScoringRules } from '../../shared/rules/schemas.js';
import type { FleetClusterScore } from '../../shared/scoring/fleet-score.js';
import { claimRefresh, REFRESH_LEASE_MS, releaseRefresh, RUN_TIME_KEPT_MS } from '../../shared/scoring/refresh-claim.js';
import { localWorkersSettled, registerLocalWorker } from '../../shared/worker-invoke.js';
import { useTestTables } from '../support/dynamo.js';
import { type DynamoProxy, tableOf } from '../support/dynamo-proxy.js';

let proxy: DynamoProxy;
/** The clusters ai_trigger selects in the demo fleet (the first test counts them from the snapshot). */
let selected = 0;
let trigger: ScoringRules['ai_trigger'];

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  await loadDemoFleet(12);
  trigger = (await loadHealthRules()).rules.ai_trigger;
});

describe('recompute worker', () => {
  it('refreshes scores and risk, keeps snapshot history and invalidates caches', async () => {
    const generation = await currentGeneration();
    const first = await handler();
    expect(first.clusters).toBe(12);
    expect(first.critical + first.warning).toBeLessThanOrEqual(12);
    expect(await currentGeneration()).toBe(generation + 1);
    const second = await handler();
    for (const kind of ['fleet', 'health', 'risk'] as const) {
      const headers = await listSnapshots(kind);
      expect(headers.map((h) => h.generated_at)).toEqual([second.generated_at, first.generated_at]);
      expect(headers[0]!.count).toBe(12);
    }
    // The chat's 14 days: the first run packed the settled shards the refresh's lookback left (fewer than all 13
    // settled days': the refresh packed its own); the second had none left.
    expect(first.rollup_shards_packed).toBeGreaterThan(0);
    expect(first.rollup_shards_packed).toBeLessThan(13 * METRIC_SHARDS);
    expect(second.rollup_shards_packed).toBe(0);
    // The firing index's upkeep ran (nothing unheard in this fleet: still-firing.test.ts retires some).
    expect(first.firing_retired).toBe(0);
    const fleet = await readSnapshot<FleetClusterScore>('fleet', second.generated_at);
    expect(fleet).toHaveLength(12);
    expect(fleet[0]).toMatchObject({ cluster_id: expect.any(String), classification: expect.stringMatching(/^(Healthy|Warning|Critical)$/) });
    // The first run made a task for each cluster the health rules' ai_trigger selects, the second none (each is open now).
    selected = fleet.filter((score) => meetsTrigger(score, trigger)).length;
    expect(selected).toBeGreaterThan(0);
    expect(first.agent_tasks).toEqual({ created: selected, skipped: 0 });
    expect(second.agent_tasks).toEqual({ created: 0, skipped: selected });
  });
});

describe('a pass of the scheduled run that fails', () => {
  it('fails the run once the rest is done: the views are refreshed, and the failure queue and Errors alarm see it', async () => {
    const generation = await currentGeneration();
    const stop = proxy.watch((r) =>
      tableOf(r).endsWith('-investigations') ? { type: 'AccessDeniedException', message: 'the tasks table refused' } : undefined,
    );
    const failed = await handler()
      .catch((e: unknown) => e)
      .finally(stop);
    expect(failed).toBeInstanceOf(RecomputePassFailed);
    expect((failed as Error).message).toBe('agent task creation failed (the log says why); the views were refreshed');
    expect(await currentGeneration()).toBe(generation + 1);
  });
});

describe('cluster repository', () => {
  it('upserts a full record (with timestamps) by its inventory fields only', async () => {
    const [record] = await import('../../shared/db/clusters.js').then((m) => m.listClusters());
    await upsertClusters([{ ...record!, node_count: 42 }]);
    const after = await getCluster(record!.cluster_id);
    expect(after).toMatchObject({ node_count: 42, created_at: record!.created_at });
  });
});

describe('recompute and the AI side', () => {
  it('creates agent tasks for the clusters ai_trigger selects, once per cooldown', async () => {
    // Each selected cluster has its task (from the first run above, or from this test's first run when it runs
    // alone): pending or in cooldown now, so a later run makes none.
    const first = await handler();
    const due = (await readSnapshot<FleetClusterScore>('fleet', first.generated_at)).filter((score) => meetsTrigger(score, trigger)).length;
    expect(due).toBeGreaterThan(0);
    expect(first.agent_tasks!.created + first.agent_tasks!.skipped).toBe(due);
    expect((await handler()).agent_tasks).toEqual({ created: 0, skipped: due });
  });
});

describe('the scheduled run and a slow AI grouping pass', () => {
  it('makes the agent tasks without waiting for the AI grouping pass', async () => {
    // The AI pass's first read is held until the agent tasks are asked for (or 10 s: then it is released, and
    // the run ends, but the order says the tasks waited for the pass).
    let tasksAsked!: () => void;
    const asked = new Promise<'tasks first'>((resolve) => (tasksAsked = () => resolve('tasks first')));
    let held: Promise<string> | undefined;
    let timer: NodeJS.Timeout | undefined;
    const stop = proxy.watch((request) => {
      if (tableOf(request).endsWith('-investigations')) tasksAsked();
      if (held || !tableOf(request).endsWith('-ai-issues')) return undefined;
      held = Promise.race([asked, new Promise<string>((resolve) => (timer = setTimeout(resolve, 10_000, 'released after 10 s')))]);
      return { hold: held };
    });
    try {
      const run = await handler();
      expect(run.agent_tasks).not.toBeNull();
    } finally {
      stop();
      clearTimeout(timer);
    }
    expect(await held).toBe('tasks first');
  });
});

describe('a route run queued after another', () => {
  type Kinds = Parameters<typeof claimRefresh>[1];
  /** Run `ahead` taken up with the rules before; run `queued`, with newer ones, queued after it (as a route queues it). */
  async function queueBehind(ahead: string, queued: string, kinds: Kinds): Promise<void> {
    expect(await claimRefresh(ahead, kinds, { health: 0, risk: 0 })).toBeUndefined();
    await createRefresh(ahead, kinds, { rules: { health: 0, risk: 0 } });
    expect(await startRefreshRun(ahead, `token-${ahead}`, REFRESH_LEASE_MS)).toBe(true);
    expect(await claimRefresh(queued, kinds, { health: 1, risk: 1 })).toEqual({ after: ahead });
    await createRefresh(queued, kinds, { rules: { health: 1, risk: 1 }, after: ahead });
  }
  /** The run ahead ends (failed: it computed nothing here) and hands its claim on. */
  async function endAhead(ahead: string, kinds: Kinds): Promise<void> {
    await finishRefresh(ahead, { status: 'failed', error: 'ended by the test' });
    await releaseRefresh(ahead, kinds);
  }

  it('waits while its invocation keeps time for the run, then a new invocation waits on and runs it once the run ahead ends', async () => {
    // As the local runtime runs it (infra/local/functions.ts): a whole invocation's time.
    registerLocalWorker('recompute', (event) => handler(event as Parameters<typeof handler>[0], lambdaContext('recompute')));
    const kinds = ['risk'] as const;
    await queueBehind('ahead', 'queued', kinds);

    // An invocation with a second more than the run needs kept: it waits that second, then hands the wait on.
    const answer = await handler({ refresh_id: 'queued', kinds: [...kinds] }, { getRemainingTimeInMillis: () => RUN_TIME_KEPT_MS + 1_000 });
    expect(answer).toEqual({ refresh_id: 'queued', status: 'queued' });
    expect((await getRefresh('queued'))?.worker_started_at).toBeUndefined();

    // The run ahead ends: the invocation waiting on takes the queued run up and computes it.
    await endAhead('ahead', kinds);
    await localWorkersSettled();
    const run = await getRefresh('queued');
    expect(run).toMatchObject({ status: 'done', figures: { total_clusters: 12 } });
    expect(run!.worker_started_at! >= (await getRefresh('ahead'))!.finished_at!).toBe(true);
  });

  it('computes a queued run once when its event comes twice', async () => {
    const kinds = ['health'] as const;
    await queueBehind('ahead-2', 'queued-2', kinds);
    const before = (await listSnapshots('health', 100)).length;
    // Both deliveries wait; the run ahead ends; one computes, the other finds the run taken.
    const event = { refresh_id: 'queued-2', kinds: [...kinds] };
    const deliveries = [handler(event), handler(event)];
    await new Promise((resolve) => setTimeout(resolve, 700));
    await endAhead('ahead-2', kinds);
    const answers = await Promise.all(deliveries);
    expect(answers.map((a) => (a as { status?: string }).status).sort()).toEqual(['done', 'not_started']);
    expect(await getRefresh('queued-2')).toMatchObject({ status: 'done' });
    expect((await listSnapshots('health', 100)).length).toBe(before + 1);
  });

  it('records a queued run failed when the invocation to wait on cannot be started', async () => {
    const kinds = ['fleet'] as const;
    await queueBehind('ahead-3', 'queued-3', kinds);
    // The worker's function as on AWS, behind an endpoint that refuses every connection.
    Object.assign(process.env, { RECOMPUTE_FUNCTION: 'fleet-health-test-recompute', AWS_ENDPOINT_URL_LAMBDA: 'http://127.0.0.1:9' });
    resetSettings();
    try {
      await expect(handler({ refresh_id: 'queued-3', kinds: [...kinds] }, { getRemainingTimeInMillis: () => RUN_TIME_KEPT_MS + 500 })).rejects.toThrow(
        /could not be started/,
      );
    } finally {
      delete process.env.RECOMPUTE_FUNCTION;
      delete process.env.AWS_ENDPOINT_URL_LAMBDA;
      resetSettings();
    }
    expect(await getRefresh('queued-3')).toMatchObject({ status: 'failed', error: expect.stringMatching(/could not go on waiting/) });
    await endAhead('ahead-3', kinds);
  });
});
