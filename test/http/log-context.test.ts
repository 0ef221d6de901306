// Log context of a request (shared/log.ts): the real ingest group handler is
// called as the local runtime calls it, and the lines it writes are read back
// from stdout/stderr. The request line (module http) and the line a domain
// module (ingest) writes during the request carry the same request_id,
// correlation_id, cold_start and function context; concurrent requests keep
// their own ids; x-correlation-id is echoed when well formed and replaced
// when not.
import { beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.LOG_LEVEL = 'info';
  process.env.INGEST_TOKEN = 'log-context-ingest-token-0123456789';
});

import { randomUUID } from 'node:crypto';
import { handler } from '../../functions/ingest.js';
import { lambdaContext } from '../../infra/local/functions.js';
import { apiEvent } from '../support/events.js';
import { captureLogLines, type LogLine } from '../support/log-lines.js';
import { useTestTables } from '../support/dynamo.js';

type Line = LogLine;

beforeAll(async () => {
  await useTestTables();
});

/** An Alertmanager notification naming a cluster that does not exist: the ingest module logs the refusal. */
function orphanAlerts(headers: Record<string, string> = {}) {
  const body = {
    version: '4',
    receiver: 'fleet-health',
    groupKey: '{}:{alertname="Orphan"}',
    alerts: [
      {
        status: 'firing',
        labels: { alertname: 'Orphan', cluster_id: randomUUID(), team: 'storage-secret-team' },
        annotations: { description: 'Orphan description' },
        startsAt: new Date().toISOString(),
      },
    ],
  };
  return apiEvent({
    method: 'POST',
    path: '/api/ingest/alerts',
    routeKey: 'POST /api/ingest/alerts',
    headers: { authorization: 'Bearer log-context-ingest-token-0123456789', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function ingest(headers: Record<string, string> = {}) {
  const event = orphanAlerts(headers);
  const requestId = event.requestContext.requestId;
  const result = (await handler(event, lambdaContext('ingest', requestId))) as { statusCode: number; headers: Record<string, string> };
  return { requestId, result };
}

const requestLine = (lines: Line[], requestId: string) => lines.find((l) => l.module === 'http' && l.message === 'request' && l.request_id === requestId);
const domainLine = (lines: Line[], requestId: string) => lines.find((l) => l.module === 'ingest' && l.request_id === requestId);

describe('the log context of a request', () => {
  it('is on the request line and on a domain module’s line, with the Lambda context and cold start', async () => {
    const capture = captureLogLines();
    const first = await ingest({ 'x-correlation-id': 'ui-7f3a:dashboard.refresh' });
    const second = await ingest({ 'x-correlation-id': 'ui-7f3a:dashboard.refresh' });
    const lines = capture.stop();

    expect(first.result.statusCode).toBe(200);
    expect(first.result.headers['X-Correlation-Id']).toBe('ui-7f3a:dashboard.refresh');
    expect(first.result.headers['X-Request-Id']).toBe(first.requestId);
    const context = {
      service: 'ingest',
      request_id: first.requestId,
      correlation_id: 'ui-7f3a:dashboard.refresh',
      cold_start: true,
      function_name: 'fleet-health-local-ingest',
      function_request_id: first.requestId,
      function_memory_size: '512',
      function_arn: 'arn:aws:lambda:local:000000000000:function:fleet-health-local-ingest',
    };
    expect(requestLine(lines, first.requestId)).toMatchObject({
      level: 'info',
      message: 'request',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      module: 'http',
      ...context,
      method: 'POST',
      route: 'POST /api/ingest/alerts',
      status: 200,
    });
    // The refused alert is named (which alert of which cluster, from which receiver and group): "unknown cluster: 1"
    // alone told no one what was lost.
    const refusal = domainLine(lines, first.requestId);
    expect(refusal).toMatchObject({
      level: 'warn',
      message: 'ingest refused records',
      module: 'ingest',
      ...context,
      rejected: 1,
      receiver: 'fleet-health',
      groupKey: '{}:{alertname="Orphan"}',
      refused: [{ index: 0, reason: expect.stringMatching(/^cluster_id: unknown cluster /), alertname: 'Orphan', cluster: expect.any(String) }],
    });
    // The second invocation of the function in this process is warm.
    expect(requestLine(lines, second.requestId)).toMatchObject({ cold_start: false, correlation_id: 'ui-7f3a:dashboard.refresh' });
    expect(domainLine(lines, second.requestId)).toMatchObject({ cold_start: false });
    // Facts only: the bearer token and the body are never logged, only the names of what was refused.
    expect(JSON.stringify(lines)).not.toMatch(/log-context-ingest-token-0123456789|storage-secret-team|Orphan description/);
  });

  it('uses the request id as correlation id when the header is absent, and replaces a malformed one', async () => {
    const malformed = ['has spaces', 'x'.repeat(129), '<script>', 'line\nbreak', ''];
    const capture = captureLogLines();
    const absent = await ingest();
    const refused = [];
    for (const value of malformed) refused.push(await ingest({ 'x-correlation-id': value }));
    const lines = capture.stop();

    for (const { requestId, result } of [absent, ...refused]) {
      expect(result.headers['X-Correlation-Id']).toBe(requestId);
      expect(requestLine(lines, requestId)).toMatchObject({ correlation_id: requestId });
      expect(domainLine(lines, requestId)).toMatchObject({ correlation_id: requestId });
    }
    const logged = JSON.stringify(lines);
    for (const value of malformed.filter(Boolean)) expect(logged).not.toContain(JSON.stringify(value).slice(1, -1));
  });

  it('keeps concurrent requests apart: each line carries its own request’s ids', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `concurrent-${i}`);
    const capture = captureLogLines();
    const runs = await Promise.all(ids.map((id) => ingest({ 'x-correlation-id': id })));
    const lines = capture.stop();

    for (const [i, { requestId, result }] of runs.entries()) {
      expect(result.headers['X-Correlation-Id']).toBe(ids[i]);
      expect(requestLine(lines, requestId)).toMatchObject({ correlation_id: ids[i] });
      expect(domainLine(lines, requestId)).toMatchObject({ correlation_id: ids[i] });
    }
    // Every line of the batch belongs to exactly one request, with that request's correlation id.
    const byRequest = new Map(runs.map((r, i) => [r.requestId, ids[i]]));
    const batch = lines.filter((l) => l.service === 'ingest');
    expect(batch).toHaveLength(runs.length * 2);
    for (const line of batch) expect(line.correlation_id).toBe(byRequest.get(line.request_id as string));
  });
});
