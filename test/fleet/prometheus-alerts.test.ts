// shared/fleet/prometheus-alerts.yml, the alerting rules a team loads into the Prometheus that
// scrapes GET /api/metrics: Debian's promtool (installed by .ci/run) checks them and runs its
// rule unit tests on series shaped as the exposition writes them (cluster_id on each cluster's
// series, the names on fleet_health_cluster_info). That a real Prometheus evaluates them on the
// service's own answer is test/e2e/metrics-exposition.test.ts.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { promtoolBinary } from '../support/prometheus.js';

const run = promisify(execFile);
const RULES = resolve(import.meta.dirname, '../../shared/fleet/prometheus-alerts.yml');
const SCRAPE = { job: 'fleet-health', instance: 'fleet.example.com:443' };

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'fleet-prom-rules-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** A series in promtool's notation, with the scrape's job and instance as Prometheus adds them. */
function series(name: string, labels: Record<string, string>, values: string) {
  const all = { ...labels, ...SCRAPE };
  const selector = Object.entries(all)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',');
  return { series: `${name}{${selector}}`, values };
}

interface Cluster {
  id: string;
  name: string;
  customer: string;
  tier: 'S' | 'A' | 'B';
  classification: 'Healthy' | 'Warning' | 'Critical';
  stale?: boolean;
}

/** One cluster's info, classification and staleness series, held for `minutes` one-minute steps. */
function clusterSeries(c: Cluster, minutes: number) {
  const held = (value: number) => `${value}x${minutes}`;
  return [
    series('fleet_health_cluster_info', { cluster_id: c.id, cluster_name: c.name, customer: c.customer, tier: c.tier, region: 'EU (eu-west-1)' }, held(1)),
    ...(['Healthy', 'Warning', 'Critical'] as const).map((k) =>
      series('fleet_health_cluster_classification', { cluster_id: c.id, classification: k }, held(c.classification === k ? 1 : 0)),
    ),
    series('fleet_health_cluster_metrics_stale', { cluster_id: c.id }, held(c.stale ? 1 : 0)),
  ];
}

/** The labels a cluster's alert carries: the cluster by `cluster` (no cluster_id), its names, the routing labels. */
const clusterAlert = (c: Cluster, severity: string, extra: Record<string, string> = {}) => ({
  exp_labels: {
    cluster: c.id,
    cluster_name: c.name,
    customer: c.customer,
    tier: c.tier,
    region: 'EU (eu-west-1)',
    severity,
    service: 'fleet-health',
    ...SCRAPE,
    ...extra,
  },
});

