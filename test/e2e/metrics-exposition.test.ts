// GET /api/metrics (issue 20 §6) through the local server: the Prometheus text
// format parsed strictly, every value equal to the JSON API's figure, the
// scrape token (401 without it or with a wrong one), label escaping; then a
// real Prometheus (Debian's `prometheus`, installed by .ci/run; started by
// support/prometheus.ts) on loopback scrapes it with the bearer token and
// answers the same values over PromQL.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { EXPOSED_CLUSTERS_MAX, escapeLabelValue, fleetExposition, renderExposition } from '../../shared/fleet/exposition.js';
import { gzippedAnswerBytes } from '../../shared/http/lambda-payload.js';
import { listUsage } from '../../shared/db/llm-usage.js';
import { INGEST_KINDS, refusedTotals } from '../../shared/db/ingest-refusals.js';
import { startTestService } from '../support/local-service.js';
import { promtoolBinary, type RunningPrometheus, startPrometheus } from '../support/prometheus.js';
import { userToken } from '../support/tokens.js';

const QUOTED_NAME = 'acme "blue" \\ east';
const quotedId = randomUUID();

let service: LocalService;
let admin: string;
let superadmin: string;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A strict parser of the text format 0.0.4: HELP and TYPE before each family's samples, nothing else. */
function parseExposition(text: string): {
  samples: Sample[];
  help: Map<string, string>;
  type: Map<string, string>;
} {
  expect(text.endsWith('\n')).toBe(true);
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  const samples: Sample[] = [];
  const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, n) => {
      const where = `line ${n + 1}: ${line}`;
      const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
      if (meta) {
        const [, kind, name, rest] = meta as unknown as [string, string, string, string];
        if (kind === 'HELP') {
          expect(help.has(name), where).toBe(false);
          expect(rest.length, where).toBeGreaterThan(0);
          help.set(name, rest);
        } else {
          expect(['gauge', 'counter', 'untyped'], where).toContain(rest);
          expect(help.has(name), `${where} (HELP first)`).toBe(true);
          type.set(name, rest);
        }
        return;
      }
      expect(line.startsWith('#'), where).toBe(false);
      const name = NAME.exec(line)?.[0];
      expect(name, where).toBeTruthy();
      expect(type.has(name!), `${where} (TYPE before samples)`).toBe(true);
      let i = name!.length;
      const labels: Record<string, string> = {};
      if (line[i] === '{') {
        i++;
        while (line[i] !== '}') {
          const label = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i))?.[0];
          expect(label, where).toBeTruthy();
          i += label!.length;
          expect(line.slice(i, i + 2), where).toBe('="');
          i += 2;
          let value = '';
          for (;;) {
            const c = line[i];
            expect(c, `${where} (unterminated label value)`).toBeDefined();
            if (c === '"') break;
            if (c === '\\') {
              const next = line[i + 1];
              expect(['\\', '"', 'n'], where).toContain(next);
              value += next === 'n' ? '\n' : next;
              i += 2;
            } else {
              value += c;
              i++;
            }
          }
          i++;
          expect(labels[label!], `${where} (label twice)`).toBeUndefined();
          labels[label!] = value;
          if (line[i] === ',') i++;
          else expect(line[i], where).toBe('}');
        }
        i++;
      }
      expect(line[i], where).toBe(' ');
      const raw = line.slice(i + 1);
      expect(raw, where).toMatch(/^(-?\d+(\.\d+)?(e[+-]?\d+)?|NaN|[+-]Inf)$/);
      samples.push({ name: name!, labels, value: Number(raw) });
    });
  return { samples, help, type };
}

