// The Prometheus client's failures as the pull status and the logs show them, against a
// local HTTP server: what a server or fetch says is passed on, the credential never.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrometheusError, prometheusClient, type PrometheusSource } from '../../shared/prometheus/client.js';

const SECRET = 'pr0m-S3CRET-token-0123456789';
let server: Server;
let url: string;
/** What the server answers next: status and body (the request's Authorization header is at hand to echo). */
let answer: (authorization: string) => { status: number; body: string } = () => ({
  status: 200,
  body: '{"status":"success","data":{"resultType":"vector","result":[]}}',
});

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const { status, body } = answer(req.headers.authorization ?? '');
      res
        .writeHead(status, { 'content-type': 'application/json', ...(status >= 300 && status < 400 ? { location: 'https://elsewhere.example/' } : {}) })
        .end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const source = (auth: PrometheusSource['auth'], at = url): PrometheusSource => ({
  enabled: true,
  url: at,
  auth,
  timeout_seconds: 2,
  step_seconds: 60,
  settle_seconds: 0,
  backfill_days: 1,
  max_points_per_request: 10_000,
});

async function failure(auth: PrometheusSource['auth'], secret = SECRET, at = url): Promise<PrometheusError> {
  const client = prometheusClient(source(auth, at), { credential: async () => secret, sleep: async () => undefined });
  const error = await client.query('up', 1_700_000_000).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PrometheusError);
  return error as PrometheusError;
}

describe('a failed Prometheus request says what went wrong without the credential', () => {
  it('a refused bearer or basic credential: the status and what to check, not the body that echoes it', async () => {
    answer = (authorization) => ({ status: 401, body: `{"error":"token ${authorization} is not valid"}` });
    for (const auth of [{ type: 'bearer' }, { type: 'basic', username: 'puller' }] as const) {
      const error = await failure(auth);
      expect(error.message).toBe(`401 from 127.0.0.1:${new URL(url).port}/api/v1/query: the ${auth.type} credential was refused (check PROMETHEUS_CREDENTIAL)`);
    }
  });

  it('any other error answer is quoted with the secret taken out', async () => {
    answer = (authorization) => ({
      status: 500,
      body: `{"status":"error","errorType":"internal","error":"upstream said ${authorization.slice('Bearer '.length)} twice: ${SECRET}"}`,
    });
    const error = await failure({ type: 'bearer' });
    expect(error.message).toContain('upstream said [redacted] twice: [redacted]');
    expect(error.message).not.toContain(SECRET);
  });

  it('a basic password echoed as the header carried it (base64) is taken out too', async () => {
    answer = (authorization) => ({ status: 502, body: `proxy error for ${authorization}` });
    const error = await failure({ type: 'basic', username: 'puller' });
    expect(error.message).toContain('proxy error for Basic [redacted]');
    expect(error.message).not.toContain(Buffer.from(`puller:${SECRET}`).toString('base64'));
  });

  it('a redirect is refused, and says so', async () => {
    answer = () => ({ status: 302, body: '' });
    const error = await failure({ type: 'bearer' });
    expect(error.message).toBe(`127.0.0.1:${new URL(url).port} answered with a redirect, which is not followed: set url to where it leads`);
  });

  it('a sigv4 source over plain http to another machine is not signed (a version stored before that was refused)', async () => {
    const error = await failure({ type: 'sigv4', region: 'us-east-1', service: 'aps' }, SECRET, 'http://aps.internal.example:9090');
    expect(error.message).toMatch(/^sigv4 needs an https URL/);
  });

  it('a secret a header cannot carry is refused by name, not quoted by fetch', async () => {
    const error = await failure({ type: 'bearer' }, `{\n  "token": "${SECRET}"\n}`);
    expect(error.message).toBe('the PROMETHEUS_CREDENTIAL secret holds a line break, which no HTTP header can carry');
  });

  it('a server nobody answers: the kind of failure only', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure({ type: 'bearer' }, SECRET, `http://127.0.0.1:${port}`);
    expect(error.message).toBe(`127.0.0.1:${port} unreachable: connection failed (ECONNREFUSED)`);
  });
});

describe("the pull's time budget", () => {
  it('ends a request in flight when the signal aborts, without retrying it, and starts none after', async () => {
    // A server that never answers: only the caller's signal (well before the 2 s timeout) ends the request.
    let requests = 0;
    const silent = createServer((req) => {
      requests++;
      req.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const stop = new AbortController();
      const client = prometheusClient(source({ type: 'none' }, `http://127.0.0.1:${(silent.address() as AddressInfo).port}`), {
        sleep: async () => undefined,
        signal: stop.signal,
      });
      const pending = client.query('up', 1_700_000_000).then(
        () => undefined,
        (e: unknown) => e,
      );
      while (requests === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      stop.abort();
      const error = await pending;
      expect(error).toBeInstanceOf(PrometheusError);
      expect((error as PrometheusError).message).toBe("stopped: the pull's time is up");
      expect((error as PrometheusError).retryable).toBe(false);
      await expect(client.query('up', 1_700_000_000)).rejects.toThrow("stopped: the pull's time is up");
      expect(requests).toBe(1);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
