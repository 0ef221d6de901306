// Log context of a worker run (shared/log.ts): the real patrol worker, run as
// the local runtime runs it, with an LLM that cannot be reached so that the
// patrol module logs the failed scan during the run. Its line and the worker's
// own carry the run's request_id, correlation_id and cold_start; a run the API
// trigger starts carries the triggering request's correlation id (passed in
// the asynchronous invoke event by shared/worker-invoke.ts).
import { beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  Object.assign(process.env, {
    LOG_LEVEL: 'info',
    // Nothing listens on port 9: every LLM call fails at once, and the scan with it.
    LLM_PROVIDER: 'openai',
    LLM_MODEL: 'gpt-4o-mini',
    LLM_BASE_URL: 'http://localhost:9/v1',
    LLM_MAX_ATTEMPTS: '1',
  });
});

import { randomUUID } from 'node:crypto';
import { handler as patrolApi } from '../../functions/patrol.js';
import { handler as patrolWorker } from '../../functions/patrol-worker.js';
import { lambdaContext } from '../../infra/local/functions.js';
import { localWorkersSettled, registerLocalWorker } from '../../shared/worker-invoke.js';
import { apiEvent } from '../support/events.js';
import { captureLogLines, type LogLine } from '../support/log-lines.js';
import { useTestTables } from '../support/dynamo.js';
import { userToken, useTestJwtSecret } from '../support/tokens.js';

type Line = LogLine;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  registerLocalWorker('patrol-worker', (event) => patrolWorker(event, lambdaContext('patrol-worker')));
});

/** One worker run as the local runtime (and Lambda) runs it: its own request id in the context. A failed scan throws (for Lambda's retry and alarms), read here as its status. */
async function runWorker(event: Record<string, unknown>) {
  const requestId = randomUUID();
  const result = await patrolWorker(event, lambdaContext('patrol-worker', requestId)).then(
    (answer) => answer as { status: string; report_id: string },
    (error: Error) => {
      if (error.name !== 'PatrolScanFailed') throw error;
      return { status: 'failed', report_id: /patrol scan (\S+) failed/.exec(error.message)![1]! };
    },
  );
  return { requestId, result };
}

const workerLine = (lines: Line[], requestId: string) => lines.find((l) => l.module === 'patrol-worker' && l.request_id === requestId);
const domainLine = (lines: Line[], requestId: string) => lines.find((l) => l.module === 'patrol' && l.request_id === requestId);

describe('the log context of a worker run', () => {
  it('is on the worker’s line and on a domain module’s line, with the event’s correlation id and cold start', async () => {
    const capture = captureLogLines();
    const first = await runWorker({ report_type: 'on_demand', triggered_by: 'cli-user', correlation_id: 'cli-run-42' });
    const second = await runWorker({ report_type: 'on_demand', triggered_by: 'cli-user', correlation_id: 'cli-run-43' });
    const lines = capture.stop();

    expect(first.result.status).toBe('failed');
    const context = {
      service: 'patrol-worker',
      request_id: first.requestId,
      correlation_id: 'cli-run-42',
      cold_start: true,
      function_name: 'fleet-health-local-patrol-worker',
      function_request_id: first.requestId,
    };
    expect(domainLine(lines, first.requestId)).toMatchObject({
      level: 'error',
      message: 'patrol scan failed',
      module: 'patrol',
      ...context,
      report_id: first.result.report_id,
    });
    expect(workerLine(lines, first.requestId)).toMatchObject({ level: 'info', message: 'patrol scan', module: 'patrol-worker', ...context, status: 'failed' });
    expect(domainLine(lines, second.requestId)).toMatchObject({ correlation_id: 'cli-run-43', cold_start: false });
    expect(workerLine(lines, second.requestId)).toMatchObject({ correlation_id: 'cli-run-43', cold_start: false });
  });

  it('falls back to the run’s request id (a scheduled run) or the report id, never a malformed value', async () => {
    const capture = captureLogLines();
    const scheduled = await runWorker({ report_type: 'scheduled' });
    const malformed = await runWorker({ report_type: 'scheduled', correlation_id: 'not a valid id' });
    const reportId = randomUUID();
    const forReport = await runWorker({ report_type: 'on_demand', report_id: reportId });
    const lines = capture.stop();

    for (const run of [scheduled, malformed]) {
      expect(workerLine(lines, run.requestId)).toMatchObject({ correlation_id: run.requestId });
      expect(domainLine(lines, run.requestId)).toMatchObject({ correlation_id: run.requestId });
    }
    // A report the worker was handed (not created by the trigger here): refused, logged under the report id.
    expect(workerLine(lines, forReport.requestId)).toMatchObject({ correlation_id: reportId });
    expect(JSON.stringify(lines)).not.toContain('not a valid id');
  });

  it('carries the triggering request’s correlation id into the run the API starts', async () => {
    const token = await userToken('admin', 'log-context-admin');
    const event = apiEvent({
      method: 'POST',
      path: '/api/patrol/trigger',
      routeKey: 'POST /api/patrol/trigger',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': 'ui-patrol-click-1' },
      body: JSON.stringify({ report_type: 'on_demand' }),
    });
    const requestId = event.requestContext.requestId;
    const capture = captureLogLines();
    const answer = (await patrolApi(event, lambdaContext('patrol', requestId))) as { statusCode: number; headers: Record<string, string> };
    await localWorkersSettled();
    const lines = capture.stop();

    expect(answer.statusCode).toBe(200);
    expect(answer.headers['X-Correlation-Id']).toBe('ui-patrol-click-1');
    expect(lines.find((l) => l.module === 'http' && l.request_id === requestId)).toMatchObject({ service: 'patrol', correlation_id: 'ui-patrol-click-1' });
    const run = lines.filter((l) => l.service === 'patrol-worker');
    expect(run.map((l) => l.module).sort()).toEqual(['patrol', 'patrol-worker']);
    for (const line of run) {
      expect(line).toMatchObject({ correlation_id: 'ui-patrol-click-1', function_name: 'fleet-health-local-patrol-worker' });
      expect(line.request_id).not.toBe(requestId); // its own run
    }
  });

  it('keeps concurrent runs apart', async () => {
    const ids = ['run-a', 'run-b', 'run-c', 'run-d'];
    const capture = captureLogLines();
    const runs = await Promise.all(ids.map((id) => runWorker({ report_type: 'on_demand', triggered_by: 'cli-user', correlation_id: id })));
    const lines = capture.stop();

    for (const [i, run] of runs.entries()) {
      expect(workerLine(lines, run.requestId)).toMatchObject({ correlation_id: ids[i], status: run.result.status });
      for (const line of lines.filter((l) => l.request_id === run.requestId)) expect(line.correlation_id).toBe(ids[i]);
    }
    // Each took the lock and failed its scan, or found it running. Which, and how many of each, depends on how the four
    // overlap: on a loaded machine one run may end before another starts (the lock itself: test/patrol/).
    const statuses = runs.map((r) => r.result.status);
    expect(statuses).toContain('failed');
    for (const status of statuses) expect(['already_running', 'failed']).toContain(status);
  });
});
