// An LLM patrol scan (shared/patrol/run.ts) that loses its lock, on DynamoDB Local through the
// fault proxy and a local OpenAI-compatible server: once a renewal is refused (another runner
// took the lock after the lease ran out), no further model call is made; and a scan whose
// report a reader marked failed meanwhile still records on it the tokens and cost it spent.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listUsage } from '../../shared/db/llm-usage.js';
import { acquireLock, lockHolder, releaseLock } from '../../shared/db/locks.js';
import { getReport } from '../../shared/db/patrol.js';
import { PATROL_LOCK, settled } from '../../shared/patrol/lock.js';
import { patrolKpis } from '../../shared/patrol/queries.js';
import { runPatrolScan } from '../../shared/patrol/run.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy, WireRequest } from '../support/dynamo-proxy.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { usePatrolModelEnv } from '../support/patrol-env.js';
import { SCHEDULE_TRIGGER } from '../../shared/patrol/schedule.js';

let proxy: DynamoProxy;
let openai: FakeOpenAi;
let restoreEnv: (() => void) | undefined;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  openai = await startFakeOpenAi();
  restoreEnv = usePatrolModelEnv(openai.baseUrl);
});
afterAll(async () => {
  restoreEnv?.();
  await openai?.close();
});
beforeEach(() => openai.reset());

const failedRenewal = { type: 'InternalServerError', message: 'the renewal failed for another reason', status: 400 };
/** A lease renewal on a beat: every lock update but the first (the scan's own check before it starts). */
const lockUpdates = () => {
  let seen = 0;
  return ({ operation, input }: WireRequest) => operation === 'UpdateItem' && String(input.TableName).endsWith('locks') && ++seen > 1;
};
const until = async (done: () => boolean | Promise<boolean>) => {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 50));
};
/** What the ledger holds for one run: its calls' tokens and cost. */
async function ledgerOf(runId: string) {
  const calls = (await listUsage(1)).filter((u) => u.run_id === runId);
  return { calls: calls.length, total_tokens: calls.reduce((n, u) => n + u.total_tokens, 0), cost_usd: calls.reduce((n, u) => n + u.cost_usd, 0) };
}
/** A valid answer for this file's fleet (no clusters). */
const EMPTY_FLEET_ANSWER = JSON.stringify({
  fleet_summary: { total_clusters: 0, critical: 0, warning: 0, healthy: 0, headline: 'Nothing to watch.' },
  clusters_flagged: [],
  customer_summaries: [],
  narrative: 'The fleet is empty.',
});

