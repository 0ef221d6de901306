// Analysis: breaking points (one card per threshold with the clusters past it,
// and every breach in a filterable table), usage charts (health distribution,
// compaction against its threshold, latency, QPS) and upgrades (each active
// cluster's engine version against the versions available).
//
// The usage answer is per cluster, not over time, so its charts are bars
// (components/views/bars.tsx); LineChart draws time series only.
import { createColumnHelper, type SortingFn } from '@tanstack/react-table';
import { type ReactNode, useMemo } from 'react';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import type { Answer } from '../api/types';
import { DataTable, useUrlSorting } from '../components/data-table';
import { Empty, HOW_DATA_ARRIVES, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import { Bars } from '../components/views/bars';
import { Badge, ClusterLink, Count, fmt, matches, SearchFilter, SelectFilter, Stamp, uniqueSorted } from '../components/views/common';
import '../components/views/views.css';
import './analysis.css';
import { count } from '../components/format';
import { metricLabel, withUnit } from '../components/metric-label';

const breakingEp = endpoint<'analysis', 'breaking'>('GET', '/api/analysis/breaking');
const usageEp = endpoint<'analysis', 'usage'>('GET', '/api/analysis/usage');
const upgradesEp = endpoint<'analysis', 'upgrades'>('GET', '/api/analysis/upgrades');

type Breaking = Answer<'analysis', 'breaking'>;
type Usage = Answer<'analysis', 'usage'>;
type Upgrades = Answer<'analysis', 'upgrades'>;

const FILTERS = { q: '', metric: '', severity: '', uq: '', version: '', state: '', upgrade: '' };

/** Cluster names in the breaking cards and usage bars carry no id: found through the answers that do. */
function NameLink({ name, ids }: { name: string; ids: Map<string, string> }) {
  const id = ids.get(name);
  return id ? <ClusterLink id={id} name={name} /> : name;
}

type Breach = Breaking['details'][number];
type UpgradeRow = Upgrades['clusters'][number];

const SEVERITIES = ['critical', 'warning'];
const bySeverity: SortingFn<Breach> = (a, b) => SEVERITIES.indexOf(b.original.severity) - SEVERITIES.indexOf(a.original.severity);
const breach = createColumnHelper<Breach>();
const BREACH_COLUMNS = [
  breach.accessor('cluster_name', {
    header: 'Cluster',
    size: 180,
    sortingFn: 'alphanumeric',
    cell: (c) => <ClusterLink id={c.row.original.cluster_id} name={c.getValue()} />,
  }),
  breach.accessor('customer_name', { header: 'Customer', size: 160, sortingFn: 'text' }),
  breach.accessor('metric', { header: 'Metric', size: 150, sortingFn: 'text', cell: (c) => metricLabel(c.getValue()) }),
  breach.accessor('value', { header: 'Value', size: 120, meta: { numeric: true }, cell: (c) => withUnit(fmt(c.getValue()), c.row.original.unit) }),
  breach.accessor('threshold', { header: 'Threshold', size: 110, meta: { numeric: true }, cell: (c) => withUnit(fmt(c.getValue()), c.row.original.unit) }),
  breach.accessor((d) => (d.threshold ? d.value / d.threshold : 0), {
    id: 'over',
    header: 'Times threshold',
    size: 110,
    meta: { numeric: true },
    cell: (c) => `×${fmt(c.getValue())}`,
  }),
  breach.accessor('severity', { header: 'Severity', size: 100, sortingFn: bySeverity, cell: (c) => <Badge status={c.getValue()} /> }),
];

type Filters = typeof FILTERS;
type SetFilters = (changes: Partial<Record<keyof Filters, string>>) => void;

function BreakingSection({ data, filters, setFilters, ids }: { data: Breaking; filters: Filters; setFilters: SetFilters; ids: Map<string, string> }) {
  const metrics = useMemo(() => uniqueSorted(data.details.map((d) => d.metric)), [data]);
  const severities = useMemo(() => uniqueSorted(data.details.map((d) => d.severity)), [data]);
  const rows = data.details.filter(
    (d) =>
      matches(filters.q, d.cluster_name, d.customer_name) &&
      (!filters.metric || d.metric === filters.metric) &&
      (!filters.severity || d.severity === filters.severity),
  );
  const [sorting, setSorting] = useUrlSorting('', 'bsort');
  const showDetails = (metric: string) => {
    setFilters({ metric: filters.metric === metric ? '' : metric });
    document.getElementById('analysis-details')?.scrollIntoView({ block: 'start' });
  };
  if (data.thresholds.length === 0 && data.details.length === 0) return <Empty>No cluster is past a warning or critical threshold.</Empty>;
  return (
    <>
      <ul className="analysis-cards">
        {data.thresholds.map((t) => (
          <li key={`${t.metric}-${t.threshold}`} className={`card analysis-card${filters.metric === t.metric ? ' selected' : ''}`}>
            <h3>{metricLabel(t.metric)}</h3>
            <p className="analysis-card-count">
              <strong>{count(t.count)}</strong> cluster{t.count === 1 ? '' : 's'} at or past {withUnit(fmt(t.threshold), t.unit)}
            </p>
            {t.clusters.length > 0 && (
              <ul className="analysis-card-list">
                {t.clusters.slice(0, 5).map((c) => (
                  <li key={c.cluster_name}>
                    <span className="analysis-card-name">
                      <NameLink name={c.cluster_name} ids={ids} /> <span className="muted">{c.customer_name}</span>
                    </span>
                    <span className="analysis-card-value">{withUnit(fmt(c.value), t.unit)}</span>
                  </li>
                ))}
              </ul>
            )}
            {t.clusters.length > 5 && <p className="muted analysis-more">and {t.clusters.length - 5} more</p>}
            {t.count > 0 && (
              <button type="button" aria-pressed={filters.metric === t.metric} onClick={() => showDetails(t.metric)}>
                {filters.metric === t.metric ? 'Showing details' : 'Details'}
                <span className="visually-hidden"> of {metricLabel(t.metric)}</span>
              </button>
            )}
          </li>
        ))}
      </ul>

      <h3 id="analysis-details" className="analysis-sub">
        Every breach
      </h3>
      <search className="toolbar" aria-label="Filter breaches">
        <SearchFilter value={filters.q} onChange={(q) => setFilters({ q })} />
        <SelectFilter
          label="Metric"
          value={filters.metric}
          options={metrics.map((m) => ({ value: m, label: metricLabel(m) }))}
          onChange={(v) => setFilters({ metric: v })}
        />
        <SelectFilter label="Severity" value={filters.severity} options={severities} onChange={(v) => setFilters({ severity: v })} />
        {(filters.q || filters.metric || filters.severity) && (
          <button type="button" onClick={() => setFilters({ q: '', metric: '', severity: '' })}>
            Clear filters
          </button>
        )}
      </search>
      <Count shown={rows.length} total={data.details.length} what="breaches" />
      <DataTable
        data={rows}
        columns={BREACH_COLUMNS}
        caption="Clusters past a threshold"
        getRowId={(d) => `${d.cluster_id}-${d.metric}`}
        sorting={sorting}
        onSortingChange={setSorting}
        maxHeight="min(70vh, 640px)"
        empty="No breach matches these filters."
      />
    </>
  );
}

function UsageSection({ data, ids }: { data: Usage; ids: Map<string, string> }) {
  const dist = data.health_distribution;
  const total = dist.healthy + dist.warning + dist.critical;
  const parts = [
    ['healthy', 'Healthy', dist.healthy],
    ['warning', 'Warning', dist.warning],
    ['critical', 'Critical', dist.critical],
  ] as const;
  const link = (name: string) => <NameLink name={name} ids={ids} />;
  return (
    <div className="analysis-usage">
      <figure className="card analysis-dist">
        <figcaption>Health distribution</figcaption>
        <div className="analysis-dist-bar" aria-hidden="true">
          {parts.map(([k, , n]) => n > 0 && <span key={k} className={k} style={{ flexGrow: n }} />)}
        </div>
        <ul className="analysis-dist-legend">
          {parts.map(([k, label, n]) => (
            <li key={k}>
              <span className={`swatch ${k}`} aria-hidden="true" /> {label} <strong>{n}</strong>{' '}
              <span className="muted">({total ? Math.round((n / total) * 100) : 0}%)</span>
            </li>
          ))}
        </ul>
      </figure>
      <div className="card">
        {data.compaction_bars.length ? (
          <Bars
            title={`Compaction score, the ${count(data.compaction_bars.length)} highest (the line marks the threshold)`}
            items={data.compaction_bars.map((b) => ({
              key: b.cluster_name,
              label: link(b.cluster_name),
              values: [{ name: 'compaction', value: b.value }],
              threshold: b.threshold,
            }))}
          />
        ) : (
          <Empty>No compaction data.</Empty>
        )}
      </div>
      <div className="card">
        {data.latency_trend.length ? (
          <Bars
            title={`Query latency, the ${count(data.latency_trend.length)} highest by average: maximum (light) and average (dark)`}
            unit=" ms"
            items={data.latency_trend.map((b) => ({
              key: b.cluster_name,
              label: link(b.cluster_name),
              values: [
                { name: 'max', value: b.max_latency },
                { name: 'avg', value: b.avg_latency },
              ],
            }))}
          />
        ) : (
          <Empty>No latency data.</Empty>
        )}
      </div>
      <div className="card">
        {data.qps_bars.length ? (
          <Bars
            title={`Queries per second, the ${count(data.qps_bars.length)} highest`}
            items={data.qps_bars.map((b) => ({ key: b.cluster_name, label: link(b.cluster_name), values: [{ name: 'qps', value: b.value }] }))}
          />
        ) : (
          <Empty>No QPS data.</Empty>
        )}
      </div>
    </div>
  );
}

function UpgradesSection({ data, filters, setFilters }: { data: Upgrades; filters: Filters; setFilters: SetFilters }) {
  // The service orders versions (newest first, semantically: 3.10.0 before 3.10.0-rc1 before 3.9.2), and the
  // console keeps its order rather than compare version texts a second way.
  const available = data.available_versions;
  const latest = available[0];
  /** How many available versions are newer than `v`: its place in the service's order. */
  const newerCount = useMemo(() => {
    const place = new Map(available.map((v, i) => [v, i]));
    return (v: string) => place.get(v) ?? 0;
  }, [available]);
  const running = useMemo(() => {
    const runs = new Set(data.clusters.map((c) => c.engine_version));
    return [...available.filter((v) => runs.has(v)), ...uniqueSorted([...runs].filter((v) => !available.includes(v)))];
  }, [data, available]);
  const states = useMemo(() => uniqueSorted(data.clusters.map((c) => c.resource_state)), [data]);
  const rows = data.clusters.filter(
    (c) =>
      matches(filters.uq, c.cluster_name, c.customer_name) &&
      (!filters.version || c.engine_version === filters.version) &&
      (!filters.state || c.resource_state === filters.state) &&
      (!filters.upgrade || (filters.upgrade === 'behind' ? newerCount(c.engine_version) > 0 : newerCount(c.engine_version) === 0)),
  );
  const behindCount = data.clusters.filter((c) => newerCount(c.engine_version) > 0).length;
  const [sorting, setSorting] = useUrlSorting('', 'usort');
  const columns = useMemo(() => {
    // Ascending: oldest first (the most versions newer than it).
    const byVersion: SortingFn<UpgradeRow> = (a, b) => newerCount(b.original.engine_version) - newerCount(a.original.engine_version);
    const up = createColumnHelper<UpgradeRow>();
    return [
      up.accessor('cluster_name', {
        header: 'Cluster',
        size: 180,
        sortingFn: 'alphanumeric',
        cell: (c) => <ClusterLink id={c.row.original.cluster_id} name={c.getValue()} />,
      }),
      up.accessor('customer_name', { header: 'Customer', size: 150, sortingFn: 'text' }),
      up.accessor('cluster_type', { header: 'Type', size: 110, sortingFn: 'text' }),
      up.accessor('region', { header: 'Region', size: 200, sortingFn: 'text', cell: (c) => <span title={c.getValue()}>{c.getValue()}</span> }),
      up.accessor('engine_version', { header: 'Version', size: 90, sortingFn: byVersion }),
      up.accessor((c) => newerCount(c.engine_version), {
        id: 'upgrade',
        header: 'Upgrade',
        size: 220,
        cell: (c) =>
          c.getValue() > 0 ? (
            <span className="analysis-behind">
              to {latest} ({c.getValue()} newer version{c.getValue() === 1 ? '' : 's'})
            </span>
          ) : (
            <span className="muted">on the latest</span>
          ),
      }),
      up.accessor('resource_state', { header: 'State', size: 100, sortingFn: 'text' }),
      up.accessor('node_count', { header: 'Nodes', size: 70, meta: { numeric: true } }),
    ];
  }, [newerCount, latest]);
  return (
    <>
      <div className="analysis-versions">
        <span className="muted">Available versions:</span>
        {available.length ? (
          <ul>
            {available.map((v) => (
              <li key={v} className={v === latest ? 'latest' : undefined}>
                {v}
                {v === latest && <span className="muted"> (latest)</span>}
              </li>
            ))}
          </ul>
        ) : (
          <span> none listed</span>
        )}
      </div>
      <p className="view-note">
        {count(behindCount)} of {count(data.clusters.length)} active clusters run an older version than one available.
      </p>
      <search className="toolbar" aria-label="Filter upgrades">
        <SearchFilter value={filters.uq} onChange={(uq) => setFilters({ uq })} />
        <SelectFilter label="Running version" value={filters.version} options={running} onChange={(v) => setFilters({ version: v })} />
        <SelectFilter label="State" value={filters.state} options={states} onChange={(v) => setFilters({ state: v })} />
        <SelectFilter
          label="Upgrade"
          value={filters.upgrade}
          options={[
            { value: 'behind', label: 'Newer version available' },
            { value: 'latest', label: 'On the latest' },
          ]}
          onChange={(v) => setFilters({ upgrade: v })}
        />
        {(filters.uq || filters.version || filters.state || filters.upgrade) && (
          <button type="button" onClick={() => setFilters({ uq: '', version: '', state: '', upgrade: '' })}>
            Clear filters
          </button>
        )}
      </search>
      <Count shown={rows.length} total={data.clusters.length} what="clusters" />
      <DataTable
        data={rows}
        columns={columns}
        caption="Active clusters and their engine versions"
        getRowId={(c) => c.cluster_id}
        sorting={sorting}
        onSortingChange={setSorting}
        maxHeight="min(70vh, 640px)"
        empty="No cluster matches these filters."
      />
    </>
  );
}

function Section<T>({
  id,
  title,
  query,
  what,
  children,
}: {
  id: string;
  title: string;
  query: { isPending: boolean; isError: boolean; error: unknown; data: (T & { generated_at?: string; source?: string }) | undefined; refetch: () => unknown };
  what: string;
  children: (data: T) => ReactNode;
}) {
  return (
    <section className="view-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {query.isPending ? (
        <Loading what={what} />
      ) : query.isError ? (
        <Problem error={query.error} retry={() => void query.refetch()} />
      ) : (
        <>
          <Stamp at={query.data?.generated_at} source={query.data?.source} />
          {query.data && children(query.data)}
        </>
      )}
    </section>
  );
}

