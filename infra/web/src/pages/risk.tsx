// Risk: each cluster's risk snapshot (level, the signals that set it, suggested
// actions, and every metric's value and status against the risk rules), and the
// rules table those statuses come from.
import { createColumnHelper, type SortingFn } from '@tanstack/react-table';
import { useMemo } from 'react';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { live } from '../api/live';
import { Updated } from '../components/updated';
import type { Answer } from '../api/types';
import { DataTable, useUrlSorting } from '../components/data-table';
import { Empty, HOW_DATA_ARRIVES, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import { ScrollRegion } from '../components/scroll-region';
import { Badge, ClusterLink, Count, fmt, fmtScore, knownOption, matches, SearchFilter, SelectFilter, Stamp } from '../components/views/common';
import { metricLabel } from '../components/metric-label';
import { capitalised } from '../components/format';
import type { MetricKey } from '../../../../shared/fleet/records.js';
import '../components/views/views.css';
import './risk.css';

const snapshotsEp = endpoint<'risk', 'snapshots'>('GET', '/api/risk/snapshots');
const rulesEp = endpoint<'risk', 'rulesTable'>('GET', '/api/risk/rules-table');

type Rule = Answer<'risk', 'rulesTable'>['rules'][number];
type Snapshot = Answer<'risk', 'snapshots'>['clusters'][number];

const FILTERS = { q: '', level: '', metric: '' };
const LEVELS = ['Critical', 'Warning', 'Healthy'];
/** The contract's metric keys, in its order; any other key the answer carries follows. */
const METRIC_KEYS: readonly string[] = [
  'compaction_score',
  'query_errors_7d',
  'disk_used_pct',
  'memory_pct',
  'peak_jvm_heap_gb',
  'error_rate_pct',
  'qps',
  'slow_queries_7d',
] satisfies readonly MetricKey[];

// Worst first on the first click (a text column sorts ascending first), as the fleet page's class column.
const byLevel: SortingFn<Snapshot> = (a, b) => LEVELS.indexOf(a.original.risk_level) - LEVELS.indexOf(b.original.risk_level);
const List = ({ items }: { items: string[] }) =>
  items.length ? (
    <ul className="plain">
      {items.map((i) => (
        <li key={i}>{i}</li>
      ))}
    </ul>
  ) : (
    <span className="muted">none</span>
  );

const snap = createColumnHelper<Snapshot>();
function snapshotColumns(metricKeys: string[]) {
  return [
    snap.accessor('cluster_name', {
      header: 'Cluster',
      size: 170,
      sortingFn: 'alphanumeric',
      meta: { className: 'risk-name' },
      cell: (c) => <ClusterLink id={c.row.original.cluster_id} name={c.getValue()} />,
    }),
    snap.accessor('customer_name', { header: 'Customer', size: 140, sortingFn: 'text' }),
    snap.accessor('risk_level', { header: 'Risk level', size: 95, sortingFn: byLevel, cell: (c) => <Badge status={c.getValue()} /> }),
    snap.accessor('overall_score', { header: 'Score', size: 70, sortDescFirst: false, meta: { numeric: true }, cell: (c) => fmtScore(c.getValue()) }),
    snap.accessor((c) => c.risk_signals.length, {
      id: 'signals',
      header: 'Signals',
      size: 280,
      meta: { className: 'wrap-cell' },
      cell: (c) => <List items={c.row.original.risk_signals} />,
    }),
    snap.accessor((c) => c.suggested_actions.length, {
      id: 'actions',
      header: 'Suggested actions',
      size: 300,
      enableSorting: false,
      meta: { className: 'wrap-cell' },
      cell: (c) => <List items={c.row.original.suggested_actions} />,
    }),
    ...metricKeys.map((k) =>
      snap.accessor((c) => c.metrics[k]?.value ?? null, {
        id: k,
        // The cells are bare numbers, so the header names the unit: "Disk used (%)".
        header: metricLabel(k, { unit: true }),
        // Wide enough for the shipped metrics' longest word ("Compaction") beside the sort mark.
        size: 120,
        sortUndefined: 'last',
        meta: { numeric: true },
        cell: (c) => {
          const m = c.row.original.metrics[k];
          if (!m) return '–';
          return (
            <span className={`risk-metric ${m.status}`}>
              {fmt(m.value)}
              {m.status !== 'healthy' && <span className="risk-status"> {m.status}</span>}
            </span>
          );
        },
      }),
    ),
  ];
}

function RulesTable() {
  const rules = useApi(rulesEp);
  if (rules.isPending) return <Loading what="risk rules" />;
  if (rules.isError) return <Problem error={rules.error} retry={() => void rules.refetch()} />;
  if (rules.data.rules.length === 0) return <Empty>No risk rules are in force.</Empty>;
  return (
    <>
      <p className="muted view-note">
        Measured over the last {rules.data.lookback_days} days. A metric at or past its warning value is a warning, at or past its critical value critical (at
        or below, for inverted metrics).
      </p>
      <ScrollRegion label="Risk rules in force">
        <table>
          <caption className="visually-hidden">Risk rules in force</caption>
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">Category</th>
              <th scope="col">Aggregation</th>
              <th scope="col" className="num">
                Warning
              </th>
              <th scope="col" className="num">
                Critical
              </th>
              <th scope="col">Direction</th>
              <th scope="col" className="wrap">
                Action
              </th>
            </tr>
          </thead>
          <tbody>
            {rules.data.rules.map((r: Rule) => (
              <tr key={r.metric_key}>
                <th scope="row">
                  <code>{r.metric_key}</code>
                </th>
                <td>{r.category}</td>
                <td>{r.aggregation}</td>
                <td className="num">{fmt(r.warning)}</td>
                <td className="num">{fmt(r.critical)}</td>
                <td>{r.inverted ? 'lower is worse' : 'higher is worse'}</td>
                <td className="wrap">{r.action}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}

export default function RiskPage() {
  const snapshots = useApi(snapshotsEp, {}, live);
  const [filters, setFilters] = useUrlState(FILTERS);
  const data = snapshots.data;

  const metricKeys = useMemo(() => {
    const seen = new Set<string>();
    for (const c of data?.clusters ?? []) for (const k of Object.keys(c.metrics)) seen.add(k);
    return [...METRIC_KEYS.filter((k) => seen.has(k)), ...[...seen].filter((k) => !METRIC_KEYS.includes(k)).sort()];
  }, [data]);

  const level = knownOption(filters.level as string, LEVELS);
  const metric = knownOption(filters.metric as string, metricKeys);
  const columns = useMemo(() => snapshotColumns(metricKeys), [metricKeys]);
  const [sorting, setSorting] = useUrlSorting('');
  const rows = useMemo(
    () =>
      (data?.clusters ?? []).filter(
        (c) =>
          matches(filters.q as string, c.cluster_name, c.customer_name) &&
          (!level || c.risk_level === level) &&
          (!metric || (c.metrics[metric]?.status ?? 'healthy') !== 'healthy'),
      ),
    [data, filters.q, level, metric],
  );

  return (
    <div className="risk-page">
      <h1>Risk</h1>
      <Stamp at={data?.generated_at} source={data?.source} />
      <Updated reads={[snapshots]} />
      {data && (
        // The Fleet overview and Health page say Critical/Warning/Healthy too, of other measures (score classes): each says which it counts.
        <p className="muted tiles-note" id="risk-tiles-note">
          Critical, Warning and Healthy count clusters by risk level, set by the risk rules below (each metric against its warning and critical values); the
          Fleet overview counts them by tier-adjusted score, the Health page by metrics score.
        </p>
      )}
      {data && (
        <ul className="tiles" aria-label="Risk summary">
          <li className="tile">
            <div className="value">{data.summary.total}</div>
            <div className="label">Clusters</div>
          </li>
          {(['critical', 'warning', 'healthy'] as const).map((k) => (
            <li className={`tile ${k}`} key={k}>
              <button
                type="button"
                className="risk-tile-button"
                aria-pressed={level.toLowerCase() === k}
                aria-describedby="risk-tiles-note"
                onClick={() => setFilters({ level: level.toLowerCase() === k ? '' : capitalised(k) })}
              >
                <span className="value">{data.summary[k]}</span>
                <span className="label">{capitalised(k)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}

      <section className="view-section" aria-labelledby="risk-snapshots">
        <h2 id="risk-snapshots">Risk snapshots</h2>
        <search className="toolbar" aria-label="Filter risk snapshots">
          <SearchFilter value={filters.q as string} onChange={(q) => setFilters({ q })} />
          <SelectFilter label="Risk level" value={level} options={LEVELS} onChange={(v) => setFilters({ level: v })} />
          <SelectFilter
            label="Metric off green"
            all="Any metric"
            value={metric}
            options={metricKeys.map((k) => ({ value: k, label: metricLabel(k) }))}
            onChange={(v) => setFilters({ metric: v })}
          />
          {(filters.q || level || metric) && (
            <button type="button" onClick={() => setFilters({ q: '', level: '', metric: '' })}>
              Clear filters
            </button>
          )}
        </search>
        {snapshots.isPending ? (
          <Loading what="risk snapshots" />
        ) : !snapshots.data ? (
          <Problem error={snapshots.error} retry={() => void snapshots.refetch()} />
        ) : snapshots.data.clusters.length === 0 ? (
          <Empty>No risk snapshots yet. {HOW_DATA_ARRIVES}</Empty>
        ) : (
          <>
            <Count shown={rows.length} total={snapshots.data.clusters.length} what="clusters" />
            <DataTable
              data={rows}
              columns={columns}
              caption="Risk snapshot per cluster"
              getRowId={(c) => c.cluster_id}
              sorting={sorting}
              onSortingChange={setSorting}
              rowHeight={64}
              empty="No cluster matches these filters."
            />
          </>
        )}
      </section>

      <section className="view-section" aria-labelledby="risk-rules">
        <h2 id="risk-rules">Risk rules</h2>
        <RulesTable />
      </section>
    </div>
  );
}
