// A real Prometheus Alertmanager (Debian's prometheus-alertmanager, installed by
// .ci/run) on loopback, delivering to the local service's webhook route with the
// ingest token: fire, repeat, resolve, re-fire, and a 3,000-alert group in one
// notification. Alerts are posted to Alertmanager's own API, as Prometheus does.
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/dynamodb-local.js';
import type { LocalService } from '../../infra/local/service.js';
import { listClusterAlerts, type AlertRecord } from '../../shared/db/alerts.js';
import { startTestService } from '../support/local-service.js';

const BINARY = process.env.ALERTMANAGER_BIN ?? '/usr/bin/prometheus-alertmanager';

let service: LocalService;
let admin: string;
let alertmanager: ChildProcess | undefined;
let amUrl: string;
let workDir: string;
let amOutput = '';
const clusterId = randomUUID();
const bigClusterId = randomUUID();

/** Polls until `check` answers a value, or fails after `ms` with what it last saw. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}\nalertmanager said:\n${amOutput.slice(-3000)}`);
}

async function call(method: string, path: string, body?: unknown, token = admin): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Posts alerts to Alertmanager's API, as Prometheus does. */
async function postAlerts(alerts: unknown[]): Promise<void> {
  const res = await fetch(`${amUrl}/api/v2/alerts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(alerts) });
  expect(res.status, await res.text()).toBe(200);
}

/** A counter from Alertmanager's /metrics for the webhook integration. */
async function amCounter(name: string): Promise<number> {
  const text = await (await fetch(`${amUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes('integration="webhook"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

const cluster = (id: string, name: string) => ({
  cluster_id: id,
  cluster_name: name,
  customer_name: 'Initech',
  account_id: '333344445555',
  account_name: 'Initech Production',
  email: 'ops@initech.example.com',
  customer_tier: 'B',
  cluster_type: 'ELASTIC',
  region: 'US West (us-west-2)',
  engine_version: '3.3.4',
  resource_state: 'RUNNING',
  node_count: 5,
});

beforeAll(async () => {
  if (!existsSync(BINARY)) {
    throw new Error(`Prometheus Alertmanager is not installed at ${BINARY}: apt-get install prometheus-alertmanager (CI installs it in .ci/run)`);
  }
  service = await startTestService({ adminPassword: 'alertmanager-admin-password' });
  const login = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'alertmanager-admin-password' }),
  });
  admin = ((await login.json()) as { access_token: string }).access_token;
  const clusters = await call(
    'POST',
    '/api/ingest/clusters',
    { clusters: [cluster(clusterId, 'initech-prod-1'), cluster(bigClusterId, 'initech-prod-2')] },
    service.ingestToken,
  );
  expect(clusters.body).toEqual({ accepted: 2, rejected: [] });
  // An issue resolves as soon as its last alert does, so the test sees it close and reopen.
  const rules = (await call('GET', '/api/settings/issue-rules')).body.content as string;
  expect(rules).toContain('quiet_minutes: 30');
  expect((await call('PUT', '/api/settings/issue-rules', { content: rules.replace('quiet_minutes: 30', 'quiet_minutes: 0') })).status).toBe(200);

  workDir = await mkdtemp(join(tmpdir(), 'fleet-alertmanager-'));
  const port = await freePort();
  amUrl = `http://127.0.0.1:${port}`;
  const config = [
    'global:',
    '  resolve_timeout: 5m',
    'route:',
    '  receiver: fleet-health',
    '  group_by: [alertname]',
    '  group_wait: 1s',
    '  group_interval: 1s',
    '  repeat_interval: 2s',
    '  routes:',
    '    # Alertmanager takes the 3,000 alerts in one by one: a longer first wait sends them as one notification.',
    "    # Alertmanager's defaults after it: the parent's 2 s repeat re-sent the 1.2 MB group all test long, and beside",
    '    # the other test files one delivery outlasted the 10 s notify timeout a 1 s group_interval gives (its floor).',
    '    - matchers: [alertname="InitechTabletUnhealthy"]',
    '      group_wait: 5s',
    '      group_interval: 5m',
    '      repeat_interval: 4h',
    'receivers:',
    '  - name: fleet-health',
    '    webhook_configs:',
    `      - url: ${service.url}/api/ingest/alerts`,
    '        send_resolved: true',
    '        http_config:',
    '          authorization:',
    '            type: Bearer',
    `            credentials: ${JSON.stringify(service.ingestToken)}`,
    '',
  ].join('\n');
  await writeFile(join(workDir, 'alertmanager.yml'), config);
  alertmanager = spawn(
    BINARY,
    [
      `--config.file=${join(workDir, 'alertmanager.yml')}`,
      `--storage.path=${join(workDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  alertmanager.stdout?.on('data', (c: Buffer) => (amOutput = (amOutput + c.toString()).slice(-20_000)));
  alertmanager.stderr?.on('data', (c: Buffer) => (amOutput = (amOutput + c.toString()).slice(-20_000)));
  await eventually('Alertmanager to be ready', async () => ((await fetch(`${amUrl}/-/ready`)).ok ? true : undefined), 30_000);
}, 120_000);

afterAll(async () => {
  if (alertmanager && alertmanager.exitCode === null) {
    const exited = new Promise((resolve) => alertmanager!.once('exit', resolve));
    alertmanager.kill('SIGTERM');
    await Promise.race([exited, sleep(5000)]);
    if (alertmanager.exitCode === null) alertmanager.kill('SIGKILL');
  }
  await service?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const since = new Date(Date.now() - 86_400_000);
const alertsOf = async (id: string, name: string): Promise<AlertRecord[]> => (await listClusterAlerts(id, since)).filter((a) => a.alert_name === name);
const issueOf = async (name: string) =>
  (await call('GET', `/api/issues?search=${name}&days=1`)).body.issues?.find((i: { alert_names: string[] }) => i.alert_names.includes(name));

describe('a real Alertmanager delivering to the webhook route', () => {
  it('fire, repeat, resolve, re-fire: the alert and its issue follow what Alertmanager shows', async () => {
    const startsAt = new Date(Date.now() - 60_000).toISOString();
    const labels = { alertname: 'InitechDiskFull', cluster_id: clusterId, severity: 'critical', instance: 'be-1' };
    const annotations = { summary: 'Disk almost full', description: 'be-1 disk at 96%' };

    await postAlerts([{ labels, annotations, startsAt, generatorURL: 'http://prometheus.example.com/graph' }]);
    const [fired] = await eventually('the firing alert', async () => {
      const stored = await alertsOf(clusterId, 'InitechDiskFull');
      return stored.length ? stored : undefined;
    });
    expect(fired).toMatchObject({ status: 'Firing', ends_at: null, severity: 'Critical', summary: 'Disk almost full' });
    expect(await eventually('its issue', () => issueOf('InitechDiskFull'))).toMatchObject({ status: 'Ongoing', alert_count: 1 });

    // repeat_interval: Alertmanager sends the same group again; still one alert, still firing
    const sent = await amCounter('alertmanager_notifications_total');
    await eventually('a repeat notification', async () => ((await amCounter('alertmanager_notifications_total')) >= sent + 1 ? true : undefined));
    expect((await alertsOf(clusterId, 'InitechDiskFull')).map((a) => a.status)).toEqual(['Firing']);

    // resolve: the same alert with endsAt in the past
    await postAlerts([{ labels, annotations, startsAt, endsAt: new Date(Date.now() - 1000).toISOString() }]);
    await eventually('the resolution', async () => ((await alertsOf(clusterId, 'InitechDiskFull'))[0]?.status === 'Resolved' ? true : undefined));
    expect(await eventually('the issue to resolve', async () => ((await issueOf('InitechDiskFull'))?.status === 'Resolved' ? true : undefined))).toBe(true);

    // re-fire: same labels and startsAt, no endsAt (Prometheus after a restart; Alertmanager after resolve_timeout)
    await postAlerts([{ labels, annotations, startsAt }]);
    const reopened = await eventually('the alert to fire again', async () => {
      const [a] = await alertsOf(clusterId, 'InitechDiskFull');
      return a?.status === 'Firing' ? a : undefined;
    });
    expect(reopened).toMatchObject({ ends_at: null, starts_at: fired!.starts_at, fingerprint: fired!.fingerprint });
    expect(await alertsOf(clusterId, 'InitechDiskFull')).toHaveLength(1);
    const issue = await eventually('the issue to reopen', async () => {
      const i = await issueOf('InitechDiskFull');
      return i?.status === 'Ongoing' ? i : undefined;
    });
    expect(issue).toMatchObject({ alert_count: 1, resolved_at: null });

    // and closes again, so the next test's group is the only one Alertmanager sends
    await postAlerts([{ labels, annotations, startsAt, endsAt: new Date(Date.now() - 1000).toISOString() }]);
    await eventually('the second resolution', async () => ((await alertsOf(clusterId, 'InitechDiskFull'))[0]?.status === 'Resolved' ? true : undefined));
    expect(await amCounter('alertmanager_notifications_failed_total')).toBe(0);
  }, 180_000);

  it('a group of 3,000 alerts arrives in one notification (≈1.2 MB) and every alert is stored', async () => {
    // Starting now: an alert older than group_wait makes Alertmanager flush its group at once, mid-insertion.
    const startsAt = new Date().toISOString();
    const alerts = Array.from({ length: 3000 }, (_, i) => ({
      labels: {
        alertname: 'InitechTabletUnhealthy',
        cluster_id: bigClusterId,
        severity: 'warning',
        tablet: `t-${String(i).padStart(5, '0')}`,
        instance: `be-${i % 12}`,
      },
      annotations: { summary: `Tablet t-${i} unhealthy`, description: `Tablet t-${i} on be-${i % 12} has fewer replicas than required.` },
      startsAt,
      generatorURL: 'http://prometheus.example.com/graph?g0.expr=tablet_unhealthy',
    }));
    const failed = await amCounter('alertmanager_notifications_failed_total');
    await postAlerts(alerts);
    const stored = await eventually(
      '3,000 stored alerts',
      async () => {
        const list = await alertsOf(bigClusterId, 'InitechTabletUnhealthy');
        return list.length >= 3000 ? list : undefined;
      },
      90_000,
    );
    expect(stored).toHaveLength(3000);
    expect(new Set(stored.map((a) => a.fingerprint)).size).toBe(3000);
    expect(stored.every((a) => a.status === 'Firing')).toBe(true);
    // one notification: every alert was received at the same instant
    expect(new Set(stored.map((a) => a.received_at)).size).toBe(1);
    expect(await amCounter('alertmanager_notifications_failed_total')).toBe(failed);
    expect(await eventually('its issue', () => issueOf('InitechTabletUnhealthy'))).toMatchObject({ alert_count: 3000, status: 'Ongoing' });
  }, 180_000);
});
