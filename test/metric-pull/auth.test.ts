// How the puller authenticates to the query API (metric-sources `auth`):
// SigV4 as the AWS SDK signs, checked by a stand-in for Amazon Managed Service
// for Prometheus that verifies every signature with its own implementation and
// forwards good requests to a real Prometheus; bearer and basic checked by a
// local query API that records what it was sent. Credentials come from the
// PROMETHEUS_CREDENTIAL secret (never from the rule set) and never appear in
// the status or its errors.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowDays } from '../../shared/db/days.js';
import { readClusterRollups } from '../../shared/db/metrics.js';
import { ingestClusters } from '../../shared/fleet/ingest.js';
import { pullMetrics } from '../../shared/metric-pull/pull.js';
import { metricSourcesStatus } from '../../shared/metric-pull/status.js';
import { resetSettings } from '../../shared/config/env.js';
import { useTestTables } from '../support/dynamo.js';
import { startFakeAps, type FakeAps } from '../support/fake-aps.js';
import { useMetricSources } from '../support/metric-sources.js';
import { openMetrics, startPrometheus, type RunningPrometheus } from '../support/prometheus.js';

const noWait = async () => {};
const KEYS = { accessKeyId: 'AKIDFLEETHEALTHTEST', secretAccessKey: 'fleet/health/secret+key/EXAMPLE', sessionToken: 'session-token-for-the-test' };
const clusterId = randomUUID();
const END = Math.floor(Date.now() / 60_000) * 60 - 600;

let prometheus: RunningPrometheus;
let aps: FakeAps;

const useSources = (url: string, auth: string) =>
  useMetricSources({ url, auth, timeoutSeconds: 5, metrics: [{ key: 'qps', query: 'sum by (cluster_id) (last_over_time(fh_qps[59s]))' }] });

beforeAll(async () => {
  await useTestTables();
  const samples: [number, number][] = [];
  for (let t = END - 2 * 3600; t <= END; t += 60) samples.push([t * 1000, (t / 60) % 100]);
  prometheus = await startPrometheus({ history: openMetrics([{ name: 'fh_qps', labels: { cluster_id: clusterId }, samples }]) });
  aps = await startFakeAps({ upstream: prometheus.url, region: 'us-east-1', ...KEYS });
  await ingestClusters([
    {
      cluster_id: clusterId,
      cluster_name: 'signed',
      customer_name: 'Auth',
      account_id: 'a',
      account_name: 'Auth',
      email: 'ops@example.com',
      customer_tier: 'A',
      cluster_type: 'shared_nothing',
      region: 'us-east-1',
      engine_version: '3.3.2',
      resource_state: 'Running',
      node_count: 3,
    },
  ]);
}, 120_000);

afterAll(async () => {
  await aps?.stop();
  await prometheus?.stop();
});

describe('SigV4 (Amazon Managed Service for Prometheus)', () => {
  it('signs every query as the AWS SDK does: the verifying server accepts each, and the data arrives', async () => {
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: KEYS.secretAccessKey, AWS_SESSION_TOKEN: KEYS.sessionToken });
    resetSettings(); // forgets the credentials read before
    await useSources(aps.url, '{ type: sigv4, region: us-east-1 }');
    const result = await pullMetrics({ now: new Date((END - 3600) * 1000), sleep: noWait });
    expect(result.outcome, JSON.stringify({ errors: result.metrics.map((m) => m.error), requests: aps.requests })).toBe('ok');
    expect(aps.requests.length).toBeGreaterThan(0);
    expect(aps.requests.every((r) => r.authorized && r.status === 200 && r.path === '/workspaces/ws-test/api/v1/query_range')).toBe(true);
    const stored = await readClusterRollups(clusterId, windowDays(2, new Date(END * 1000)));
    expect(stored.reduce((n, r) => n + (r.metrics.qps?.count ?? 0), 0)).toBe(result.accepted);
    expect(result.accepted).toBeGreaterThan(60);
  });

  it('a wrong secret key is refused by the server (403), reported, and stores nothing', async () => {
    process.env.AWS_SECRET_ACCESS_KEY = 'not-the-secret';
    resetSettings(); // forgets the credentials read before
    const before = aps.requests.length;
    const result = await pullMetrics({ now: new Date(END * 1000), sleep: noWait });
    expect(result.outcome).toBe('failed');
    expect(aps.requests.slice(before).every((r) => !r.authorized && r.status === 403)).toBe(true);
    const status = await metricSourcesStatus(new Date(END * 1000));
    expect(status.metrics[0]?.last_error?.message).toMatch(/^403 .*signature/i);
    expect(JSON.stringify(status)).not.toContain('not-the-secret');
    process.env.AWS_SECRET_ACCESS_KEY = KEYS.secretAccessKey;
    resetSettings(); // forgets the credentials read before
  });
});

describe('bearer and basic', () => {
  let server: Server;
  let url: string;
  const seen: (string | undefined)[] = [];

  beforeAll(async () => {
    // A query API that answers an empty matrix and records the Authorization header.
    server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      req.resume();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the PROMETHEUS_CREDENTIAL secret as the bearer token', async () => {
    process.env.PROMETHEUS_CREDENTIAL = 'tok-3f9a';
    await useSources(url, '{ type: bearer }');
    seen.length = 0;
    expect((await pullMetrics({ now: new Date(END * 1000), sleep: noWait })).outcome).toBe('ok');
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set(['Bearer tok-3f9a']));
  });

  it('sends username and the secret as basic auth', async () => {
    process.env.PROMETHEUS_CREDENTIAL = 'pa:ss';
    await useSources(url, '{ type: basic, username: grafana }');
    seen.length = 0;
    expect((await pullMetrics({ now: new Date(END * 1000 + 60_000), sleep: noWait })).outcome).toBe('ok');
    expect(new Set(seen)).toEqual(new Set([`Basic ${Buffer.from('grafana:pa:ss').toString('base64')}`]));
  });

  it('without the secret, says what to set and sends nothing', async () => {
    delete process.env.PROMETHEUS_CREDENTIAL;
    await useSources(url, '{ type: bearer }');
    seen.length = 0;
    const result = await pullMetrics({ now: new Date(END * 1000 + 120_000), sleep: noWait });
    expect(result.outcome).toBe('failed');
    expect(result.metrics[0]?.error).toMatch(/PROMETHEUS_CREDENTIAL/);
    expect(seen).toEqual([]);
  });
});
