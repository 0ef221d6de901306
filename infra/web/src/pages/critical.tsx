// Critical clusters: the (at most 15) most severe clusters by risk, ranked by
// severity score, each with why it is critical (risk reasons, firing alerts,
// health) and what to do; and the fleet's own Warning/Critical list by unified
// score (/api/fleet/critical), which ranks differently and can name other clusters.
import { Fragment, useMemo } from 'react';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { live } from '../api/live';
import { Updated } from '../components/updated';
import type { Answer } from '../api/types';
import { Empty, HOW_DATA_ARRIVES, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import { When } from '../components/time';
import { Badge, ClusterLink, Count, fmt, fmtScore, knownOption, matches, SearchFilter, SelectFilter, Stamp, TopRisk } from '../components/views/common';
import '../components/views/views.css';
import './critical.css';
import { ScrollRegion } from '../components/scroll-region';
import { DataTable } from '../components/data-table';
import { createColumnHelper } from '@tanstack/react-table';
import { count } from '../components/format';
import { metricLabel, metricUnit, withUnit } from '../components/metric-label';

const criticalEp = endpoint<'critical-clusters', 'list'>('GET', '/api/critical-clusters');
const fleetCriticalEp = endpoint<'fleet', 'critical'>('GET', '/api/fleet/critical');

type Critical = Answer<'critical-clusters', 'list'>['clusters'][number];

const FILTERS = { q: '', level: '' };
const LEVELS = ['Critical', 'Warning'];

const METRICS: (keyof Critical['metrics'])[] = ['compaction_score', 'disk_used_pct', 'query_errors_7d', 'query_error_pct', 'qps', 'node_count'];

function CriticalCard({ c, rank }: { c: Critical; rank: number }) {
  const titleId = `crit-${c.cluster_id}`;
  return (
    <li>
      <article className={`card critical-card ${c.risk_level}`} aria-labelledby={titleId}>
        <header className="critical-head">
          <span className="critical-rank" title="Rank by severity">
            #{rank}
          </span>
          <h3 id={titleId}>
            <ClusterLink id={c.cluster_id} name={c.cluster_name} />
          </h3>
          <Badge status={c.risk_level} />
          <span className="critical-severity">
            severity <strong>{fmt(c.severity_score)}</strong>
          </span>
        </header>
        <p className="muted critical-account">
          {c.account_name} · account {c.account_id} · {c.region} · engine {c.engine_version}
          {c.email && (
            <>
              {' · '}
              <a href={`mailto:${c.email}`}>{c.email}</a>
            </>
          )}
        </p>
        <div className="critical-body">
          <section>
            <h4>Why it is listed</h4>
            {c.risk_reasons.length ? (
              <ul className="plain">
                {c.risk_reasons.map((r) => (
                  <li key={r}>{r}</li>
                ))}
              </ul>
            ) : (
              <p className="muted">No risk reason recorded.</p>
            )}
            <p className="critical-health">
              {/* The fleet's unified score (metrics and alerts), not the metrics-only health score the Health page lists. */}
              Unified score {fmtScore(c.health.overall_score)} <Badge status={c.health.classification} />
              {' · '}
              {count(c.alert_total)} alert{c.alert_total === 1 ? '' : 's'} fired in the last 14 days
            </p>
          </section>
          <section>
            <h4>Suggested actions</h4>
            {c.suggested_actions.length ? (
              <ul className="plain">
                {c.suggested_actions.map((a) => (
                  <li key={a}>{a}</li>
                ))}
              </ul>
            ) : (
              <p className="muted">None suggested.</p>
            )}
          </section>
          <section>
            <h4>Metrics</h4>
            <dl className="facts">
              {METRICS.map((key) => (
                <Fragment key={key}>
                  <dt>{metricLabel(key)}</dt>
                  <dd>{withUnit(fmt(c.metrics[key]), c.metrics[key] == null ? '' : metricUnit(key))}</dd>
                </Fragment>
              ))}
            </dl>
          </section>
        </div>
        {c.alerts.length > 0 && (
          <details className="critical-alerts">
            <summary>
              Alerts ({count(c.alerts.length)} kind{c.alerts.length === 1 ? '' : 's'}, {count(c.alert_total)} fired in the last 14 days)
            </summary>
            <ScrollRegion label={`Alerts that fired on ${c.cluster_name} in the last 14 days`}>
              <table>
                <caption className="visually-hidden">Alerts that fired on {c.cluster_name} in the last 14 days</caption>
                <thead>
                  <tr>
                    <th scope="col">Alert</th>
                    <th scope="col" className="num">
                      Count
                    </th>
                    <th scope="col">First (UTC)</th>
                    <th scope="col">Last (UTC)</th>
                  </tr>
                </thead>
                <tbody>
                  {c.alerts.map((a) => (
                    <tr key={a.alert_name}>
                      <th scope="row">{a.alert_name}</th>
                      <td className="num">{count(a.count)}</td>
                      <td>
                        <When iso={a.first} label={false} />
                      </td>
                      <td>
                        <When iso={a.last} label={false} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          </details>
        )}
      </article>
    </li>
  );
}

type FleetCriticalRow = Answer<'fleet', 'critical'>['clusters'][number];

const fleetColumn = createColumnHelper<FleetCriticalRow>();
/**
 * The fleet's Warning and Critical clusters, worst first as the API orders them (the columns do not sort), virtualised
 * (components/data-table.tsx): with 1,000 clusters this list held 371 rows, 7,900 DOM nodes, rendered whole.
 */
const FLEET_COLUMNS = [
  fleetColumn.accessor('cluster_name', {
    header: 'Cluster',
    meta: { rowHeader: true },
    size: 170,
    cell: (c) => (
      <span title={c.getValue()}>
        <ClusterLink id={c.row.original.cluster_id} name={c.getValue()} />
      </span>
    ),
  }),
  fleetColumn.accessor('customer_name', { header: 'Customer', size: 150, cell: (c) => <span title={c.getValue()}>{c.getValue()}</span> }),
  fleetColumn.accessor('customer_tier', { header: 'Tier', size: 52 }),
  fleetColumn.accessor('classification', { header: 'Classification', size: 120, cell: (c) => <Badge status={c.getValue()} /> }),
  fleetColumn.accessor('tier_adjusted_score', { header: 'Tier-adjusted', size: 100, meta: { numeric: true }, cell: (c) => fmtScore(c.getValue()) }),
  fleetColumn.accessor('overall_score', { header: 'Unified', size: 80, meta: { numeric: true }, cell: (c) => fmtScore(c.getValue()) }),
  fleetColumn.accessor('top_risk', {
    header: 'Top risk',
    size: 170,
    meta: { className: 'top-risk-cell' },
    cell: (c) => <TopRisk text={c.getValue()} title={c.getValue()} />,
  }),
  fleetColumn.accessor('firing_alert_count_7d', { header: 'Alerts (7 d)', size: 90, meta: { numeric: true } }),
  fleetColumn.accessor('risk_reasons', {
    header: 'Why',
    size: 296,
    meta: { className: 'wrap' },
    cell: (c) => (
      <ul className="plain">
        {c.getValue().map((r) => (
          <li key={r}>{r}</li>
        ))}
      </ul>
    ),
  }),
].map((def) => ({ ...def, enableSorting: false }));

function FleetCritical({ q, level }: { q: string; level: string }) {
  const fleet = useApi(fleetCriticalEp, {}, live);
  const rows = useMemo(
    () => (fleet.data?.clusters ?? []).filter((c) => matches(q, c.cluster_name, c.customer_name) && (!level || c.classification === level)),
    [fleet.data, q, level],
  );
  if (fleet.isPending) return <Loading what="the fleet's Warning and Critical clusters" />;
  if (!fleet.data) return <Problem error={fleet.error} retry={() => void fleet.refetch()} />;
  if (fleet.data.clusters.length === 0) return <Empty>No cluster is Warning or Critical by unified score.</Empty>;
  return (
    <>
      <Stamp at={fleet.data.generated_at} source={fleet.data.source} />
      <Count shown={rows.length} total={fleet.data.total} what="clusters" />
      {rows.length === 0 ? (
        <Empty>No cluster matches these filters.</Empty>
      ) : (
        <DataTable
          data={rows}
          columns={FLEET_COLUMNS}
          caption="Warning and Critical clusters by unified score, worst first"
          getRowId={(c) => c.cluster_id}
          rowHeight={60}
        />
      )}
    </>
  );
}

export default function CriticalPage() {
  const critical = useApi(criticalEp, {}, live);
  // The same read as FleetCritical's (one request): the freshness line covers both sections.
  const fleet = useApi(fleetCriticalEp, {}, live);
  const [filters, setFilters] = useUrlState(FILTERS);
  const q = filters.q as string;
  const level = knownOption(filters.level as string, LEVELS);
  const ranked = useMemo(() => (critical.data?.clusters ?? []).map((c, i) => ({ c, rank: i + 1 })), [critical.data]);
  const shown = ranked.filter(({ c }) => matches(q, c.cluster_name, c.account_name) && (!level || c.risk_level === level));

  return (
    <div className="critical-page">
      <h1>Critical clusters</h1>
      <Stamp at={critical.data?.generated_at} />
      <Updated reads={[critical, fleet]} />
      {critical.data && (
        <ul className="tiles" aria-label="Totals">
          <li className="tile critical">
            <div className="value">{critical.data.total_critical}</div>
            <div className="label">Critical by risk</div>
          </li>
          <li className="tile warning">
            <div className="value">{critical.data.total_warning}</div>
            <div className="label">Warning by risk</div>
          </li>
          <li className="tile">
            <div className="value">{count(critical.data.clusters.length)}</div>
            <div className="label">Most severe, listed</div>
          </li>
        </ul>
      )}
      <search className="toolbar" aria-label="Filter critical clusters">
        <SearchFilter value={q} onChange={(v) => setFilters({ q: v })} />
        <SelectFilter label="Level" value={level} options={LEVELS} onChange={(v) => setFilters({ level: v })} />
        {(q || level) && (
          <button type="button" onClick={() => setFilters({ q: '', level: '' })}>
            Clear filters
          </button>
        )}
      </search>

      <section className="view-section" aria-labelledby="critical-ranked">
        <h2 id="critical-ranked">Most severe by risk</h2>
        <p className="muted view-note">
          Warning and Critical risk snapshots ranked by severity: 10 per risk reason, plus one per alert that fired in the last 14 days, plus a health penalty.
          At most 15.
        </p>
        {critical.isPending ? (
          <Loading what="critical clusters" />
        ) : !critical.data ? (
          <Problem error={critical.error} retry={() => void critical.refetch()} />
        ) : ranked.length === 0 ? (
          <Empty>No cluster is at Warning or Critical risk. {HOW_DATA_ARRIVES}</Empty>
        ) : (
          <>
            <Count shown={shown.length} total={ranked.length} what="clusters" />
            {shown.length === 0 ? (
              <Empty>No cluster matches these filters.</Empty>
            ) : (
              <ol className="critical-list">
                {shown.map(({ c, rank }) => (
                  <CriticalCard c={c} rank={rank} key={c.cluster_id} />
                ))}
              </ol>
            )}
          </>
        )}
      </section>

      <section className="view-section" aria-labelledby="critical-fleet">
        <h2 id="critical-fleet">Warning and Critical by unified score</h2>
        <p className="muted view-note">
          The fleet view (/api/fleet/critical): classification by the tier-adjusted unified score of metrics and alerts, worst first. It can differ from the
          risk ranking above.
        </p>
        <FleetCritical q={q} level={level} />
      </section>
    </div>
  );
}
