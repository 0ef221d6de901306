// One cluster: its inventory, the unified and health scores with each dimension
// against its green/yellow/red thresholds, the risk snapshot (signals and
// suggested actions), its open and past alert issues and AI issues, what the agent's
// investigations found on it, and a chart per metric over the last 14 days (daily
// average, min and max). Read-only: every role sees the same page. Each section loads
// and fails on its own.
import type { UseQueryResult } from '@tanstack/react-query';
import { useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { duration } from '../components/issues/format';
import { ApiProblem, endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import type { Answer } from '../api/types';
import { LineChart, type LineSeries } from '../components/line-chart';
import { useListUrl } from '../components/list-link';
import { Empty, HOW_DATA_ARRIVES, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import { When } from '../components/time';
import { Badge, fmt, fmtScore, Stamp, TopRisk } from '../components/views/common';
import { count } from '../components/format';
import { metricLabel } from '../components/metric-label';
import '../components/views/views.css';
import './cluster.css';
import { StaleBadge, staleText } from '../components/stale-badge';
import { ScrollRegion } from '../components/scroll-region';
import { InvestigationTable } from '../components/ai/investigation-table';
import { isGone } from '../../../../shared/fleet/resource-state.js';

const clusterEp = endpoint<'clusters', 'get'>('GET', '/api/clusters/{cluster_id}');
const metricsEp = endpoint<'clusters', 'metrics'>('GET', '/api/clusters/{cluster_id}/metrics');
const fleetScoresEp = endpoint<'fleet', 'scores'>('GET', '/api/fleet/scores');
const healthScoresEp = endpoint<'health', 'scores'>('GET', '/api/health/scores');
const rulesEp = endpoint<'fleet', 'rules'>('GET', '/api/fleet/rules');
const riskEp = endpoint<'risk', 'snapshots'>('GET', '/api/risk/snapshots');
const issuesEp = endpoint<'issues', 'list'>('GET', '/api/issues');
const aiIssuesEp = endpoint<'ai-issues', 'list'>('GET', '/api/ai-issues');
const investigationsEp = endpoint<'investigations', 'list'>('GET', '/api/investigations');

type Inventory = Answer<'clusters', 'get'>['cluster'];
type RuleDimension = Answer<'fleet', 'rules'>['dimensions'][number];
/** What the issue tables show of an alert issue or an AI issue (the AI list answers the same fields, and more). */
type IssueRow = Pick<
  Answer<'issues', 'list'>['issues'][number],
  'issue_id' | 'issue_name' | 'cluster_id' | 'status' | 'severity' | 'alert_count' | 'first_seen' | 'last_seen' | 'duration_minutes' | 'triage_status'
>;
type Investigation = Answer<'investigations', 'list'>['investigations'][number];
type MetricSeries = Answer<'clusters', 'metrics'>['metrics'][number];

const CHART_DAYS = 14;
const WINDOWS = ['7', '30', '90', '365'];
const FILTERS = { issue_days: '30', ai_issue_days: '30', investigation_days: '30' };
/** A window as the URL gives it, if it is one the select offers (an edited or old link: the default), so the select and the request agree. */
const windowOf = (filters: Record<keyof typeof FILTERS, string | string[]>, name: keyof typeof FILTERS) => {
  const value = String(filters[name]);
  return WINDOWS.includes(value) ? value : FILTERS[name];
};

function Section({ title, id, children }: { title: string; id: string; children: React.ReactNode }) {
  return (
    <section className="view-section cluster-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

function InventoryFacts({ c }: { c: Inventory }) {
  const facts: [string, React.ReactNode][] = [
    ['Cluster id', <code key="id">{c.cluster_id}</code>],
    ['Customer', c.customer_name],
    ['Tier', c.customer_tier],
    ['Account', `${c.account_name} (${c.account_id})`],
    [
      'Contact',
      <a key="mail" href={`mailto:${c.email}`}>
        {c.email}
      </a>,
    ],
    ['Type', c.cluster_type],
    ['Region', c.region],
    ['Engine version', c.engine_version],
    ['State', c.resource_state],
    ['Nodes', count(c.node_count)],
    ['First seen', <When key="created" iso={c.created_at} />],
    ['Inventory updated', <When key="updated" iso={c.updated_at} />],
  ];
  return (
    <dl className="facts cluster-facts">
      {facts.map(([k, v]) => (
        <div key={k} className="cluster-fact">
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** "green 70 · yellow 85 · red 95 (higher is worse)" for one rule dimension. */
function Thresholds({ rule }: { rule: RuleDimension | undefined }) {
  if (!rule) return <span className="muted">–</span>;
  return (
    <>
      <span className="th-green">{fmt(rule.green)}</span> · <span className="th-yellow">{fmt(rule.yellow)}</span> ·{' '}
      <span className="th-red">{fmt(rule.red)}</span> <span className="muted cluster-direction">({rule.inverted ? 'lower is worse' : 'higher is worse'})</span>
    </>
  );
}

/** Where a value stands against a dimension's thresholds (the engine's status when it gives one). */
function standing(value: number, rule: RuleDimension | undefined): string {
  if (!rule) return '';
  const past = (t: number) => (rule.inverted ? value <= t : value >= t);
  return past(rule.red) ? 'critical' : past(rule.yellow) ? 'warning' : 'healthy';
}

interface DimensionRow {
  name: string;
  value: number;
  score: number;
  weight: number;
  status: string;
  rule: RuleDimension | undefined;
}

function DimensionTable({ caption, rows }: { caption: string; rows: DimensionRow[] }) {
  if (rows.length === 0) return <p className="muted">No dimension was scored (no metrics in the lookback window).</p>;
  return (
    <ScrollRegion label={caption}>
      <table className="cluster-dimensions">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Dimension</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Value
            </th>
            <th scope="col" className="num">
              Score
            </th>
            <th scope="col" className="num">
              Weight
            </th>
            <th scope="col">
              Thresholds<span className="visually-hidden"> (green · yellow · red)</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.name}>
              <th scope="row">{d.name}</th>
              <td>{d.status ? <Badge status={d.status} /> : '–'}</td>
              <td className="num">{fmt(d.value)}</td>
              <td className="num">{fmtScore(d.score)}</td>
              <td className="num">{fmt(d.weight)}</td>
              <td className="cluster-thresholds">
                <Thresholds rule={d.rule} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function useRules() {
  const rules = useApi(rulesEp, {}, { staleTime: 60_000 });
  const byKey = useMemo(() => new Map((rules.data?.dimensions ?? []).map((d) => [d.metric_key, d])), [rules.data]);
  const byName = useMemo(() => new Map((rules.data?.dimensions ?? []).map((d) => [d.display_name, d])), [rules.data]);
  return { rules, byKey, byName };
}

/** The view answers narrowed to this cluster's items (the whole fleet's weigh megabytes at 10,000 clusters). */
const oneCluster = (clusterId: string) => ({ query: { cluster_id: clusterId } });

function Scores({ clusterId }: { clusterId: string }) {
  const fleet = useApi(fleetScoresEp, oneCluster(clusterId));
  const health = useApi(healthScoresEp, oneCluster(clusterId));
  const { byKey, byName } = useRules();
  const unified = fleet.data?.scores.find((s) => s.cluster_id === clusterId);
  const metricsOnly = health.data?.scores.find((s) => s.cluster_id === clusterId);
  return (
    <div className="grid-2 cluster-scores">
      <article className="card" aria-labelledby="unified-h">
        <h3 id="unified-h">Unified score</h3>
        {fleet.isPending ? (
          <Loading what="the unified score" />
        ) : fleet.isError ? (
          <Problem error={fleet.error} retry={() => void fleet.refetch()} />
        ) : !unified ? (
          <Empty>This cluster has no unified score yet; scores follow at the next refresh.</Empty>
        ) : (
          <>
            <ScoreHead score={unified.overall_score} classification={unified.classification} />
            <ul className="cluster-subscores">
              <li>
                Metrics <strong>{fmtScore(unified.metrics_score)}</strong>
              </li>
              <li>
                Alerts <strong>{fmtScore(unified.alerts_score)}</strong> ({count(unified.firing_alert_count_7d)} fired in the last 7 days)
              </li>
              <li>
                Tier-adjusted <strong>{fmtScore(unified.tier_adjusted_score)}</strong>
              </li>
              <li>
                Top risk{' '}
                <strong>
                  <TopRisk text={unified.top_risk} />
                </strong>
              </li>
            </ul>
            <WhyAndWhat reasons={unified.risk_reasons} actions={unified.suggested_actions} />
            <DimensionTable caption="Unified score dimensions" rows={unified.dimension_scores.map((d) => ({ ...d, rule: byKey.get(d.metric_key) }))} />
            <Stamp at={fleet.data.generated_at} source={fleet.data.source} />
          </>
        )}
      </article>
      <article className="card" aria-labelledby="health-h">
        <h3 id="health-h">Health score</h3>
        {health.isPending ? (
          <Loading what="the health score" />
        ) : health.isError ? (
          <Problem error={health.error} retry={() => void health.refetch()} />
        ) : !metricsOnly ? (
          <Empty>This cluster has no health score yet; scores follow at the next refresh.</Empty>
        ) : (
          <>
            <ScoreHead score={metricsOnly.overall_score} classification={metricsOnly.classification} />
            <ul className="cluster-subscores">
              <li>
                Risk level <strong>{metricsOnly.risk_level}</strong>
              </li>
              <li>
                Top risk{' '}
                <strong>
                  <TopRisk text={metricsOnly.top_risk} />
                </strong>
              </li>
            </ul>
            <DimensionTable
              caption="Health score dimensions"
              rows={metricsOnly.dimension_scores.map((d) => {
                const rule = byName.get(d.name);
                return { ...d, rule, status: /status (\w+)$/.exec(d.description)?.[1] ?? standing(d.value, rule) };
              })}
            />
            <Stamp at={health.data.generated_at} source={health.data.source} />
          </>
        )}
      </article>
    </div>
  );
}

/** Why the score is what it is, and what the health rules say to do about it (nothing when both are empty). */
function WhyAndWhat({ reasons, actions }: { reasons: string[]; actions: string[] }) {
  if (!reasons.length && !actions.length) return null;
  return (
    <div className="cluster-why">
      {reasons.length > 0 && (
        <>
          <h4>Why</h4>
          <ul>
            {[...new Set(reasons)].map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
        </>
      )}
      {actions.length > 0 && (
        <>
          <h4>What to do</h4>
          <ul>
            {[...new Set(actions)].map((a) => (
              <li key={a}>{a}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/** Under the page title, when the cluster's metrics stopped arriving: its scores stand on old data. */
function Staleness({ clusterId }: { clusterId: string }) {
  const fleet = useApi(fleetScoresEp, oneCluster(clusterId));
  const unified = fleet.data?.scores.find((s) => s.cluster_id === clusterId);
  if (!unified?.metrics_stale) return null;
  return (
    <p className="cluster-stale">
      <StaleBadge stale brief lastMetricAt={unified.last_metric_at} /> Its metrics stopped arriving: {staleText(unified.last_metric_at)}. The scores below stand
      on older data.
    </p>
  );
}

function ScoreHead({ score, classification }: { score: number; classification: string }) {
  return (
    <p className="cluster-score">
      <span className={`cluster-score-value ${classification}`}>{fmtScore(score)}</span>
      <span className="muted"> / 100 </span>
      <Badge status={classification} />
    </p>
  );
}

function Risk({ clusterId }: { clusterId: string }) {
  const risk = useApi(riskEp, oneCluster(clusterId));
  if (risk.isPending) return <Loading what="the risk snapshot" />;
  if (risk.isError) return <Problem error={risk.error} retry={() => void risk.refetch()} />;
  const snap = risk.data.clusters.find((s) => s.cluster_id === clusterId);
  if (!snap) return <Empty>This cluster has no risk snapshot yet. {HOW_DATA_ARRIVES}</Empty>;
  const metrics = Object.entries(snap.metrics);
  return (
    <div className="card">
      <p className="cluster-score">
        Risk level <Badge status={snap.risk_level} /> <span className="muted">· score {fmtScore(snap.overall_score)}</span>
      </p>
      <div className="grid-2">
        <div>
          <h3>Signals</h3>
          {snap.risk_signals.length ? (
            <ul>
              {snap.risk_signals.map((s) => (
                <li key={s}>{s}</li>
              ))}
            </ul>
          ) : (
            <p className="muted">No risk signal: every metric is within its rules.</p>
          )}
        </div>
        <div>
          <h3>Suggested actions</h3>
          {snap.suggested_actions.length ? (
            <ul>
              {snap.suggested_actions.map((a) => (
                <li key={a}>{a}</li>
              ))}
            </ul>
          ) : (
            <p className="muted">Nothing to do.</p>
          )}
        </div>
      </div>
      {metrics.length > 0 && (
        <ul className="cluster-risk-metrics" aria-label="Risk metrics">
          {metrics.map(([key, m]) => (
            <li key={key} className={`tile ${m.status}`}>
              <div className="value">{fmt(m.value)}</div>
              <div className="label">
                {metricLabel(key, { unit: true })} <Badge status={m.status} />
              </div>
            </li>
          ))}
        </ul>
      )}
      <Stamp at={risk.data.generated_at} source={risk.data.source} />
    </div>
  );
}

function IssueTable({ caption, issues, base }: { caption: string; issues: IssueRow[]; base: '/issues' | '/ai-issues' }) {
  return (
    <ScrollRegion label={caption}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Issue</th>
            <th scope="col">Severity</th>
            <th scope="col" className="num">
              Alerts
            </th>
            <th scope="col">First seen (UTC)</th>
            <th scope="col">Last seen (UTC)</th>
            <th scope="col" className="num">
              Duration
            </th>
            <th scope="col">Triage</th>
          </tr>
        </thead>
        <tbody>
          {issues.map((i) => (
            <tr key={i.issue_id}>
              <th scope="row">
                <Link to={`${base}/${encodeURIComponent(i.issue_id)}`}>{i.issue_name}</Link>
              </th>
              <td>
                <Badge status={i.severity} />
              </td>
              <td className="num">{count(i.alert_count)}</td>
              <td>
                <When iso={i.first_seen} label={false} />
              </td>
              <td>
                <When iso={i.last_seen} label={false} />
              </td>
              <td className="num">{duration(i.duration_minutes)}</td>
              <td>{i.triage_status || <span className="muted">–</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

/** A window of days to look back over, kept in the URL under `name`. */
function WindowSelect({ label, name }: { label: string; name: keyof typeof FILTERS }) {
  const [filters, setFilters] = useUrlState(FILTERS);
  return (
    <label>
      {label}
      <select value={windowOf(filters, name)} onChange={(e) => setFilters({ [name]: e.target.value })}>
        {WINDOWS.map((d) => (
          <option key={d} value={d}>
            {d} days
          </option>
        ))}
      </select>
    </label>
  );
}

// Asked for by the cluster's id (beyond the contract): names are not unique (two customers may each
// have a `prod-1`), and issues keep the names they were stored under after a rename. The link to the
// list names the cluster and its customer, the filters that page offers. Alert issues and AI issues
// take the same query (spec §4), so one section shows either. Open and past issues are asked for
// apart: the list orders by the latest alert's start, so one page of both could leave out an issue
// firing for weeks behind a hundred newer resolved ones, and the page would say none is open.
function Issues({ cluster, ai = false }: { cluster: Inventory; ai?: boolean }) {
  const [filters] = useUrlState(FILTERS);
  const days = windowOf(filters, ai ? 'ai_issue_days' : 'issue_days');
  const request = (status: 'Ongoing' | 'Resolved') => ({ query: { cluster_id: cluster.cluster_id, days: Number(days), status, page_size: 100 } });
  // Every hook is always called (hooks keep their order); those not shown ask nothing.
  type Part = UseQueryResult<{ issues: IssueRow[]; total: number }, ApiProblem>;
  const alertIssues: [Part, Part] = [useApi(issuesEp, request('Ongoing'), { enabled: !ai }), useApi(issuesEp, request('Resolved'), { enabled: !ai })];
  const aiIssues: [Part, Part] = [useApi(aiIssuesEp, request('Ongoing'), { enabled: ai }), useApi(aiIssuesEp, request('Resolved'), { enabled: ai })];
  const [open, past] = ai ? aiIssues : alertIssues;
  const noun = ai ? 'AI issue' : 'alert issue';
  const base = ai ? '/ai-issues' : '/issues';
  const listLink = (status?: string) =>
    `${base}?${new URLSearchParams({ cluster: cluster.cluster_name, customer: cluster.customer_name, days, ...(status && { status }) })}`;
  const failed = [open, past].find((part) => part.isError);
  return (
    <>
      <div className="toolbar">
        <WindowSelect label={ai ? 'AI issues seen in the last' : 'Issues seen in the last'} name={ai ? 'ai_issue_days' : 'issue_days'} />
        <Link to={listLink()}>Open in the {ai ? 'AI issues' : 'issues'} list</Link>
      </div>
      {failed ? (
        <Problem error={failed.error} retry={() => void Promise.all([open.refetch(), past.refetch()])} />
      ) : !open.data || !past.data ? (
        <Loading what={`${noun}s`} />
      ) : open.data.total + past.data.total === 0 ? (
        <Empty>
          No {noun} for this cluster in the last {days} days.
        </Empty>
      ) : (
        <>
          <IssuePart title="Open" caption={`Open ${noun}s`} data={open.data} base={base} none={`No open ${noun}.`} list={listLink('Ongoing')} />
          <IssuePart
            title="Past"
            caption={`Past ${noun}s`}
            data={past.data}
            base={base}
            none={`No resolved ${noun} in this window.`}
            list={listLink('Resolved')}
          />
        </>
      )}
    </>
  );
}

/** One part of a cluster's issues (open or past): its count, its first page, and where the rest are. */
function IssuePart({
  title,
  caption,
  data,
  base,
  none,
  list,
}: {
  title: string;
  caption: string;
  data: { issues: IssueRow[]; total: number };
  base: '/issues' | '/ai-issues';
  none: string;
  list: string;
}) {
  return (
    <>
      <h3>
        {title} ({count(data.total)})
      </h3>
      {data.issues.length ? <IssueTable caption={caption} issues={data.issues} base={base} /> : <p className="muted">{none}</p>}
      {data.total > data.issues.length && (
        <p className="muted">
          Showing the latest {count(data.issues.length)} of {count(data.total)}; <Link to={list}>the list has them all</Link>.
        </p>
      )}
    </>
  );
}

/** What the agent's investigations of this cluster found (asked for by the cluster's id), newest first. */
function Investigations({ cluster }: { cluster: Inventory }) {
  const [filters] = useUrlState(FILTERS);
  const days = windowOf(filters, 'investigation_days');
  const list = useApi(investigationsEp, { query: { days: Number(days), cluster_id: cluster.cluster_id, page_size: 100 } });
  const rows: Investigation[] = list.data?.investigations ?? [];
  const more = (list.data?.total ?? 0) > rows.length;
  return (
    <>
      <div className="toolbar">
        <WindowSelect label="Investigations in the last" name="investigation_days" />
      </div>
      {list.isPending ? (
        <Loading what="investigations" />
      ) : list.isError ? (
        <Problem error={list.error} retry={() => void list.refetch()} />
      ) : rows.length === 0 ? (
        <Empty>No investigation of this cluster in the last {days} days. The agent investigates a cluster when it meets the health rules' AI trigger.</Empty>
      ) : (
        <>
          <InvestigationTable rows={rows} label="Investigations of this cluster" caption="Investigations of this cluster, newest first" ofOneCluster />
          {more && (
            <p className="muted">
              Showing the latest {count(rows.length)} of {count(list.data?.total ?? 0)}.
            </p>
          )}
        </>
      )}
    </>
  );
}

const daySeconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

function MetricChart({ dates, metric, rule }: { dates: string[]; metric: MetricSeries; rule: RuleDimension | undefined }) {
  const x = useMemo(() => dates.map(daySeconds), [dates]);
  const series = useMemo<LineSeries[]>(() => {
    const byDay = new Map(metric.points.map((p) => [p.day, p]));
    const pick = (f: 'avg' | 'min' | 'max') => dates.map((d) => byDay.get(d)?.[f] ?? null);
    return [
      { label: 'Daily average', values: pick('avg') },
      { label: 'Daily max', values: pick('max'), color: '#d9480f' },
      { label: 'Daily min', values: pick('min'), color: '#2b8a3e' },
    ];
  }, [dates, metric]);
  const title = rule ? `${rule.display_name} (${metric.metric_key})` : metricLabel(metric.metric_key, { unit: true });
  const summary = useMemo(() => {
    const last = metric.points.at(-1);
    if (!last) return 'No samples.';
    const low = Math.min(...metric.points.map((p) => p.min));
    const high = Math.max(...metric.points.map((p) => p.max));
    return `Latest day (${last.day}): average ${fmt(last.avg)}, last ${fmt(last.last)}. ${count(dates.length)}-day range ${fmt(low)} to ${fmt(high)}, ${count(metric.points.length)} days with samples.`;
  }, [metric, dates]);
  return (
    <div className="card cluster-chart">
      <LineChart title={title} x={x} series={series} height={170} summary={summary} />
      {rule && (
        <p className="muted cluster-chart-rule">
          Thresholds: <Thresholds rule={rule} />
        </p>
      )}
    </div>
  );
}

function Charts({ clusterId }: { clusterId: string }) {
  const metrics = useApi(metricsEp, { params: { cluster_id: clusterId }, query: { days: CHART_DAYS } });
  const { byKey } = useRules();
  if (metrics.isPending) return <Loading what="metric history" />;
  if (metrics.isError) return <Problem error={metrics.error} retry={() => void metrics.refetch()} />;
  if (metrics.data.metrics.length === 0)
    return (
      <Empty>
        No metric sample in the last {CHART_DAYS} days. {HOW_DATA_ARRIVES}
      </Empty>
    );
  return (
    <>
      <p className="muted">
        Daily average, minimum and maximum per UTC day, {metrics.data.dates[0]} to {metrics.data.dates.at(-1)}. Days without samples are gaps.
      </p>
      <div className="cluster-charts">
        {metrics.data.metrics.map((m) => (
          <MetricChart key={m.metric_key} dates={metrics.data.dates} metric={m} rule={byKey.get(m.metric_key)} />
        ))}
      </div>
    </>
  );
}

export default function ClusterPage() {
  const { clusterId = '' } = useParams();
  const cluster = useApi(clusterEp, { params: { cluster_id: clusterId } }, { retry: (n, e) => !(e instanceof ApiProblem && e.status === 404) && n < 2 });
  const fleet = useListUrl('/');

  if (cluster.isPending) return <Loading what="the cluster" />;
  if (cluster.isError) {
    return (
      <>
        <h1>{cluster.error.status === 404 ? 'Cluster not found' : 'Cluster'}</h1>
        <Problem error={cluster.error} retry={cluster.error.status === 404 ? undefined : () => void cluster.refetch()} />
        <p>
          <Link to={fleet}>Back to the fleet</Link>
        </p>
      </>
    );
  }
  const c = cluster.data.cluster;
  // Out of the fleet by its state: no view scores or counts it, so its scores and risk are not asked for.
  const gone = isGone(c);
  const left = <Empty>Not scored: it has left the fleet (state {c.resource_state}), and no view counts it.</Empty>;
  return (
    <div className="cluster-page">
      <nav aria-label="Breadcrumb" className="muted cluster-crumbs">
        <Link to={fleet}>Fleet</Link> › {c.cluster_name}
      </nav>
      <header className="view-head">
        <h1>{c.cluster_name}</h1>
        <p className="muted">
          {c.customer_name} · tier {c.customer_tier} · {c.cluster_type} · {c.region}
        </p>
        {gone ? (
          <p className="cluster-stale">This cluster has left the fleet: its state is {c.resource_state}. Its history stays below.</p>
        ) : (
          <Staleness clusterId={c.cluster_id} />
        )}
      </header>
      <Section title="Inventory" id="inventory-h">
        <div className="card">
          <InventoryFacts c={c} />
        </div>
      </Section>
      <Section title="Scores" id="scores-h">
        {gone ? left : <Scores clusterId={c.cluster_id} />}
      </Section>
      <Section title="Risk snapshot" id="risk-h">
        {gone ? left : <Risk clusterId={c.cluster_id} />}
      </Section>
      <Section title="Alert issues" id="issues-h">
        <Issues cluster={c} />
      </Section>
      <Section title="AI issues" id="ai-issues-h">
        <Issues cluster={c} ai />
      </Section>
      <Section title="Investigations" id="investigations-h">
        <Investigations cluster={c} />
      </Section>
      <Section title={`Metrics, last ${CHART_DAYS} days`} id="metrics-h">
        <Charts clusterId={c.cluster_id} />
      </Section>
    </div>
  );
}
