// Ingestion through the real local server, and `npm run ingest` (the CLI) as a
// separate process sending a JSONL file to it.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planIngest } from '../../infra/local/ingest-cli.js';
import { freePort } from '../../infra/local/dynamodb-local.js';
import { LAMBDA_EVENT_BODY_BYTES } from '../../shared/http/lambda-payload.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';

const run = promisify(execFile);
let service: LocalService;
let adminToken: string;
let dataDir: string;

const clusterRecord = (name: string) => ({
  cluster_id: randomUUID(),
  cluster_name: name,
  customer_name: 'Pied Piper',
  account_id: '210987654321',
  account_name: 'Pied Piper Production',
  email: 'ops@piedpiper.example.com',
  customer_tier: 'A',
  cluster_type: 'ELASTIC',
  region: 'Europe (eu-west-1)',
  engine_version: '3.3.2',
  resource_state: 'RUNNING',
  node_count: 4,
});

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'fleet-ingest-data-'));
  service = await startTestService({ adminPassword: 'ingest-admin-password', dataDir });
  const login = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'ingest-admin-password' }),
  });
  adminToken = ((await login.json()) as { access_token: string }).access_token;
});

afterAll(async () => {
  await service?.stop();
});

const post = (path: string, body: unknown, token = service.ingestToken) =>
  fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('ingest routes', () => {
  it('accept the static ingest token and an admin JWT', async () => {
    const a = await post('/api/ingest/clusters', { clusters: [clusterRecord('pp-prod-1')] });
    expect(a.status).toBe(200);
    expect(await a.json()).toEqual({ accepted: 1, rejected: [] });
    const b = await post('/api/ingest/clusters', { clusters: [clusterRecord('pp-prod-2'), { cluster_name: 'broken' }] }, adminToken);
    expect(await b.json()).toEqual({ accepted: 1, rejected: [{ index: 1, reason: expect.stringMatching(/^cluster_id: /) }] });
    expect((await post('/api/ingest/clusters', { clusters: [] }, 'wrong-token')).status).toBe(401);
  });

  it('the ingest token opens only the ingest routes, and the scrape token none of them', async () => {
    const get = (path: string, token: string) => fetch(`${service.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    for (const path of ['/api/fleet/scores', '/api/issues', '/api/settings/users', '/api/auth/me']) {
      expect((await get(path, service.ingestToken)).status, path).toBe(401);
    }
    expect((await post('/api/settings/users/invite', { email: 'x@example.com', display_name: 'X', role: 'superadmin' })).status).toBe(401);
    expect((await post('/api/ingest/clusters', { clusters: [clusterRecord('pp-scrape-1')] }, service.scrapeToken)).status).toBe(401);
  });

  it('takes an Alertmanager webhook as Alertmanager sends it', async () => {
    const c = clusterRecord('pp-prod-3');
    await post('/api/ingest/clusters', { clusters: [c] });
    const webhook = {
      version: '4',
      groupKey: '{}:{alertname="DiskFull"}',
      truncatedAlerts: 0,
      status: 'firing',
      receiver: 'fleet-health',
      groupLabels: { alertname: 'DiskFull' },
      commonLabels: {},
      commonAnnotations: {},
      externalURL: 'http://alertmanager:9093',
      alerts: [
        {
          status: 'firing',
          labels: { alertname: 'DiskFull', cluster_id: c.cluster_id, severity: 'critical' },
          annotations: { summary: 'Disk full' },
          startsAt: new Date(Date.now() - 600_000).toISOString(),
          endsAt: '0001-01-01T00:00:00Z',
          generatorURL: 'http://prometheus/graph',
          fingerprint: 'aa11bb22cc33dd44',
        },
      ],
    };
    const res = await post('/api/ingest/alerts', webhook);
    expect(await res.json()).toEqual({ accepted: 1, rejected: [], duplicates: 0, issues: { created: 1, updated: 0 } });
    expect((await post('/api/ingest/alerts', { ...webhook, version: '3' })).status).toBe(422);
  });

  it('a cluster id in upper case is the same cluster: no second inventory record, its alerts, samples and page are that cluster’s', async () => {
    const c = clusterRecord('pp-case-1');
    const upper = c.cluster_id.toUpperCase();
    expect(await (await post('/api/ingest/clusters', { clusters: [c] })).json()).toEqual({ accepted: 1, rejected: [] });
    // the same cluster, its id in upper case: an update of it, not a new cluster
    expect(await (await post('/api/ingest/clusters', { clusters: [{ ...c, cluster_id: upper, node_count: 6 }] })).json()).toEqual({
      accepted: 1,
      rejected: [],
    });
    const at = new Date(Date.now() - 60_000).toISOString();
    const samples = await post('/api/ingest/metrics', { samples: [{ cluster_id: upper, metric_key: 'qps', value: 7, at }] });
    expect(await samples.json()).toEqual({ accepted: 1, rejected: [] });
    const logs = await post('/api/ingest/logs', { events: [{ cluster_id: upper, at, level: 'info', message: 'case' }] });
    expect(await logs.json()).toEqual({ accepted: 1, rejected: [] });
    const alert = { status: 'firing', labels: { alertname: 'CaseProbe', cluster_id: upper, severity: 'warning' }, startsAt: at };
    expect(await (await post('/api/ingest/alerts', { version: '4', alerts: [alert] })).json()).toMatchObject({ accepted: 1, rejected: [] });

    const get = async (path: string) => {
      const res = await fetch(`${service.url}${path}`, { headers: { Authorization: `Bearer ${adminToken}` } });
      return { status: res.status, body: (await res.json()) as any };
    };
    for (const id of [c.cluster_id, upper]) {
      const page = await get(`/api/clusters/${id}`);
      expect(page.status, id).toBe(200);
      expect(page.body.cluster).toMatchObject({ cluster_id: c.cluster_id, node_count: 6 });
    }
    const metrics = await get(`/api/clusters/${c.cluster_id}/metrics?days=1`);
    expect(JSON.stringify(metrics.body)).toContain('qps');
    for (const id of [c.cluster_id, upper]) {
      const issues = await get(`/api/issues?cluster_id=${id}&days=1`);
      expect(
        issues.body.issues.map((i: { issue_name: string }) => i.issue_name),
        id,
      ).toEqual([expect.stringContaining('CaseProbe')]);
      expect((await get(`/api/investigations?cluster_id=${id}`)).status, id).toBe(200);
    }
  });

  it('refuses more than 5,000 samples in one request (422); ingest bodies may be up to 6 MB, not more (413)', async () => {
    const samples = Array.from({ length: 5001 }, () => ({ cluster_id: randomUUID(), metric_key: 'qps', value: 1, at: new Date().toISOString() }));
    expect((await post('/api/ingest/metrics', { samples })).status).toBe(422);
    // over the 1 MB of other routes: a whole Alertmanager group must get through (a 413 makes Alertmanager drop it)
    const big = await post('/api/ingest/logs', { events: [{ message: 'x'.repeat(1_100_000) }] });
    expect(big.status).toBe(200);
    expect(await big.json()).toMatchObject({ accepted: 0, rejected: [{ index: 0 }] });
    expect((await post('/api/ingest/logs', { events: [{ message: 'x'.repeat(6_100_000) }] })).status).toBe(413);
    // 4 MB of body, but 8 MB escaped inside its Lambda event: AWS would not take it, so neither does the handler
    const quoted = await post('/api/ingest/logs', { events: [{ message: '"'.repeat(2_000_000) }] });
    expect(quoted.status).toBe(413);
    expect(((await quoted.json()) as { detail: string }).detail).toMatch(/inside its Lambda event/);
  });
});

describe('npm run ingest', () => {
  it('plans mixed JSONL into ordered, request-sized chunks and keeps line numbers', () => {
    const c = clusterRecord('x');
    const sample = (i: number) => JSON.stringify({ cluster_id: c.cluster_id, metric_key: 'qps', value: i, at: new Date().toISOString() });
    const lines = [sample(1), JSON.stringify(c), ...Array.from({ length: 5001 }, (_, i) => sample(i))];
    const plans = planIngest(lines.join('\n'), 'f.jsonl');
    expect(plans.map((p) => [p.kind, p.numbers.length])).toEqual([
      ['clusters', 1],
      ['metrics', 5000],
      ['metrics', 2],
    ]);
    expect(plans[0]!.numbers).toEqual([2]);
    expect(plans[1]!.numbers[0]).toBe(1);
    expect(() => planIngest('{"foo": 1}\n', 'bad.jsonl')).toThrow(/line 1: not a cluster/);
    // A JSON document holding several kinds sends each of them (only the first was sent, the rest dropped unsaid).
    const both = planIngest(JSON.stringify({ samples: [JSON.parse(sample(1)), JSON.parse(sample(2))], clusters: [c] }), 'both.json');
    expect(both.map((p) => [p.kind, p.numbers])).toEqual([
      ['clusters', [1]],
      ['metrics', [1, 2]],
    ]);
    expect(() => planIngest(JSON.stringify({ clusters: [c], samples: 3 }), 'odd.json')).toThrow(/its samples is not a list/);
    // A file that would send nothing says so, rather than succeed silently.
    for (const [text, name] of [
      ['[]', 'empty.json'],
      ['{"alerts": 5}', 'odd.json'],
      ['\n\n', 'blank.jsonl'],
    ])
      expect(() => planIngest(text!, name!)).toThrow(/^(it holds no record to send|its alerts is not a list)$/);
    // long log lines: split by size too, each request under the 6 MB ingest limit
    const logs = Array.from({ length: 1000 }, () =>
      JSON.stringify({ cluster_id: c.cluster_id, at: new Date().toISOString(), level: 'error', message: 'y'.repeat(8000) }),
    );
    const sized = planIngest(logs.join('\n'), 'logs.jsonl');
    expect(sized.map((p) => p.numbers.length).reduce((a, b) => a + b)).toBe(1000);
    expect(sized.length).toBe(2);
    for (const p of sized) expect(Buffer.byteLength(JSON.stringify(p.body))).toBeLessThan(6_000_000);
    // quotes weigh double inside the Lambda event: the plan counts them escaped
    const quoted = Array.from({ length: 1000 }, () =>
      JSON.stringify({ cluster_id: c.cluster_id, at: new Date().toISOString(), level: 'error', message: '"'.repeat(4000) }),
    );
    const escaped = planIngest(quoted.join('\n'), 'quoted.jsonl');
    expect(escaped.map((p) => p.numbers.length).reduce((a, b) => a + b)).toBe(1000);
    for (const p of escaped) expect(Buffer.byteLength(JSON.stringify(JSON.stringify(p.body)))).toBeLessThan(LAMBDA_EVENT_BODY_BYTES);
  });

  it('sends a JSONL file to the running service and lists refused records by line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-ingest-cli-'));
    const c = clusterRecord('pp-cli-1');
    const now = new Date().toISOString();
    const lines = [
      JSON.stringify(c),
      JSON.stringify({ cluster_id: c.cluster_id, metric_key: 'disk_used_pct', value: 71.5, at: now }),
      JSON.stringify({ cluster_id: randomUUID(), metric_key: 'disk_used_pct', value: 10, at: now }),
      JSON.stringify({ cluster_id: c.cluster_id, at: now, level: 'error', message: 'Write failed: no space left on device', source: 'be-1' }),
      JSON.stringify({
        status: 'firing',
        labels: { alertname: 'DiskUsageHigh', cluster_id: c.cluster_id, severity: 'warning' },
        annotations: {},
        startsAt: now,
      }),
    ];
    const file = join(dir, 'fleet.jsonl');
    // A blank line before the refused record: it is named by its line (4), not its place among the records (3).
    lines.splice(2, 0, '');
    await writeFile(file, `${lines.join('\n')}\n`);
    const outcome = await run('npx', ['tsx', 'infra/local/ingest-cli.ts', file], {
      env: { ...process.env, INGEST_URL: `${service.url}/`, INGEST_TOKEN: service.ingestToken },
    }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
    expect(outcome.code).toBe(2); // some records refused
    expect(outcome.stdout).toContain('clusters: 1 accepted, 0 rejected');
    expect(outcome.stdout).toContain('metrics: 1 accepted, 1 rejected');
    expect(outcome.stdout).toContain('logs: 1 accepted, 0 rejected');
    expect(outcome.stdout).toContain('alerts: 1 accepted, 0 rejected');
    expect(outcome.stdout).toMatch(/line 4 \(metrics\): cluster_id: unknown cluster/);
    // No service there: it says where it looked and what to check.
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const refused = await run('npx', ['tsx', 'infra/local/ingest-cli.ts', file], {
      env: { ...process.env, INGEST_URL: nowhere, INGEST_TOKEN: service.ingestToken },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Could not reach the service at ${nowhere}`);
    expect(refused.stderr).toContain('is npm start running?');
    // With no INGEST_URL, the service running on DATA_DIR, on the port it took (its local-service.json), not PORT's
    // default: a service started with PORT=0, or PORT not set in this shell, was looked for on localhost:3000.
    const { PORT: _port, INGEST_URL: _url, ...inherited } = process.env;
    const found = await run('npx', ['tsx', 'infra/local/ingest-cli.ts', file], {
      env: { ...inherited, DATA_DIR: dataDir, INGEST_TOKEN: service.ingestToken },
    }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
    expect(found.stdout).toContain('clusters: 1 accepted, 0 rejected');
  }, 60_000);
});
