// GET /api/metrics: the fleet in the Prometheus text exposition format
// (version 0.0.4), so a Prometheus server can scrape the service and Grafana
// chart and alert on fleet health (issue 20 §6). Every figure is the one the
// JSON API answers: the same fleet view, KPI and usage functions.
import { investigationKpis } from '../agents/queries.js';
import { scrapeSettings } from '../config/scrape.js';
import { issueWindow } from '../issues/list-cache.js';
import { activeUsernames } from '../issues/assignee.js';
import { kpiCounts, windowStart } from '../issues/queries.js';
import { usageSummary } from '../llm/usage.js';
import { patrolKpis } from '../patrol/queries.js';
import { Severity } from '../rules/schemas.js';
import { fleetKpis } from '../scoring/fleet-score.js';
import { fleetView } from '../scoring/fleet-view.js';
import { Classification } from '../scoring/schemas.js';
import { gzippedAnswerBytes, mayGzipOver } from '../http/lambda-payload.js';
import { createLogger } from '../log.js';
import { INGEST_KINDS, refusedTotals } from '../db/ingest-refusals.js';

const log = createLogger('exposition');

type Labels = Record<string, string>;
interface Family {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  samples: { labels: Labels; value: number }[];
}

/** A label value as the format wants it: backslash, double quote and newline escaped. */
export const escapeLabelValue = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
/** HELP text escapes backslash and newline. */
const escapeHelp = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** The families as exposition text: HELP and TYPE before each family's samples, one trailing newline. */
export function renderExposition(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const { labels, value } of family.samples) {
      const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
      lines.push(`${family.name}${pairs.length ? `{${pairs.join(',')}}` : ''} ${formatValue(value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

const gauge = (name: string, help: string, samples: Family['samples']): Family => ({ name, help, type: 'gauge', samples });
const one = (value: number) => [{ labels: {}, value }];
/** A value that only grows: its name ends in `_total`, as promtool's lint and PromQL's rate() expect. */
const counter = (name: `${string}_total`, help: string, samples: Family['samples']): Family => ({ name, help, type: 'counter', samples });

/**
 * The clusters whose own series a scrape carries, at most. Each is about 11 lines: 10,000 clusters are 11.5 MB of
 * text, 2.2 MB gzipped and base64-encoded, so 20,000 stay well under Lambda's 6 MB answer, past which every scrape
 * would fail and every alert rule on the fleet go silent. A larger fleet's scrape carries the clusters whose metrics
 * stopped first (their score is their last one, or a silent cluster's 100: at the healthy end), up to half of it,
 * then the worst (the view's order), and says how many it leaves out; the fleet-wide families count every cluster.
 */
export const EXPOSED_CLUSTERS_MAX = 20_000;

/**
 * The clusters a capped scrape carries: those with stale metrics first, at most half of them (the inventory never
 * retires a cluster, so the dead ones would otherwise crowd out the live), then the worst of the rest, in the view's
 * order; stale ones again if room is left.
 */
function exposedClusters<S extends { metrics_stale: boolean }>(scores: readonly S[], max: number): S[] {
  const stale = scores.filter((s) => s.metrics_stale);
  const first = stale.slice(0, Math.floor(max / 2));
  const live = scores.filter((s) => !s.metrics_stale).slice(0, max - first.length);
  return [...first, ...live, ...stale.slice(first.length, max - live.length)];
}

/** What a scrape reads: the live figures every family is made of. */
async function scrapeInputs(now: Date, llmUsage: boolean) {
  const days = scrapeSettings().SCRAPE_WINDOW_DAYS;
  const [view, issueSummaries, patrol, investigations, usage, active, refused] = await Promise.all([
    fleetView(),
    // Through the issues list's cache: a scrape with no issue written since costs one marker read.
    issueWindow(days, windowStart(days, now)).then((window) => window.summaries),
    patrolKpis(now),
    investigationKpis({ days }, now),
    llmUsage ? usageSummary(days, now) : undefined,
    activeUsernames(),
    refusedTotals(),
  ]);
  return { now, days, view, issueSummaries, patrol, investigations, usage, active, refused };
}

/**
 * Every family GET /api/metrics answers, carrying at most `exposedMax` clusters' own series (`clustersMax`, or fewer
 * when their labels made the answer too large: fleetExposition).
 */
function familiesOf(inputs: Awaited<ReturnType<typeof scrapeInputs>>, clustersMax: number, exposedMax = clustersMax): Family[] {
  const { now, days, view, issueSummaries, patrol, investigations, usage, active, refused } = inputs;
  const kpis = fleetKpis(view.scores);
  const exposed = view.scores.length > exposedMax ? exposedClusters(view.scores, exposedMax) : view.scores;
  // The issue KPIs from the same read as the open issues below (GET /api/issues/kpis counts them alike).
  const issues = kpiCounts(issueSummaries, now, active);
  // Each per-cluster series names its cluster by id only; its name, customer, tier and region are the info series'
  // labels (joined in PromQL: `* on(cluster_id) group_left(cluster_name, customer) fleet_health_cluster_info`). On every
  // series they made a renamed cluster start new series (an alert rule's `for:` starting over) and 40% of the text.
  const clusterLabels = (s: (typeof view.scores)[number]) => ({ cluster_id: s.cluster_id });
  const kinds = [
    ['tier_adjusted', (s: (typeof view.scores)[number]) => s.tier_adjusted_score],
    ['overall', (s: (typeof view.scores)[number]) => s.overall_score],
    ['metrics', (s: (typeof view.scores)[number]) => s.metrics_score],
    ['alerts', (s: (typeof view.scores)[number]) => s.alerts_score],
  ] as const;
  const ongoing = issueSummaries.filter((i) => i.status === 'Ongoing');
  return [
    gauge(
      'fleet_health_cluster_info',
      "Always 1: a cluster's descriptive labels (name, customer, customer tier, region), to join onto its other series by cluster_id.",
      exposed.map((s) => ({
        labels: { cluster_id: s.cluster_id, cluster_name: s.cluster_name, customer: s.customer_name, tier: s.customer_tier, region: s.region },
        value: 1,
      })),
    ),
    gauge(
      'fleet_health_cluster_score',
      'Health score of a cluster, 0-100 (higher is healthier), by kind: tier_adjusted, overall, metrics, alerts (as GET /api/fleet/scores).',
      exposed.flatMap((s) => kinds.map(([kind, of]) => ({ labels: { ...clusterLabels(s), kind }, value: of(s) }))),
    ),
    gauge(
      'fleet_health_cluster_classification',
      `1 for the class a cluster is in, 0 for the others (${Classification.options.join(', ')}).`,
      exposed.flatMap((s) =>
        Classification.options.map((c) => ({ labels: { ...clusterLabels(s), classification: c }, value: s.classification === c ? 1 : 0 })),
      ),
    ),
    gauge(
      'fleet_health_cluster_firing_alerts_7d',
      'Alerts that fired on a cluster in the last 7 days.',
      exposed.map((s) => ({ labels: clusterLabels(s), value: s.firing_alert_count_7d })),
    ),
    gauge(
      'fleet_health_cluster_metrics_stale',
      "1 when a cluster's metrics are stale (its newest sample is older than the health rules' stale_after_minutes, or it has none in the lookback), else 0 (as metrics_stale in GET /api/fleet/scores).",
      exposed.map((s) => ({ labels: clusterLabels(s), value: s.metrics_stale ? 1 : 0 })),
    ),
    gauge(
      'fleet_health_cluster_last_metric_timestamp_seconds',
      "Unix time in seconds of a cluster's newest metric sample in the scoring lookback (last_metric_at); no sample for a cluster with none.",
      exposed.flatMap((s) => (s.last_metric_at === null ? [] : [{ labels: clusterLabels(s), value: Date.parse(s.last_metric_at) / 1000 }])),
    ),
    gauge('fleet_health_clusters', 'Clusters in the fleet, by classification (as GET /api/fleet/kpis).', [
      { labels: { classification: 'Healthy' }, value: kpis.healthy_count },
      { labels: { classification: 'Warning' }, value: kpis.warning_count },
      { labels: { classification: 'Critical' }, value: kpis.critical_count },
    ]),
    // Names promtool's lint (check metrics) accepts: no `_total` or `_count` on a gauge (counters', histograms' and
    // summaries' suffixes), no `_s_` (read as seconds): the tier is a label.
    gauge('fleet_health_fleet_size', 'Clusters in the fleet.', one(kpis.total_clusters)),
    gauge(
      'fleet_health_clusters_not_exposed',
      `Clusters whose own series (fleet_health_cluster_*) this scrape leaves out: past ${clustersMax.toLocaleString('en-US')} (or fewer, when their labels would make the answer more than a Lambda function may return), those with stale metrics (up to half) and then the worst are carried.`,
      one(view.scores.length - exposed.length),
    ),
    gauge('fleet_health_clusters_at_risk', 'Clusters that are not Healthy, of customer tier S (as tier_s_at_risk in GET /api/fleet/kpis).', [
      { labels: { tier: 'S' }, value: kpis.tier_s_at_risk },
    ]),
    // An empty fleet has no average: its 0 (the contract's number) would read as a fleet in ruins and fire alert rules on
    // a fresh deploy. The samples are left out; fleet_health_fleet_size 0 says why.
    gauge(
      'fleet_health_average_score',
      'Average cluster score over the fleet, by kind: overall, metrics, alerts (no samples for an empty fleet).',
      kpis.total_clusters === 0
        ? []
        : [
            { labels: { kind: 'overall' }, value: kpis.avg_score },
            { labels: { kind: 'metrics' }, value: kpis.avg_metrics_score },
            { labels: { kind: 'alerts' }, value: kpis.avg_alerts_score },
          ],
    ),
    gauge(
      'fleet_health_open_issues',
      `Ongoing alert issues by severity, among those active in the last ${days} days.`,
      Severity.options.map((severity) => ({ labels: { severity }, value: ongoing.filter((i) => i.severity === severity).length })),
    ),
    gauge('fleet_health_issues', `Alert issues active in the last ${days} days, by status (as GET /api/issues/kpis?days=${days}).`, [
      { labels: { status: 'Ongoing' }, value: issues.ongoing },
      { labels: { status: 'Resolved' }, value: issues.resolved },
    ]),
    gauge(
      'fleet_health_issues_unassigned',
      `Alert issues active in the last ${days} days with no assignee, or one whose account is deleted or deactivated.`,
      one(issues.unassigned),
    ),
    counter(
      'fleet_health_ingest_refused_records_total',
      'Records the ingest routes (and direct invocations) refused, by kind: an Alertmanager notification is answered 200 whatever it held, so this is where dropped alerts show; the ingest log names them.',
      INGEST_KINDS.map((kind) => ({ labels: { kind }, value: refused[kind] })),
    ),
    gauge('fleet_health_patrol_reports', 'Completed patrol reports in the last 30 days (as GET /api/patrol/kpis/summary).', one(patrol.total_reports)),
    gauge('fleet_health_patrol_cost_usd', 'LLM cost of patrol runs in the last 30 days, in US dollars.', one(patrol.total_cost_usd)),
    gauge(
      'fleet_health_investigations',
      `Agent investigations in the last ${days} days, by severity (as GET /api/investigations/kpis?days=${days}).`,
      (['critical', 'warning', 'info'] as const).map((severity) => ({ labels: { severity }, value: investigations[`${severity}_count`] })),
    ),
    gauge(
      'fleet_health_investigations_cost_usd',
      `LLM cost of agent investigations in the last ${days} days, in US dollars.`,
      one(investigations.total_cost_usd),
    ),
    ...(usage
      ? [
          gauge(
            'fleet_health_llm_cost_usd',
            `LLM cost of every call in the last ${days} days, in US dollars (as GET /api/llm-usage/summary?days=${days}).`,
            one(usage.totals.cost_usd),
          ),
          gauge(
            'fleet_health_llm_runs',
            `LLM runs (a chat message, patrol scan, investigation or a cluster's AI grouping, however many model calls) in the last ${days} days.`,
            one(usage.totals.runs),
          ),
          gauge('fleet_health_llm_tokens', `LLM tokens in the last ${days} days.`, one(usage.totals.total_tokens)),
          gauge(
            'fleet_health_agent_cost_today_usd',
            'LLM cost of the patrol, investigations and AI grouping this UTC day, in US dollars (their daily budget counts it).',
            one(usage.agent_budget.spent_today_usd),
          ),
          gauge(
            'fleet_health_agent_daily_budget_usd',
            'AGENT_DAILY_BUDGET_USD: past it the patrol, investigations and AI grouping run their rules engines until 00:00 UTC (0: no limit).',
            one(usage.agent_budget.daily_usd),
          ),
        ]
      : []),
  ];
}