async function getJson(path: string, token = admin): Promise<any> {
  const res = await fetch(`${service.url}${path}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(res.status, path).toBe(200);
  return res.json();
}

async function scrape(token: string | undefined): Promise<Response> {
  return fetch(`${service.url}/api/metrics`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
}

function pick(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(found, `${name} ${JSON.stringify(labels)}`).toHaveLength(1);
  return found[0]!.value;
}

/** Every figure the exposition must carry, from the JSON API, as [name, labels, value]. */
async function expectedFigures(): Promise<[string, Record<string, string>, number][]> {
  const [scores, kpis, issues, patrol, investigations, usage] = await Promise.all([
    getJson('/api/fleet/scores'),
    getJson('/api/fleet/kpis'),
    getJson('/api/issues/kpis?days=30'),
    getJson('/api/patrol/kpis/summary'),
    getJson('/api/investigations/kpis?days=30'),
    getJson('/api/llm-usage/summary?days=30', superadmin),
  ]);
  const out: [string, Record<string, string>, number][] = [];
  for (const s of scores.scores) {
    const id = { cluster_id: s.cluster_id };
    out.push(['fleet_health_cluster_info', id, 1]);
    out.push(['fleet_health_cluster_score', { ...id, kind: 'tier_adjusted' }, s.tier_adjusted_score]);
    out.push(['fleet_health_cluster_score', { ...id, kind: 'overall' }, s.overall_score]);
    out.push(['fleet_health_cluster_score', { ...id, kind: 'metrics' }, s.metrics_score]);
    out.push(['fleet_health_cluster_score', { ...id, kind: 'alerts' }, s.alerts_score]);
    for (const c of ['Healthy', 'Warning', 'Critical'])
      out.push(['fleet_health_cluster_classification', { ...id, classification: c }, s.classification === c ? 1 : 0]);
  }
  const k = kpis.kpis;
  out.push(['fleet_health_fleet_size', {}, k.total_clusters]);
  out.push(['fleet_health_clusters_not_exposed', {}, 0]);
  out.push(['fleet_health_clusters', { classification: 'Healthy' }, k.healthy_count]);
  out.push(['fleet_health_clusters', { classification: 'Warning' }, k.warning_count]);
  out.push(['fleet_health_clusters', { classification: 'Critical' }, k.critical_count]);
  out.push(['fleet_health_clusters_at_risk', { tier: 'S' }, k.tier_s_at_risk]);
  out.push(['fleet_health_average_score', { kind: 'overall' }, k.avg_score]);
  out.push(['fleet_health_average_score', { kind: 'metrics' }, k.avg_metrics_score]);
  out.push(['fleet_health_average_score', { kind: 'alerts' }, k.avg_alerts_score]);
  out.push(['fleet_health_issues', { status: 'Ongoing' }, issues.ongoing]);
  out.push(['fleet_health_issues', { status: 'Resolved' }, issues.resolved]);
  out.push(['fleet_health_issues_unassigned', {}, issues.unassigned]);
  out.push(['fleet_health_patrol_reports', {}, patrol.total_reports]);
  out.push(['fleet_health_patrol_cost_usd', {}, patrol.total_cost_usd]);
  for (const sev of ['critical', 'warning', 'info']) out.push(['fleet_health_investigations', { severity: sev }, investigations[`${sev}_count`]]);
  out.push(['fleet_health_investigations_cost_usd', {}, investigations.total_cost_usd]);
  out.push(['fleet_health_llm_cost_usd', {}, usage.totals.cost_usd]);
  out.push(['fleet_health_llm_runs', {}, usage.totals.runs]);
  out.push(['fleet_health_llm_tokens', {}, usage.totals.total_tokens]);
  // The AI workers' day, from the ledger's rows of today, and their daily budget (AGENT_DAILY_BUDGET_USD's default).
  const today = new Date().toISOString().slice(0, 10);
  const agentToday = (await listUsage(1)).filter((u) => u.source === 'agent' && u.day === today).reduce((sum, u) => sum + u.cost_usd, 0);
  out.push(['fleet_health_agent_cost_today_usd', {}, Math.round(agentToday * 1e6) / 1e6]);
  out.push(['fleet_health_agent_daily_budget_usd', {}, 50]);
  const refused = await refusedTotals();
  for (const kind of INGEST_KINDS) out.push(['fleet_health_ingest_refused_records_total', { kind }, refused[kind]]);
  return out;
}

beforeAll(async () => {
  service = await startTestService({
    adminPassword: 'metrics-admin-password',
    demoClusters: 6,
  });
  const login = await fetch(`${service.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      username: 'admin',
      password: 'metrics-admin-password',
    }),
  });
  admin = ((await login.json()) as { access_token: string }).access_token;
  superadmin = await userToken('superadmin', 'metrics-superadmin');
  const res = await fetch(`${service.url}/api/ingest/clusters`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${service.ingestToken}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({
      clusters: [
        {
          cluster_id: quotedId,
          cluster_name: QUOTED_NAME,
          customer_name: 'Acme "Labs"',
          account_id: '111122223333',
          account_name: 'Acme',
          email: 'ops@acme.example.com',
          customer_tier: 'S',
          cluster_type: 'ELASTIC',
          region: 'US East (us-east-1)',
          engine_version: '3.3.4',
          resource_state: 'RUNNING',
          node_count: 3,
        },
      ],
    }),
  });
  expect(await res.json()).toEqual({ accepted: 1, rejected: [] });
  expect(
    (
      await fetch(`${service.url}/api/fleet/refresh`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${admin}` },
      })
    ).status,
  ).toBe(200);
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

describe('GET /api/metrics', () => {
  it('answers the Prometheus text format whose values equal the API figures', async () => {
    const res = await scrape(service.scrapeToken);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const { samples, type } = parseExposition(await res.text());
    // Gauges, but for the one figure that only grows.
    expect([...type].filter(([, t]) => t !== 'gauge')).toEqual([['fleet_health_ingest_refused_records_total', 'counter']]);
    const expected = await expectedFigures();
    expect(expected.length).toBeGreaterThan(60);
    for (const [name, labels, value] of expected) expect(pick(samples, name, labels), `${name} ${JSON.stringify(labels)}`).toBe(value);
    const open = samples.filter((s) => s.name === 'fleet_health_open_issues');
    expect(open.map((s) => s.labels.severity).sort()).toEqual(['Critical', 'Warning']);
    expect(open.reduce((sum, s) => sum + s.value, 0)).toBe(pick(samples, 'fleet_health_issues', { status: 'Ongoing' }));
    // Staleness (issue 20 §4): the flag of every cluster, and its newest sample's time when it has one.
    const { scores } = await getJson('/api/fleet/scores');
    const withTime = scores.filter((s: { last_metric_at: string | null }) => s.last_metric_at !== null);
    expect(withTime.length).toBeGreaterThan(0); // the demo clusters
    for (const s of scores) {
      const id = { cluster_id: s.cluster_id };
      expect(pick(samples, 'fleet_health_cluster_metrics_stale', id), `stale ${s.cluster_name}`).toBe(s.metrics_stale ? 1 : 0);
      const time = samples.filter((x) => x.name === 'fleet_health_cluster_last_metric_timestamp_seconds' && x.labels.cluster_id === s.cluster_id);
      expect(time.map((x) => x.value)).toEqual(s.last_metric_at === null ? [] : [Date.parse(s.last_metric_at) / 1000]);
    }
    // The cluster with no sample at all is stale; the demo fleet, fed up to the last hour, is not.
    expect(pick(samples, 'fleet_health_cluster_metrics_stale', { cluster_id: quotedId })).toBe(1);
    expect(withTime.every((s: { metrics_stale: boolean }) => !s.metrics_stale)).toBe(true);
  });

  it("past the clusters a scrape carries, carries the stale then the worst clusters' own series, says how many it leaves out, and counts them all", async () => {
    const { scores } = await getJson('/api/fleet/scores'); // worst first
    expect(scores.length).toBeGreaterThan(3);
    const { samples } = parseExposition(await fleetExposition(new Date(), { clustersMax: 2 }));
    // The cluster with no sample at all is stale, and scores at the healthy end: carried first.
    const stale = scores.filter((s: { metrics_stale: boolean }) => s.metrics_stale);
    expect(stale.map((s: { cluster_id: string }) => s.cluster_id)).toEqual([quotedId]);
    expect(scores.findIndex((s: { cluster_id: string }) => s.cluster_id === quotedId)).toBeGreaterThan(1);
    const worst = [quotedId, scores.find((s: { metrics_stale: boolean }) => !s.metrics_stale).cluster_id];
    for (const family of [
      'fleet_health_cluster_info',
      'fleet_health_cluster_score',
      'fleet_health_cluster_classification',
      'fleet_health_cluster_metrics_stale',
    ])
      expect([...new Set(samples.filter((x) => x.name === family).map((x) => x.labels.cluster_id))], family).toEqual(worst);
    expect(pick(samples, 'fleet_health_clusters_not_exposed')).toBe(scores.length - 2);
    // Stale ones take at most half: with room for one, the worst live cluster, not the one gone silent.
    const one = parseExposition(await fleetExposition(new Date(), { clustersMax: 1 })).samples;
    expect([...new Set(one.filter((x) => x.name === 'fleet_health_cluster_info').map((x) => x.labels.cluster_id))]).toEqual([worst[1]]);
    expect(pick(samples, 'fleet_health_fleet_size')).toBe(scores.length);
    // EXPOSED_CLUSTERS_MAX was sized for 11 lines a cluster (≈ 2.2 MB gzipped and base64-encoded per 10,000): a
    // family more per cluster means sizing it again.
    const perCluster = samples.filter((x) => x.labels.cluster_id === worst[0]).length;
    expect(perCluster).toBeLessThanOrEqual(11);
    expect(EXPOSED_CLUSTERS_MAX * perCluster).toBeLessThanOrEqual(220_000);
  });

  it('carries fewer clusters when their series would make the answer larger gzipped than a Lambda function may return', async () => {
    const all = parseExposition(await fleetExposition(new Date())).samples;
    const carried = (samples: typeof all) => samples.filter((x) => x.name === 'fleet_health_cluster_info').map((x) => x.labels.cluster_id);
    const full = await fleetExposition(new Date());
    // A bound the whole answer is just over (Lambda's 6 MB binds at 20,000 clusters with long names; here a few).
    const bound = gzippedAnswerBytes(full) - 1;
    const fitted = await fleetExposition(new Date(), { gzippedBytesMax: bound });
    expect(gzippedAnswerBytes(fitted)).toBeLessThanOrEqual(bound);
    const { samples } = parseExposition(fitted);
    const kept = carried(samples);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(carried(all).length);
    // The same clusters a cap of that many carries (stale first, then the worst), and every cluster still counted.
    expect(kept).toEqual(carried(parseExposition(await fleetExposition(new Date(), { clustersMax: kept.length })).samples));
    expect(pick(samples, 'fleet_health_clusters_not_exposed')).toBe(carried(all).length - kept.length);
    expect(pick(samples, 'fleet_health_fleet_size')).toBe(pick(all, 'fleet_health_fleet_size'));
    // Within the bound, nothing is left out.
    expect(await fleetExposition(new Date(), { gzippedBytesMax: bound + 1 })).toBe(full);
  });

  it('counts the records ingest refused, by kind, in one counter every container adds to', async () => {
    const counted = async () => {
      const { samples } = parseExposition(await (await scrape(service.scrapeToken)).text());
      return Object.fromEntries(INGEST_KINDS.map((kind) => [kind, pick(samples, 'fleet_health_ingest_refused_records_total', { kind })]));
    };
    const before = await counted();
    const post = async (path: string, body: unknown) =>
      (
        await fetch(`${service.url}${path}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${service.ingestToken}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json();
    // An Alertmanager notification: answered 200, one of its two alerts refused (a cluster the inventory lacks).
    const alert = (cluster: string, fingerprint: string) => ({
      status: 'firing',
      labels: { alertname: 'RefusalCounted', cluster_id: cluster, severity: 'warning' },
      annotations: {},
      startsAt: new Date(Date.now() - 60_000).toISOString(),
      endsAt: '0001-01-01T00:00:00Z',
      fingerprint,
    });
    const notification = { version: '4', status: 'firing', receiver: 'fleet', groupKey: '{}:{}', alerts: [alert(quotedId, 'a1'), alert(randomUUID(), 'a2')] };
    expect(await post('/api/ingest/alerts', notification)).toMatchObject({ accepted: 1, rejected: [{ index: 1 }] });
    const at = new Date().toISOString();
    const samples = [
      { cluster_id: quotedId, metric_key: 'disk_used_pct', value: 40, at },
      { cluster_id: quotedId, metric_key: 'disk_used_pct', value: 700, at },
      { cluster_id: quotedId, metric_key: 'not_a_metric', value: 1, at },
    ];
    expect(await post('/api/ingest/metrics', { samples })).toMatchObject({ accepted: 1 });
    // A request that refuses nothing counts nothing.
    expect(await post('/api/ingest/metrics', { samples: samples.slice(0, 1) })).toMatchObject({ accepted: 1, rejected: [] });
    expect(await counted()).toEqual({ ...before, alerts: before.alerts! + 1, metrics: before.metrics! + 2 });
  });

  it("passes promtool's lint (check metrics): names, suffixes and HELP as Prometheus' conventions ask", async () => {
    const text = await (await scrape(service.scrapeToken)).text();
    const lint = spawnSync(promtoolBinary(), ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${lint.stdout}${lint.stderr}`.trim()).toBe('');
    expect(lint.status).toBe(0);
  });

  it('escapes label values: the quoted cluster name comes back as it was ingested', async () => {
    const text = await (await scrape(service.scrapeToken)).text();
    expect(text).toContain(`cluster_name="acme \\"blue\\" \\\\ east"`);
    const { samples } = parseExposition(text);
    const mine = samples.filter((s) => s.labels.cluster_id === quotedId);
    expect(mine.length).toBe(1 + 4 + 3 + 1 + 1); // info, scores, classes, alerts, stale (no sample: no timestamp)
    // The descriptive labels are the info series' only: a renamed cluster keeps its other series.
    const [info, ...others] = mine;
    expect(info).toMatchObject({ name: 'fleet_health_cluster_info', value: 1 });
    expect(info!.labels).toEqual({ cluster_id: quotedId, cluster_name: QUOTED_NAME, customer: 'Acme "Labs"', tier: 'S', region: 'US East (us-east-1)' });
    expect(others.every((s) => s.labels.cluster_name === undefined && s.labels.customer === undefined)).toBe(true);
    expect(escapeLabelValue('a\nb"c\\')).toBe('a\\nb\\"c\\\\');
    expect(
      parseExposition(
        renderExposition([
          {
            name: 'x',
            help: 'h',
            type: 'gauge',
            samples: [{ labels: { l: 'a\nb"c\\' }, value: 1 }],
          },
        ]),
      ).samples[0]!.labels.l,
    ).toBe('a\nb"c\\');
  });

  it('answers 401 without the token or with a wrong one, 403 to a viewer, 200 to an admin JWT', async () => {
    const none = await scrape(undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await scrape(`${service.scrapeToken}x`)).status).toBe(401);
    expect((await scrape(service.ingestToken)).status).toBe(401);
    expect((await scrape(await userToken('viewer', 'metrics-viewer'))).status).toBe(403);
    expect((await scrape(admin)).status).toBe(200);
  });

  it("shows the LLM ledger's totals to the scraper and a superadmin, not to an admin (LLM usage is a superadmin's)", async () => {
    const families = async (token: string) => (await (await scrape(token)).text()).match(/^# TYPE fleet_health_llm_\w+/gm) ?? [];
    const llm = ['# TYPE fleet_health_llm_cost_usd', '# TYPE fleet_health_llm_runs', '# TYPE fleet_health_llm_tokens'];
    // (`admin` above is the built-in account, a superadmin.)
    const adminRole = await userToken('admin', 'metrics-admin-role');
    expect(await families(service.scrapeToken)).toEqual(llm);
    expect(await families(superadmin)).toEqual(llm);
    expect(await families(adminRole)).toEqual([]);
    // So are the AI workers' day and budget.
    const agent = async (token: string) => (await (await scrape(token)).text()).match(/^# TYPE fleet_health_agent_\w+/gm) ?? [];
    expect(await agent(service.scrapeToken)).toEqual(['# TYPE fleet_health_agent_cost_today_usd', '# TYPE fleet_health_agent_daily_budget_usd']);
    expect(await agent(adminRole)).toEqual([]);
    // The patrol's and the investigations' own costs stay: every role reads those KPIs.
    expect(await (await scrape(adminRole)).text()).toMatch(/^fleet_health_patrol_cost_usd /m);
  });
});

describe('a real Prometheus scraping GET /api/metrics', () => {
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    prometheus = await startPrometheus({
      scrapeInterval: '1s',
      // The alerting rules a team loads (test/fleet/prometheus-alerts.test.ts runs their unit tests).
      ruleFiles: [resolve(import.meta.dirname, '../../shared/fleet/prometheus-alerts.yml')],
      scrapeConfigs: [
        {
          job_name: 'fleet-health',
          metrics_path: '/api/metrics',
          authorization: { type: 'Bearer', credentials: service.scrapeToken },
          static_configs: [{ targets: [`127.0.0.1:${new URL(service.url).port}`] }],
        },
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await prometheus?.stop();
  });

  it('scrapes with the bearer token, and PromQL answers the API figures', async () => {
    const deadline = Date.now() + 45_000;
    let up: string | undefined;
    while (Date.now() < deadline) {
      up = (await prometheus.query('up{job="fleet-health"}'))[0]?.value[1];
      if (up === '1' && (await prometheus.query('fleet_health_fleet_size')).length) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(up, `Prometheus did not scrape the service; it said:\n${prometheus.output().slice(-3000)}`).toBe('1');
    const expected = await expectedFigures();
    for (const [name, labels, value] of expected) {
      const selector = Object.entries(labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(',');
      const result = await prometheus.query(`${name}{${selector}}`);
      expect(result, `${name}{${selector}}`).toHaveLength(1);
      expect(Number(result[0]!.value[1]), `${name}{${selector}}`).toBe(value);
    }
    // The name joined on from the info series, as a dashboard does.
    const quoted = await prometheus.query(
      `fleet_health_cluster_score{cluster_id="${quotedId}",kind="overall"} * on(cluster_id) group_left(cluster_name) fleet_health_cluster_info`,
    );
    expect(quoted[0]!.metric.cluster_name).toBe(QUOTED_NAME);
  }, 90_000);

  it("evaluates shared/fleet/prometheus-alerts.yml on the service's answer: every rule healthy, and the clusters each cluster alert holds are those the API names", async () => {
    const scores = (await getJson('/api/fleet/scores')).scores as {
      cluster_id: string;
      cluster_name: string;
      customer_tier: string;
      classification: string;
      metrics_stale: boolean;
    }[];
    const expected: Record<string, string[]> = {
      FleetHealthClusterCritical: scores.filter((s) => s.classification === 'Critical').map((s) => s.cluster_id),
      FleetHealthTierSClusterAtRisk: scores.filter((s) => s.classification === 'Warning' && s.customer_tier === 'S').map((s) => s.cluster_id),
      FleetHealthClusterMetricsStale: scores.filter((s) => s.metrics_stale).map((s) => s.cluster_id),
    };
    // The quoted cluster has no metrics at all: stale, so the stale rule has at least one cluster to hold.
    expect(expected.FleetHealthClusterMetricsStale).toContain(quotedId);
    const held = (rule: { alerts: { labels: Record<string, string> }[] }) => rule.alerts.map((a) => a.labels.cluster).sort();
    let rules = await prometheus.alertingRules();
    const deadline = Date.now() + 45_000;
    // Evaluated once the scrape has landed: each cluster rule holds (pending, for its `for:`) the clusters the API names.
    while (Date.now() < deadline && !rules.every((r) => r.health === 'ok' && (expected[r.name] ?? []).join() === held(r).join())) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      rules = await prometheus.alertingRules();
    }
    expect(rules.map((r) => [r.name, r.health, r.lastError ?? ''])).toEqual(
      [
        'FleetHealthScrapeFailing',
        'FleetHealthClusterCritical',
        'FleetHealthTierSClusterAtRisk',
        'FleetHealthClusterMetricsStale',
        'FleetHealthScrapeIncomplete',
        'FleetHealthIngestRefusingAlerts',
        'FleetHealthLlmCostOverBudget',
        'FleetHealthAgentBudgetSpent',
      ].map((name) => [name, 'ok', '']),
    );
    for (const rule of rules) expect(held(rule), rule.name).toEqual([...(expected[rule.name] ?? [])].sort());
    const stale = rules.find((r) => r.name === 'FleetHealthClusterMetricsStale')!.alerts.find((a) => a.labels.cluster === quotedId)!;
    expect(stale.state).toBe('pending');
    expect(stale.labels).toMatchObject({ cluster_name: QUOTED_NAME, customer: 'Acme "Labs"', tier: 'S', service: 'fleet-health', severity: 'warning' });
    expect(stale.labels.cluster_id).toBeUndefined();
    expect(stale.annotations.summary).toBe(`${QUOTED_NAME} (Acme "Labs") sends no metrics`);
  }, 90_000);
});
