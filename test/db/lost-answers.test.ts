// Conditional claims whose answer is lost (client.ts conditionalWrite): DynamoDB applies the write,
// the answer never arrives, the client retries, and the retry fails its condition against the write
// it made. Each claim must still be the caller's, and a real rival must still be refused.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConditionFailed } from '../../shared/db/client.js';
import { claimTask, createTask, getTask } from '../../shared/db/investigations.js';
import { acquireLock, lockHolder, takeOverLock } from '../../shared/db/locks.js';
import { claimReport, createReport, getReport } from '../../shared/db/patrol.js';
import { createRefresh, finishRefresh, getRefresh } from '../../shared/db/scores.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';

let proxy: DynamoProxy;
beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
});

/** Runs `work` with the answer of the first `operation` on `table` lost (applied by DynamoDB, never answered). */
async function losingFirstAnswer<T>(operation: 'PutItem' | 'UpdateItem', table: string, work: () => Promise<T>): Promise<{ result: T; lost: number }> {
  let lost = 0;
  const stop = proxy.watch((request) => {
    if (request.operation !== operation || !String(request.input.TableName).endsWith(table) || lost > 0) return undefined;
    lost++;
    return 'lose-answer';
  });
  try {
    return { result: await work(), lost };
  } finally {
    stop();
  }
}

describe('a claim whose answer is lost is still the claimant’s', () => {
  it('acquireLock: acquired, and a rival is then refused', async () => {
    const name = `lock-${randomUUID()}`;
    const { result, lost } = await losingFirstAnswer('PutItem', 'locks', () => acquireLock(name, 'me', 60_000));
    expect(lost).toBe(1);
    expect(result.acquired).toBe(true);
    expect((await lockHolder(name))?.owner).toBe('me');
    expect((await acquireLock(name, 'rival', 60_000)).acquired).toBe(false);
  });

  it('takeOverLock: taken over, and the previous holder cannot take it back', async () => {
    const name = `lock-${randomUUID()}`;
    expect((await acquireLock(name, 'done-holder', 60_000)).acquired).toBe(true);
    const { result, lost } = await losingFirstAnswer('PutItem', 'locks', () => takeOverLock(name, 'done-holder', 'me', 60_000));
    expect(lost).toBe(1);
    expect(result).toBe(true);
    expect((await lockHolder(name))?.owner).toBe('me');
    expect(await takeOverLock(name, 'done-holder', 'rival', 60_000)).toBe(false);
  });

  it('claimReport: claimed, and a second delivery of the event is refused', async () => {
    const reportId = randomUUID();
    await createReport({ report_id: reportId, report_type: 'on_demand', triggered_by: 'tester' });
    const { lost } = await losingFirstAnswer('UpdateItem', 'patrol', () => claimReport(reportId, 'worker-1'));
    expect(lost).toBe(1);
    expect((await getReport(reportId))?.status).toBe('running');
    await expect(claimReport(reportId, 'worker-2')).rejects.toBeInstanceOf(ConditionFailed);
  });

  it('claimTask: the task comes back claimed once, and a rival gets nothing', async () => {
    const taskId = randomUUID();
    const created = await createTask(
      {
        task_id: taskId,
        cluster_id: `c-${taskId}`,
        cluster_name: 'db-1',
        customer_name: 'Acme',
        customer_tier: 'S',
        trigger_reason: 'score dropped',
        priority: 300,
        created_at: new Date().toISOString(),
      },
      '2000-01-01T00:00:00.000Z',
    );
    expect(created).toBe(true);
    const { result: claimed, lost } = await losingFirstAnswer('UpdateItem', 'investigations', () => claimTask(taskId, 'worker-1', 600_000));
    expect(lost).toBe(1);
    expect(claimed).toMatchObject({ task_id: taskId, status: 'running', owner: 'worker-1', attempts: 1 });
    expect(await getTask(taskId)).toMatchObject({ status: 'running', owner: 'worker-1', attempts: 1 });
    expect(await claimTask(taskId, 'worker-2', 600_000)).toBeUndefined();
  });
});

describe('finishRefresh', () => {
  it('finishes a recorded run, and writes nothing for a run that was never recorded', async () => {
    const recorded = randomUUID();
    await createRefresh(recorded, ['fleet']);
    expect(await finishRefresh(recorded, { status: 'failed', error: 'the scores could not be computed' })).toBe(true);
    expect(await getRefresh(recorded)).toMatchObject({ status: 'failed', kinds: ['fleet'] });

    const unknown = randomUUID();
    expect(await finishRefresh(unknown, { status: 'failed', error: 'the scores could not be computed' })).toBe(false);
    expect(await getRefresh(unknown)).toBeUndefined();
  });
});