export interface ExpositionOptions {
  /** The LLM ledger's totals (fleet_health_llm_*): only a superadmin or the scraper may read them. */
  llmUsage?: boolean;
  /** EXPOSED_CLUSTERS_MAX unless given (tests give a small one). */
  clustersMax?: number;
  /**
   * When the answer goes gzipped, the most it may weigh so (base64-encoded, as a Lambda function answers it): fewer
   * clusters' series are carried until it does. Unset: not measured.
   */
  gzippedBytesMax?: number;
}

/** Shrinkings of the clusters carried before the answer is left to fail as too large (each aims 5% under the bound). */
const FIT_ATTEMPTS = 4;

/**
 * GET /api/metrics' text. The cluster cap counts clusters, but what binds is bytes: 20,000 clusters with 20-character
 * names are 4.9 MB gzipped and base64-encoded, with 40 CJK characters 9 MB, and an answer over Lambda's 6 MB failed
 * every scrape (up=0, every fleet alert rule silent). Measured, an answer over `gzippedBytesMax` is made again with
 * as many clusters as its size says fit (its gzip is kept for the answer: group-handler.ts does not compress it twice).
 */
export async function fleetExposition(now = new Date(), options: ExpositionOptions = {}): Promise<string> {
  const { llmUsage = true, clustersMax = EXPOSED_CLUSTERS_MAX, gzippedBytesMax } = options;
  const inputs = await scrapeInputs(now, llmUsage);
  let exposedMax = clustersMax;
  for (let attempt = 0; ; attempt++) {
    const text = renderExposition(familiesOf(inputs, clustersMax, exposedMax));
    if (gzippedBytesMax === undefined || !mayGzipOver(text, gzippedBytesMax)) return text;
    const bytes = gzippedAnswerBytes(text);
    const exposed = Math.min(exposedMax, inputs.view.scores.length);
    if (bytes <= gzippedBytesMax || exposed === 0 || attempt === FIT_ATTEMPTS) return text;
    exposedMax = Math.floor(exposed * Math.min(0.9, (gzippedBytesMax / bytes) * 0.95));
    log.warn('scrape answer too large gzipped: fewer clusters carried', { bytes, limit: gzippedBytesMax, exposed, next: exposedMax });
  }
}
