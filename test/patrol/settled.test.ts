// Reading a running report whose scan holds no lock (shared/patrol/lock.ts settled) on DynamoDB
// Local: marked failed when it stopped, but answered as stored when it finished after the read.
import { beforeAll, describe, expect, it } from 'vitest';
import { createReport, finishReport, getReport } from '../../shared/db/patrol.js';
import { settled } from '../../shared/patrol/lock.js';
import { useTestTables } from '../support/dynamo.js';

beforeAll(async () => {
  await useTestTables();
});

const aMinuteAgo = () => new Date(Date.now() - 60_000);

describe('settled', () => {
  it('marks a report whose worker stopped as failed', async () => {
    const read = await createReport({ report_id: 'stopped-scan', report_type: 'scheduled', triggered_by: 'schedule' }, aMinuteAgo());
    expect(await settled(read)).toMatchObject({ status: 'failed', error: expect.stringMatching(/stopped without finishing/) });
    expect((await getReport('stopped-scan'))!.status).toBe('failed');
  });

  it('answers a report completed after it was read (the worker finished and let go of the lock) as completed', async () => {
    const read = await createReport({ report_id: 'late-finish', report_type: 'scheduled', triggered_by: 'schedule' }, aMinuteAgo());
    await finishReport('late-finish', { status: 'completed', flagged_count: 3, fleet_narrative: 'done' });
    expect(await settled(read)).toMatchObject({ status: 'completed', flagged_count: 3, fleet_narrative: 'done' });
    expect((await getReport('late-finish'))!.status).toBe('completed');
  });
});