export default function AnalysisPage() {
  const breaking = useApi(breakingEp);
  const usage = useApi(usageEp);
  const upgrades = useApi(upgradesEp);
  const [values, update] = useUrlState(FILTERS);
  const filters = values as Filters;
  const setFilters = update as SetFilters;

  const ids = useMemo(() => {
    const m = new Map<string, string>();
    for (const c of upgrades.data?.clusters ?? []) m.set(c.cluster_name, c.cluster_id);
    for (const d of breaking.data?.details ?? []) m.set(d.cluster_name, d.cluster_id);
    return m;
  }, [upgrades.data, breaking.data]);

  const nothing = upgrades.data?.clusters.length === 0 && breaking.data?.details.length === 0;

  return (
    <div className="analysis-page">
      <h1>Analysis</h1>
      <nav aria-label="On this page" className="analysis-nav">
        <a href="#analysis-breaking">Breaking points</a>
        <a href="#analysis-usage">Usage</a>
        <a href="#analysis-upgrades">Upgrades</a>
      </nav>
      {nothing && <Empty>No clusters yet. {HOW_DATA_ARRIVES}</Empty>}
      <Section<Breaking> id="analysis-breaking" title="Breaking points" query={breaking} what="breaking points">
        {(data) => <BreakingSection data={data} filters={filters} setFilters={setFilters} ids={ids} />}
      </Section>
      <Section<Usage> id="analysis-usage" title="Usage" query={usage} what="usage">
        {(data) => <UsageSection data={data} ids={ids} />}
      </Section>
      <Section<Upgrades> id="analysis-upgrades" title="Upgrades" query={upgrades} what="upgrades">
        {(data) => <UpgradesSection data={data} filters={filters} setFilters={setFilters} />}
      </Section>
    </div>
  );
}
