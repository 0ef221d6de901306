// Risk: each cluster's risk snapshot (level, the signals that set it, suggested
// actions, and every metric's value and status against the risk rules), and the
// rules table those statuses come from.
import { useMemo } from 'react';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import type { Answer } from '../api/types';
import { Empty, HOW_DATA_ARRIVES, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import { Badge, ClusterLink, Count, fmt, matches, SearchFilter, SelectFilter, Stamp } from '../components/views/common';
import '../components/views/views.css';
import './risk.css';

const snapshotsEp = endpoint<'risk', 'snapshots'>('GET', '/api/risk/snapshots');
const rulesEp = endpoint<'risk', 'rulesTable'>('GET', '/api/risk/rules-table');

type Rule = Answer<'risk', 'rulesTable'>['rules'][number];

const FILTERS = { q: '', level: '', metric: '' };
const LEVELS = ['Critical', 'Warning', 'Healthy'];
/** The contract's metric keys, in its order; any other key the answer carries follows. */
const METRIC_KEYS = ['compaction_score', 'query_errors_7d', 'disk_used_pct', 'memory_pct', 'peak_jvm_heap_gb', 'error_rate_pct', 'qps', 'slow_queries_7d'];

const label = (key: string) => key.replace(/_/g, ' ');

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
      <div className="table-scroll">
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
      </div>
    </>
  );
}

export default function RiskPage() {
  const snapshots = useApi(snapshotsEp);
  const [filters, setFilters] = useUrlState(FILTERS);
  const data = snapshots.data;

  const metricKeys = useMemo(() => {
    const seen = new Set<string>();
    for (const c of data?.clusters ?? []) for (const k of Object.keys(c.metrics)) seen.add(k);
    return [...METRIC_KEYS.filter((k) => seen.has(k)), ...[...seen].filter((k) => !METRIC_KEYS.includes(k)).sort()];
  }, [data]);

  const rows = useMemo(
    () =>
      (data?.clusters ?? []).filter(
        (c) =>
          matches(filters.q as string, c.cluster_name, c.customer_name) &&
          (!filters.level || c.risk_level === filters.level) &&
          (!filters.metric || (c.metrics[filters.metric as string]?.status ?? 'healthy') !== 'healthy'),
      ),
    [data, filters],
  );

  return (
    <div className="risk-page">
      <h1>Risk</h1>
      <Stamp at={data?.generated_at} source={data?.source} />
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
                aria-pressed={filters.level.toString().toLowerCase() === k}
                onClick={() => setFilters({ level: filters.level.toString().toLowerCase() === k ? '' : k[0]!.toUpperCase() + k.slice(1) })}
              >
                <span className="value">{data.summary[k]}</span>
                <span className="label">{k[0]!.toUpperCase() + k.slice(1)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}

      <section className="view-section" aria-labelledby="risk-snapshots">
        <h2 id="risk-snapshots">Risk snapshots</h2>
        <search className="toolbar" aria-label="Filter risk snapshots">
          <SearchFilter value={filters.q as string} onChange={(q) => setFilters({ q })} />
          <SelectFilter label="Risk level" value={filters.level as string} options={LEVELS} onChange={(v) => setFilters({ level: v })} />
          <SelectFilter
            label="Metric off green"
            all="Any metric"
            value={filters.metric as string}
            options={metricKeys.map((k) => ({ value: k, label: label(k) }))}
            onChange={(v) => setFilters({ metric: v })}
          />
          {(filters.q || filters.level || filters.metric) && (
            <button type="button" onClick={() => setFilters({ q: '', level: '', metric: '' })}>
              Clear filters
            </button>
          )}
        </search>
        {snapshots.isPending ? (
          <Loading what="risk snapshots" />
        ) : snapshots.isError ? (
          <Problem error={snapshots.error} retry={() => void snapshots.refetch()} />
        ) : snapshots.data.clusters.length === 0 ? (
          <Empty>No risk snapshots yet. {HOW_DATA_ARRIVES}</Empty>
        ) : (
          <>
            <Count shown={rows.length} total={snapshots.data.clusters.length} what="clusters" />
            {rows.length === 0 ? (
              <Empty>No cluster matches these filters.</Empty>
            ) : (
              <div className="table-scroll risk-scroll">
                <table className="risk-table">
                  <caption className="visually-hidden">Risk snapshot per cluster</caption>
                  <thead>
                    <tr>
                      <th scope="col">Cluster</th>
                      <th scope="col">Customer</th>
                      <th scope="col">Risk level</th>
                      <th scope="col" className="num">
                        Score
                      </th>
                      <th scope="col" className="wrap">
                        Signals
                      </th>
                      <th scope="col" className="wrap">
                        Suggested actions
                      </th>
                      {metricKeys.map((k) => (
                        <th scope="col" className="num risk-metric-head" key={k}>
                          {label(k)}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((c) => (
                      <tr key={c.cluster_id}>
                        <th scope="row">
                          <ClusterLink id={c.cluster_id} name={c.cluster_name} />
                        </th>
                        <td>{c.customer_name}</td>
                        <td>
                          <Badge status={c.risk_level} />
                        </td>
                        <td className="num">{fmt(c.overall_score)}</td>
                        <td className="wrap">
                          {c.risk_signals.length ? (
                            <ul className="plain">
                              {c.risk_signals.map((s) => (
                                <li key={s}>{s}</li>
                              ))}
                            </ul>
                          ) : (
                            <span className="muted">none</span>
                          )}
                        </td>
                        <td className="wrap">
                          {c.suggested_actions.length ? (
                            <ul className="plain">
                              {c.suggested_actions.map((a) => (
                                <li key={a}>{a}</li>
                              ))}
                            </ul>
                          ) : (
                            <span className="muted">none</span>
                          )}
                        </td>
                        {metricKeys.map((k) => {
                          const m = c.metrics[k];
                          return (
                            <td key={k} className={`num risk-metric ${m?.status ?? ''}`}>
                              {m ? (
                                <>
                                  {fmt(m.value)}
                                  {m.status !== 'healthy' && <span className="risk-status"> {m.status}</span>}
                                </>
                              ) : (
                                '–'
                              )}
                            </td>
                          );
                        })}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
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
