// Starting a worker on AWS (shared/worker-invoke.ts): the real Lambda client against a local
// server speaking Lambda's Invoke REST protocol. A worker that cannot be started is a 503 for
// the route that starts it, never a 500.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resetSettings } from '../../shared/config/env.js';
import { invokeWorker } from '../../shared/worker-invoke.js';

interface Received {
  path: string;
  invocationType: string | undefined;
  body: unknown;
}
const received: Received[] = [];
/** How the next invocation is answered: Lambda's status and JSON error body; `hang`: never (the socket stays open). */
let answer: { status: number; body?: Record<string, unknown>; hang?: boolean } = { status: 202 };
let server: Server;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', invocationType: req.headers['x-amz-invocation-type'] as string | undefined, body: JSON.parse(body) });
      if (answer.hang) return;
      res.writeHead(answer.status, { 'Content-Type': 'application/json', ...(answer.body ? { 'X-Amzn-ErrorType': String(answer.body.Type) } : {}) });
      res.end(answer.body ? JSON.stringify(answer.body) : '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_LAMBDA: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    RECOMPUTE_FUNCTION: 'fleet-health-recompute',
    // One attempt: the SDK's own retries of a throttled invoke are not what is tested here.
    AWS_MAX_ATTEMPTS: '1',
  });
  resetSettings();
});

afterAll(async () => {
  await new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
  for (const name of ['AWS_ENDPOINT_URL_LAMBDA', 'RECOMPUTE_FUNCTION', 'AWS_MAX_ATTEMPTS']) delete process.env[name];
  resetSettings();
});

beforeEach(() => {
  received.length = 0;
  answer = { status: 202 };
});

describe('invokeWorker on AWS', () => {
  it('invokes the function the stack names, asynchronously, with the event', async () => {
    await invokeWorker('recompute', { refresh_id: 'r-1', kinds: ['fleet'] });
    expect(received).toEqual([
      { path: '/2015-03-31/functions/fleet-health-recompute/invocations', invocationType: 'Event', body: { refresh_id: 'r-1', kinds: ['fleet'] } },
    ]);
  });

  it.each([
    ['throttled', { status: 429, body: { Type: 'User', message: 'Rate exceeded', Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded' } }],
    [
      'gone since the deploy',
      { status: 404, body: { Type: 'User', message: 'Function not found: arn:aws:lambda:local:000000000000:function:fleet-health-recompute' } },
    ],
    ['denied', { status: 403, body: { Type: 'User', message: 'User is not authorized to perform: lambda:InvokeFunction' } }],
    ['answered synchronously', { status: 200 }],
  ])('is a 503 naming only the worker when the invocation is %s', async (_, reply) => {
    answer = reply;
    const error = await invokeWorker('recompute', { refresh_id: 'r-2' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 503, message: 'The recompute worker could not be started; try again shortly.' });
    expect(received).toHaveLength(1);
  });

  it('a Lambda API that does not answer is a 503 too, within INVOKE_TIMEOUT_MS, not a route held until its own timeout', async () => {
    answer = { status: 202, hang: true };
    const error = await invokeWorker('recompute', { refresh_id: 'r-3' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 503, message: 'The recompute worker could not be started; try again shortly.' });
    expect(received).toHaveLength(1);
  });
});