describe('an LLM patrol scan that loses its lock', () => {
  it('makes no model call once a renewal was refused: the new holder is scanning', async () => {
    // The model asks for a tool; the scan is held after that first call (its ledger write) while the lock changes hands.
    openai.enqueueToolUse({ name: 'no_such_tool', input: {} });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    let failing = true;
    let refusedRenewals = 0;
    const renewal = lockUpdates();
    const stop = proxy.watch((request) => {
      const table = String(request.input.TableName);
      if (renewal(request)) {
        if (failing) return failedRenewal; // the lease runs out
        refusedRenewals++; // sent on to DynamoDB: the lock is another runner's now, so it is refused
        return undefined;
      }
      if (request.operation === 'PutItem' && table.includes('llm-usage') && !holding) {
        holding = true;
        return { hold: held };
      }
      return undefined;
    });
    try {
      const result = runPatrolScan({ report_type: 'on_demand', triggered_by: 'tester' });
      await until(() => holding);
      await until(async () => (await acquireLock(PATROL_LOCK, 'other-runner', 60_000)).acquired);
      failing = false;
      // The second refused renewal comes a beat after the first, whose answer the scan has read by then.
      await until(() => refusedRenewals >= 2);
      release();
      const { status, report_id } = await result;
      expect(status).toBe('failed');
      expect(openai.answered()).toHaveLength(1);
      const report = (await getReport(report_id))!;
      expect(report.error).toMatch(/outlived its lock/);
      // The one call made is on the report, as the ledger has it.
      const ledger = await ledgerOf(report_id);
      expect(ledger.calls).toBe(1);
      expect(report).toMatchObject({ model: 'gpt-4o-mini', total_tokens: ledger.total_tokens, cost_usd: ledger.cost_usd });
      expect((await lockHolder(PATROL_LOCK))?.owner).toBe('other-runner');
    } finally {
      stop();
      release();
      await releaseLock(PATROL_LOCK, 'other-runner');
    }
  });

  it('records the tokens and cost spent on a report a reader marked failed while the scan ran', async () => {
    openai.enqueueText(EMPTY_FLEET_ANSWER, { usage: { input_tokens: 900, output_tokens: 100 } });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    let failing = true;
    const renewal = lockUpdates();
    // The scan's first read of the open issues is held while renewals fail and the lease runs out.
    const stop = proxy.watch((request) => {
      if (renewal(request) && failing) return failedRenewal;
      if (request.operation === 'Query' && String(request.input.TableName).endsWith('issues') && !holding) {
        holding = true;
        return { hold: held };
      }
      return undefined;
    });
    try {
      const result = runPatrolScan({ report_type: 'on_demand', triggered_by: 'tester' });
      await until(() => holding);
      const reportId = (await lockHolder(PATROL_LOCK))!.owner;
      await until(async () => (await lockHolder(PATROL_LOCK)) === undefined);
      // A reader finds the report running with its lease lapsed (past the start's grace) and marks it failed.
      const read = (await getReport(reportId))!;
      expect(await settled(read, Date.now() + 60_000)).toMatchObject({ status: 'failed' });
      // The renewals work again: the lock is still the scan's, which completes, but its report is failed.
      failing = false;
      release();
      expect(await result).toEqual({ status: 'failed', report_id: reportId });
      expect(openai.answered()).toHaveLength(1);
      const ledger = await ledgerOf(reportId);
      expect(ledger).toMatchObject({ calls: 1, total_tokens: 1000 });
      expect(ledger.cost_usd).toBeGreaterThan(0);
      const report = (await getReport(reportId))!;
      expect(report).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/stopped without finishing/),
        model: 'gpt-4o-mini',
        input_tokens: 900,
        output_tokens: 100,
        total_tokens: 1000,
        cost_usd: ledger.cost_usd,
      });
      const kpis = await patrolKpis();
      expect(kpis.total_tokens).toBeGreaterThanOrEqual(1000);
    } finally {
      stop();
      release();
    }
  });
});

describe("a scan's finishing write whose answer is lost", () => {
  it('is retried by the client, meets its own write and counts as done: the report is completed, not "marked failed meanwhile"', async () => {
    openai.enqueueText(EMPTY_FLEET_ANSWER);
    let lost = 0;
    // The report's completing UpdateItem reaches DynamoDB, which applies it; its answer never comes back.
    const stop = proxy.watch(({ operation, input }) => {
      const completing =
        operation === 'UpdateItem' && String(input.TableName).endsWith('patrol') && JSON.stringify(input.ExpressionAttributeValues).includes('"completed"');
      return completing && lost++ === 0 ? 'lose-answer' : undefined;
    });
    try {
      const result = await runPatrolScan({ report_type: 'on_demand', triggered_by: 'tester' });
      expect(lost).toBe(2); // the lost try and the client's retry
      expect(result.status).toBe('completed');
      expect(await getReport(result.report_id)).toMatchObject({ status: 'completed', error: null, fleet_narrative: 'The fleet is empty.' });
    } finally {
      stop();
    }
  });
});

describe('a scan whose report claim DynamoDB refuses (not a condition: throttled past the client’s retries)', () => {
  it('frees the lock it took and fails its report, so the event’s retry can scan', async () => {
    let throttled = 0;
    const stop = proxy.watch((r) => {
      if (r.operation !== 'UpdateItem' || !String(r.input.TableName).endsWith('patrol') || !String(r.input.UpdateExpression).includes('worker_id'))
        return undefined;
      throttled++;
      return { type: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' };
    });
    const failed = await runPatrolScan({ report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER })
      .then(
        () => undefined,
        (error: unknown) => error,
      )
      .finally(stop);
    expect(throttled).toBeGreaterThan(0);
    expect(String(failed)).toMatch(/Throttling|Rate of requests/);
    expect(await lockHolder(PATROL_LOCK)).toBeUndefined();
    // the retry of the event scans (a new report), rather than answer `already_running` for one nobody scans
    openai.enqueueText(EMPTY_FLEET_ANSWER);
    expect(await runPatrolScan({ report_type: 'scheduled', triggered_by: SCHEDULE_TRIGGER })).toMatchObject({ status: 'completed' });
  });
});