async function promtool(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(promtoolBinary(), args, { cwd: workDir });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('shared/fleet/prometheus-alerts.yml', () => {
  it('passes promtool check rules', async () => {
    const { code, out } = await promtool(['check', 'rules', RULES]);
    expect(out).toContain('SUCCESS: 8 rules found');
    expect(code, out).toBe(0);
  });

  it('fires each alert as its rule says, on series shaped as the exposition writes them, and names a cluster so the ingest would refuse it (no cluster_id)', async () => {
    const critical: Cluster = { id: '0b6f1f7e-0000-4000-8000-000000000001', name: 'orders-db', customer: 'Acme', tier: 'A', classification: 'Critical' };
    const healthy: Cluster = { id: '0b6f1f7e-0000-4000-8000-000000000002', name: 'billing-db', customer: 'Acme', tier: 'S', classification: 'Healthy' };
    const tierSWarning: Cluster = { id: '0b6f1f7e-0000-4000-8000-000000000003', name: 'ledger "main"', customer: 'Bank', tier: 'S', classification: 'Warning' };
    const tierBWarning: Cluster = { id: '0b6f1f7e-0000-4000-8000-000000000004', name: 'search', customer: 'Shop', tier: 'B', classification: 'Warning' };
    const silent: Cluster = {
      id: '0b6f1f7e-0000-4000-8000-000000000005',
      name: 'archive',
      customer: 'Shop',
      tier: 'B',
      classification: 'Healthy',
      stale: true,
    };
    const fleet = [critical, healthy, tierSWarning, tierBWarning, silent];
    const tests = [
      {
        interval: '1m',
        input_series: [
          ...fleet.flatMap((c) => clusterSeries(c, 70)),
          { series: `up{job="fleet-health",instance="${SCRAPE.instance}"}`, values: '1x70' },
          series('fleet_health_clusters_not_exposed', {}, '0x70'),
          series('fleet_health_llm_cost_usd', {}, '120+10x70'),
          // Under its budget all along; and a budget of 0 (none) never fires.
          series('fleet_health_agent_cost_today_usd', {}, '10+0.5x70'),
          series('fleet_health_agent_daily_budget_usd', {}, '50x70'),
        ],
        alert_rule_test: [
          // Pending for its 15 minutes, then firing; the healthy cluster never.
          { eval_time: '10m', alertname: 'FleetHealthClusterCritical', exp_alerts: [] },
          {
            eval_time: '20m',
            alertname: 'FleetHealthClusterCritical',
            exp_alerts: [
              {
                ...clusterAlert(critical, 'critical', { classification: 'Critical' }),
                exp_annotations: {
                  summary: 'orders-db (Acme, tier A) is Critical',
                  description: `Cluster ${critical.id} in EU (eu-west-1) has been Critical for 15 minutes. Its scores, alerts and issues are on its page in the console (/clusters/${critical.id}).`,
                },
              },
            ],
          },
          // Warning for tier S only, after 30 minutes.
          { eval_time: '25m', alertname: 'FleetHealthTierSClusterAtRisk', exp_alerts: [] },
          {
            eval_time: '35m',
            alertname: 'FleetHealthTierSClusterAtRisk',
            exp_alerts: [
              {
                ...clusterAlert(tierSWarning, 'warning', { classification: 'Warning' }),
                exp_annotations: {
                  summary: 'ledger "main" of tier-S customer Bank is at risk',
                  description: `Cluster ${tierSWarning.id} in EU (eu-west-1) has been Warning for 30 minutes (a Critical one raises FleetHealthClusterCritical instead).`,
                },
              },
            ],
          },
          {
            eval_time: '35m',
            alertname: 'FleetHealthClusterMetricsStale',
            exp_alerts: [
              {
                ...clusterAlert(silent, 'warning'),
                exp_annotations: {
                  summary: 'archive (Shop) sends no metrics',
                  description: `Cluster ${silent.id} has had no fresh metric sample for 30 minutes past the health rules' stale_after_minutes. A silent cluster scores at the healthy end, so its health is unknown, not good: check its exporter or the metrics puller. A decommissioned cluster leaves the fleet when its resource_state says so (DELETED, TERMINATED, ...).`,
                },
              },
            ],
          },
          // Scraped, and every cluster carried: quiet.
          { eval_time: '65m', alertname: 'FleetHealthScrapeFailing', exp_alerts: [] },
          { eval_time: '65m', alertname: 'FleetHealthScrapeIncomplete', exp_alerts: [] },
          // 120 + 10 a minute passes 500 USD at 39 minutes, and has been over it for an hour only past 99.
          { eval_time: '69m', alertname: 'FleetHealthLlmCostOverBudget', exp_alerts: [] },
          { eval_time: '69m', alertname: 'FleetHealthAgentBudgetSpent', exp_alerts: [] },
        ],
      },
      {
        interval: '1m',
        input_series: [
          { series: `up{job="fleet-health",instance="${SCRAPE.instance}"}`, values: '1x5 0x20' },
          series('fleet_health_clusters_not_exposed', {}, '0x5 1200x70'),
          series('fleet_health_llm_cost_usd', {}, '620x70'),
          // 48 + 1 a minute reaches its 50 USD at 2 minutes: firing 5 minutes later. A budget of 0 is none.
          series('fleet_health_agent_cost_today_usd', {}, '48+1x70'),
          series('fleet_health_agent_daily_budget_usd', {}, '50x40 0x30'),
          // 4 alerts refused at 11 minutes, none after; refused metrics raise nothing.
          series('fleet_health_ingest_refused_records_total', { kind: 'alerts' }, '7x10 11x60'),
          series('fleet_health_ingest_refused_records_total', { kind: 'metrics' }, '0+5x70'),
        ],
        alert_rule_test: [
          { eval_time: '10m', alertname: 'FleetHealthIngestRefusingAlerts', exp_alerts: [] },
          {
            eval_time: '12m',
            alertname: 'FleetHealthIngestRefusingAlerts',
            exp_alerts: [
              {
                exp_labels: { severity: 'warning', service: 'fleet-health', kind: 'alerts', ...SCRAPE },
                exp_annotations: {
                  summary: 'The service refused alerts it was sent in the last 15 minutes',
                  description:
                    'Alertmanager\'s notifications were answered 200, but some of their alerts were not stored (a missing or unknown cluster label, a start or end that is no time, ...), so they form no issue. The ingest log\'s "ingest refused records" lines name each one and why.',
                },
              },
            ],
          },
          { eval_time: '30m', alertname: 'FleetHealthIngestRefusingAlerts', exp_alerts: [] },
          { eval_time: '14m', alertname: 'FleetHealthScrapeFailing', exp_alerts: [] },
          {
            eval_time: '17m',
            alertname: 'FleetHealthScrapeFailing',
            exp_alerts: [
              {
                exp_labels: { severity: 'critical', service: 'fleet-health', ...SCRAPE },
                exp_annotations: {
                  summary: 'Prometheus cannot scrape the Fleet Health Service',
                  description: `${SCRAPE.instance} has answered no scrape of /api/metrics for 10 minutes, so no other alert of this group can fire: check the token (a 401), the service and its logs.`,
                },
              },
            ],
          },
          {
            eval_time: '70m',
            alertname: 'FleetHealthScrapeIncomplete',
            exp_alerts: [
              {
                exp_labels: { severity: 'warning', service: 'fleet-health', ...SCRAPE },
                exp_annotations: {
                  summary: "The scrape leaves out 1200 clusters' own series",
                  description:
                    'The fleet is larger than one scrape may carry, so the cluster alerts above cannot see every cluster (the fleet-wide counts still do). The scrape keeps the stale and the worst ones.',
                },
              },
            ],
          },
          {
            eval_time: '65m',
            alertname: 'FleetHealthLlmCostOverBudget',
            exp_alerts: [
              {
                exp_labels: { severity: 'warning', service: 'fleet-health', ...SCRAPE },
                exp_annotations: {
                  summary: 'LLM cost is 620.00 USD over the window, past the 500 USD budget',
                  description: "Patrol, investigations, chat and AI grouping together. The console's LLM cost page breaks it down by feature, model and day.",
                },
              },
            ],
          },
          { eval_time: '6m', alertname: 'FleetHealthAgentBudgetSpent', exp_alerts: [] },
          {
            eval_time: '8m',
            alertname: 'FleetHealthAgentBudgetSpent',
            exp_alerts: [
              {
                exp_labels: { severity: 'warning', service: 'fleet-health', ...SCRAPE },
                exp_annotations: {
                  summary: 'The AI workers spent 56.00 USD today, their daily budget',
                  description:
                    "Until 00:00 UTC the patrol, investigations and AI grouping run their rules engines (their reports say so). Raise AGENT_DAILY_BUDGET_USD if the day needs more; the console's LLM cost page says what spent it.",
                },
              },
            ],
          },
          { eval_time: '60m', alertname: 'FleetHealthAgentBudgetSpent', exp_alerts: [] },
        ],
      },
    ];
    const file = join(workDir, 'alerts.test.yml');
    await writeFile(file, stringify({ rule_files: [RULES], evaluation_interval: '1m', tests }));
    const { code, out } = await promtool(['test', 'rules', file]);
    expect(out).toContain('SUCCESS');
    expect(code, out).toBe(0);
  });
});
