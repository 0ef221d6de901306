// A patrol worker killed mid-scan (test/support/patrol-child.ts, SIGKILL: Lambda's timeout, out of memory), on
// DynamoDB Local with a local OpenAI-compatible server: its calls are in the usage ledger, and the failed report
// that readers mark once its lease lapsed (shared/patrol/lock.ts) carries their tokens and cost, not nothing.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listUsage } from '../../shared/db/llm-usage.js';
import { lockHolder, releaseLock } from '../../shared/db/locks.js';
import { createReport, getReport } from '../../shared/db/patrol.js';
import { PATROL_LOCK, settled, takeLock } from '../../shared/patrol/lock.js';
import { patrolKpis } from '../../shared/patrol/queries.js';
import { useTestTables } from '../support/dynamo.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { usePatrolModelEnv } from '../support/patrol-env.js';

let openai: FakeOpenAi;
let restoreEnv: (() => void) | undefined;
let child: ChildProcess | undefined;
beforeAll(async () => {
  await useTestTables();
  openai = await startFakeOpenAi();
  restoreEnv = usePatrolModelEnv(openai.baseUrl);
});
afterAll(async () => {
  child?.kill('SIGKILL');
  restoreEnv?.();
  await openai?.close();
});

const until = async (done: () => boolean | Promise<boolean>) => {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 100));
};
const callsOf = async (runId: string) => (await listUsage(1)).filter((u) => u.run_id === runId);

/**
 * Starts a scan of report `reportId` as the trigger does (the lock, the report, then the worker), lets it make two
 * answered model calls, kills it in its third, and waits for its lease to lapse. Returns what the ledger charged.
 */
async function killedAfterTwoCalls(reportId: string) {
  // Two answered rounds (each a tool the scan does not have), then a call that is never answered: the worker dies in it.
  openai.reset();
  openai
    .enqueueToolUse({ name: 'no_such_tool', input: {} }, { usage: { input_tokens: 1_000, output_tokens: 50 } })
    .enqueueToolUse({ name: 'no_such_tool', input: {} }, { usage: { input_tokens: 1_500, output_tokens: 70 } })
    .enqueue({ kind: 'delay', ms: 120_000, then: { kind: 'text', text: 'too late' } });
  expect(await takeLock(reportId)).toBe(true);
  await createReport({ report_id: reportId, report_type: 'on_demand', triggered_by: 'tester' }, new Date(Date.now() - 60_000));
  child = spawn(process.execPath, ['--import', 'tsx', 'test/support/patrol-child.ts', reportId], { env: process.env, stdio: 'ignore' });
  await until(async () => (await callsOf(reportId)).length === 2 && openai.received.length === 3);
  child.kill('SIGKILL');
  await new Promise((resolve) => child!.once('exit', resolve));
  child = undefined;
  await until(async () => (await lockHolder(PATROL_LOCK))?.owner !== reportId);
  expect((await getReport(reportId))!.status).toBe('running');
  const cost = (await callsOf(reportId)).reduce((n, c) => n + c.cost_usd, 0);
  expect(cost).toBeGreaterThan(0);
  return { model: 'gpt-4o-mini', input_tokens: 2_500, output_tokens: 120, total_tokens: 2_620, cost_usd: Math.round(cost * 1e6) / 1e6 };
}

describe('a patrol worker killed after some model calls', () => {
  it('leaves a failed report, marked by its next reader, carrying the tokens and cost the ledger charged for its calls', { timeout: 60_000 }, async () => {
    const figures = await killedAfterTwoCalls('killed-scan');
    const marked = await settled((await getReport('killed-scan'))!);
    expect(marked).toMatchObject({ status: 'failed', error: expect.stringMatching(/stopped without finishing/), ...figures });
    expect(await getReport('killed-scan')).toMatchObject({ status: 'failed', ...figures });
    // The KPIs count what failed reports spent.
    expect((await patrolKpis()).total_tokens).toBe(2_620);
  });

  it('and so when the next scan takes the lock first and marks it', { timeout: 60_000 }, async () => {
    const figures = await killedAfterTwoCalls('killed-again');
    expect(await takeLock('next-scan')).toBe(true);
    expect(await getReport('killed-again')).toMatchObject({ status: 'failed', error: expect.stringMatching(/stopped without finishing/), ...figures });
    await releaseLock(PATROL_LOCK, 'next-scan');
  });
});
