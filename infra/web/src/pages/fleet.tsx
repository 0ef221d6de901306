// The landing page (issue 18 §4): fleet KPIs, the health distribution, and every
// cluster's unified score, worst first. Filters and sorting live in the URL, so a
// link reproduces the view; the table is virtualised (components/data-table.tsx),
// so a fleet of thousands stays fast. Admins can recompute the scores (Refresh).
import { createColumnHelper, type SortingFn } from '@tanstack/react-table';
import { useDeferredValue, useEffect, useMemo, useState } from 'react';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { live } from '../api/live';
import { Updated } from '../components/updated';
import { useRefreshRun } from '../api/refresh';
import type { Answer } from '../api/types';
import { DataTable, useUrlSorting } from '../components/data-table';
import { Empty, HOW_DATA_ARRIVES, Loading, Problem } from '../components/states';
import { utcSeconds } from '../components/time';
import { count, percent, score } from '../components/format';
import { useUrlState } from '../components/url-state';
import { useDraft } from '../components/use-draft';
import { MAY_REFRESH_FLEET } from '../api/access';
import { useSession } from '../session';
import { StaleBadge } from '../components/stale-badge';
import { ItemLink } from '../components/list-link';
import { TopRisk } from '../components/views/common';
import '../components/views/views.css';
import './fleet.css';
import { Button } from '../components/button';

const scoresEndpoint = endpoint<'fleet', 'scores'>('GET', '/api/fleet/scores');
const kpisEndpoint = endpoint<'fleet', 'kpis'>('GET', '/api/fleet/kpis');
const refreshEndpoint = endpoint<'fleet', 'refresh'>('POST', '/api/fleet/refresh');
const refreshStatusEndpoint = endpoint<'fleet', 'refreshStatus'>('GET', '/api/fleet/refresh/{refresh_id}');

type Score = Answer<'fleet', 'scores'>['scores'][number];
type Kpis = Answer<'fleet', 'kpis'>['kpis'];
type Classification = Score['classification'];

const CLASSES: Classification[] = ['Critical', 'Warning', 'Healthy'];
/** The classes a URL asks for, in any case; one the checkboxes cannot show is not asked for (views/common.tsx's knownOption). */
const knownClasses = (asked: string[]) => CLASSES.filter((c) => asked.some((a) => a.trim().toLowerCase() === c.toLowerCase()));
const FILTERS = { q: '', classification: [] as string[], tier: '', customer: '', region: '' };
/** Worst first: the tier-adjusted score ascending (score columns sort ascending, worst first, on the first click too). */
const DEFAULT_SORT = 'tier_adjusted_score';

const tierRank = (tier: string) => {
  const rank = ['S', 'A', 'B'].indexOf(tier);
  return rank === -1 ? 3 : rank;
};
const byTier: SortingFn<Score> = (a, b) =>
  tierRank(a.original.customer_tier) - tierRank(b.original.customer_tier) || a.original.customer_tier.localeCompare(b.original.customer_tier);
const bySeverity: SortingFn<Score> = (a, b) => CLASSES.indexOf(a.original.classification) - CLASSES.indexOf(b.original.classification);

const column = createColumnHelper<Score>();
// The widths sum to 1,230 px: the table fits a 1280-px window beside a classic 15-px scrollbar (1,304 cut Type off).
const COLUMNS = [
  column.accessor('cluster_name', {
    header: 'Cluster',
    size: 156,
    sortingFn: 'alphanumeric',
    cell: (c) => (
      <ItemLink to={`/clusters/${encodeURIComponent(c.row.original.cluster_id)}`} title={`${c.getValue()} (${c.row.original.cluster_id})`}>
        {c.getValue()}
      </ItemLink>
    ),
  }),
  column.accessor('classification', {
    header: 'Class',
    size: 140,
    sortingFn: bySeverity,
    // A cluster whose metrics stopped arriving is still classed on its old data: the badge says so.
    cell: (c) => (
      <>
        <span className={`badge ${c.getValue()}`}>{c.getValue()}</span>
        <StaleBadge stale={c.row.original.metrics_stale} lastMetricAt={c.row.original.last_metric_at} />
      </>
    ),
  }),
  column.accessor('tier_adjusted_score', {
    header: 'Tier-adjusted',
    size: 100,
    sortDescFirst: false,
    meta: { numeric: true, className: 'fleet-main-score' },
    cell: (c) => score(c.getValue()),
  }),
  column.accessor('overall_score', { sortDescFirst: false, header: 'Overall', size: 78, meta: { numeric: true }, cell: (c) => score(c.getValue()) }),
  column.accessor('metrics_score', { sortDescFirst: false, header: 'Metrics', size: 78, meta: { numeric: true }, cell: (c) => score(c.getValue()) }),
  column.accessor('alerts_score', { sortDescFirst: false, header: 'Alerts', size: 70, meta: { numeric: true }, cell: (c) => score(c.getValue()) }),
  // Wraps onto a second line (views.css) rather than cutting the name ("Compactio… score 0"), as the Health page's does.
  column.accessor('top_risk', {
    header: 'Top risk',
    size: 160,
    sortingFn: 'text',
    meta: { className: 'top-risk-cell' },
    cell: (c) => <TopRisk text={c.getValue()} title={[c.getValue(), ...c.row.original.risk_reasons].join('\n')} />,
  }),
  column.accessor('customer_name', {
    header: 'Customer',
    size: 140,
    sortingFn: 'text',
    cell: (c) => <span title={`${c.getValue()} (account ${c.row.original.account_id})`}>{c.getValue()}</span>,
  }),
  column.accessor('customer_tier', { header: 'Tier', size: 52, sortingFn: byTier }),
  column.accessor('region', { header: 'Region', size: 144, sortingFn: 'text', cell: (c) => <span title={c.getValue()}>{c.getValue()}</span> }),
  // Cut with an ellipsis at 112 px (a long instance type at 1440 px), so its whole text is in a tooltip, as Region's is.
  column.accessor('cluster_type', { header: 'Type', size: 112, sortingFn: 'text', cell: (c) => <span title={c.getValue()}>{c.getValue()}</span> }),
];

export default function FleetPage() {
  const { can } = useSession();
  const kpis = useApi(kpisEndpoint, {}, live);
  const scores = useApi(scoresEndpoint, {}, live);
  return (
    <div className="fleet">
      <div className="fleet-head">
        <div>
          <h1>Fleet overview</h1>
          {scores.data && (
            <p className="muted fleet-stamp">
              Scores computed <time dateTime={scores.data.generated_at}>{utcSeconds(scores.data.generated_at)}</time>
            </p>
          )}
          <Updated reads={[kpis, scores]} />
        </div>
        {can(...MAY_REFRESH_FLEET) && <RefreshScores generatedAt={scores.data?.generated_at} />}
      </div>

      <section aria-labelledby="fleet-kpis">
        <h2 id="fleet-kpis" className="visually-hidden">
          Fleet KPIs
        </h2>
        {kpis.isPending ? (
          <Loading what="fleet KPIs" />
        ) : !kpis.data ? (
          <Problem error={kpis.error} retry={() => void kpis.refetch()} />
        ) : (
          <>
            {/* The Health and Risk pages say Critical/Warning/Healthy too, of other measures (metrics score, risk levels): each says which it counts. */}
            <p className="muted tiles-note" id="fleet-tiles-note">
              Healthy, Warning and Critical count clusters by tier-adjusted score (metrics and alerts, adjusted for the customer's tier) against the health
              rules' thresholds; the Health page counts them by metrics alone, the Risk page counts risk levels, set by the risk rules.
            </p>
            <KpiTiles kpis={kpis.data.kpis} />
            <Distribution kpis={kpis.data.kpis} />
          </>
        )}
      </section>

      <section aria-labelledby="fleet-scores">
        <h2 id="fleet-scores">Clusters</h2>
        {scores.isPending ? (
          <Loading what="cluster scores" />
        ) : !scores.data ? (
          <Problem error={scores.error} retry={() => void scores.refetch()} />
        ) : scores.data.scores.length === 0 ? (
          <Empty>
            <p>No cluster has a score yet.</p>
            <p>{HOW_DATA_ARRIVES}</p>
          </Empty>
        ) : (
          <ScoresTable scores={scores.data.scores} />
        )}
      </section>
    </div>
  );
}

function KpiTiles({ kpis }: { kpis: Kpis }) {
  const tiles: { label: string; value: string; tone?: string; hint?: string }[] = [
    { label: 'Clusters', value: count(kpis.total_clusters) },
    { label: 'Healthy', value: count(kpis.healthy_count), tone: 'healthy' },
    { label: 'Warning', value: count(kpis.warning_count), tone: 'warning' },
    { label: 'Critical', value: count(kpis.critical_count), tone: 'critical' },
    {
      label: 'Tier S at risk',
      value: count(kpis.tier_s_at_risk),
      tone: kpis.tier_s_at_risk ? 'critical' : undefined,
      hint: 'Tier S clusters classed Warning or Critical by tier-adjusted score',
    },
    { label: 'Average score', value: score(kpis.avg_score) },
    { label: 'Average metrics score', value: score(kpis.avg_metrics_score) },
    { label: 'Average alerts score', value: score(kpis.avg_alerts_score) },
  ];
  return (
    <dl className="tiles fleet-tiles">
      {tiles.map((tile) => (
        <div key={tile.label} className={`tile${tile.tone ? ` tone-${tile.tone}` : ''}`} title={tile.hint}>
          <dt className="label">{tile.label}</dt>
          <dd className="value">{tile.value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The healthy/warning/critical split as one stacked bar; the legend's buttons filter the table to a class. */
function Distribution({ kpis }: { kpis: Kpis }) {
  const [filters, setFilters] = useUrlState(FILTERS);
  const chosen = knownClasses(filters.classification as string[]);
  const total = kpis.healthy_count + kpis.warning_count + kpis.critical_count;
  if (total === 0) return null;
  const parts: { name: Classification; count: number }[] = [
    { name: 'Healthy', count: kpis.healthy_count },
    { name: 'Warning', count: kpis.warning_count },
    { name: 'Critical', count: kpis.critical_count },
  ];
  const summary = parts.map((p) => `${count(p.count)} ${p.name.toLowerCase()} (${percent(p.count / total)})`).join(', ');
  return (
    <div className="fleet-dist">
      <h3 id="fleet-dist-title">Health distribution</h3>
      <div className="fleet-dist-bar" role="img" aria-label={`Health distribution: ${summary} of ${count(total)} clusters`}>
        {parts
          .filter((p) => p.count > 0)
          .map((p) => (
            <span key={p.name} className={`seg ${p.name}`} style={{ flexGrow: p.count }} title={`${p.name}: ${count(p.count)}`} />
          ))}
      </div>
      <ul className="fleet-dist-legend" aria-labelledby="fleet-dist-title">
        {parts.map((p) => {
          const only = chosen.length === 1 && chosen[0] === p.name;
          return (
            <li key={p.name}>
              <button
                type="button"
                aria-pressed={only}
                title={only ? 'Show every class' : `Show only ${p.name} clusters`}
                onClick={() => setFilters({ classification: only ? [] : [p.name] })}
              >
                <span className={`swatch ${p.name}`} aria-hidden="true" />
                {p.name} <strong>{count(p.count)}</strong> <span className="muted">{percent(p.count / total)}</span>
              </button>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

const distinct = (values: string[], keep: string) => [...new Set(keep ? [...values, keep] : values)].sort((a, b) => a.localeCompare(b));

function ScoresTable({ scores }: { scores: Score[] }) {
  const [filters, setFilters] = useUrlState(FILTERS);
  const [sorting, setSorting] = useUrlSorting(DEFAULT_SORT);
  const q = filters.q as string;
  const asked = filters.classification as string[];
  const classification = useMemo(() => knownClasses(asked), [asked]);
  const tier = filters.tier as string;
  const customer = filters.customer as string;
  const region = filters.region as string;
  const text = useDeferredValue(q.trim().toLowerCase());

  const options = useMemo(
    () => ({
      tiers: distinct(
        scores.map((s) => s.customer_tier),
        tier,
      ).sort((a, b) => tierRank(a) - tierRank(b) || a.localeCompare(b)),
      customers: distinct(
        scores.map((s) => s.customer_name),
        customer,
      ),
      regions: distinct(
        scores.map((s) => s.region),
        region,
      ),
    }),
    [scores, tier, customer, region],
  );

  const rows = useMemo(
    () =>
      scores.filter(
        (s) =>
          (classification.length === 0 || classification.includes(s.classification)) &&
          (!tier || s.customer_tier === tier) &&
          (!customer || s.customer_name === customer) &&
          (!region || s.region === region) &&
          (!text ||
            [s.cluster_name, s.cluster_id, s.customer_name, s.account_id, s.region, s.cluster_type, s.top_risk].some((field) =>
              field.toLowerCase().includes(text),
            )),
      ),
    [scores, classification, tier, customer, region, text],
  );

  const filtered = Boolean(q || classification.length || tier || customer || region);
  const clear = () => setFilters({ q: '', classification: [], tier: '', customer: '', region: '' });
  const toggleClass = (name: string, on: boolean) => setFilters({ classification: CLASSES.filter((c) => (c === name ? on : classification.includes(c))) });

  return (
    <>
      <search className="toolbar fleet-filters" aria-label="Filter clusters">
        <div className="fleet-search">
          <label htmlFor="fleet-search">Search</label>
          <SearchBox id="fleet-search" value={q} onChange={(value) => setFilters({ q: value })} />
        </div>
        <fieldset className="fleet-classes">
          <legend>Classification</legend>
          {CLASSES.map((name) => (
            <label key={name}>
              <input type="checkbox" checked={classification.includes(name)} onChange={(e) => toggleClass(name, e.target.checked)} />
              {name}
            </label>
          ))}
        </fieldset>
        <label>
          Tier
          <select value={tier} onChange={(e) => setFilters({ tier: e.target.value })}>
            <option value="">All tiers</option>
            {options.tiers.map((t) => (
              <option key={t} value={t}>
                Tier {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Customer
          <select value={customer} onChange={(e) => setFilters({ customer: e.target.value })}>
            <option value="">All customers</option>
            {options.customers.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Region
          <select value={region} onChange={(e) => setFilters({ region: e.target.value })}>
            <option value="">All regions</option>
            {options.regions.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <Button type="button" onClick={clear} disabled={!filtered}>
          Clear filters
        </Button>
      </search>
      <p className="muted fleet-count" role="status" aria-live="polite">
        {filtered ? `${count(rows.length)} of ${count(scores.length)} clusters match.` : `${count(scores.length)} clusters.`} Arrow keys move between rows; the
        headers sort.
      </p>
      <DataTable
        data={rows}
        columns={COLUMNS}
        caption="Cluster scores"
        getRowId={(s) => s.cluster_id}
        sorting={sorting}
        onSortingChange={setSorting}
        empty={
          <>
            No cluster matches these filters.{' '}
            <button type="button" onClick={clear}>
              Clear filters
            </button>
          </>
        }
      />
    </>
  );
}

/** The free-text filter: its own draft, written to the URL after a pause (useDraft says why). */
function SearchBox({ id, value, onChange }: { id: string; value: string; onChange: (value: string) => void }) {
  const [text, setText] = useDraft(value, onChange, undefined, 200);
  return <input id={id} type="search" value={text} placeholder="Cluster, customer, account, risk…" onChange={(e) => setText(e.target.value)} />;
}

/** What the service's fleet refresh recomputes (fleet, health and risk snapshots, and the views built on them): answers to read again after it. */
const REFRESHED = ['/api/fleet', '/api/health', '/api/risk', '/api/critical-clusters', '/api/analysis'];

/** Admins' Refresh: recomputes every score (a few seconds, or followed in the background), then the page shows the new generated_at. */
function RefreshScores({ generatedAt }: { generatedAt: string | undefined }) {
  const refresh = useRefreshRun(refreshEndpoint, refreshStatusEndpoint, REFRESHED);
  const [elapsed, setElapsed] = useState(0);
  useEffect(() => {
    if (!refresh.isPending) return;
    const started = Date.now();
    setElapsed(0);
    const timer = setInterval(() => setElapsed(Math.round((Date.now() - started) / 1000)), 1000);
    return () => clearInterval(timer);
  }, [refresh.isPending]);
  return (
    <div className="fleet-refresh">
      <Button type="button" className="primary" onClick={() => refresh.mutate()} disabled={refresh.isPending} aria-busy={refresh.isPending}>
        {refresh.isPending ? 'Refreshing…' : 'Refresh scores'}
      </Button>
      <div role="status" aria-live="polite" className="fleet-refresh-status">
        {refresh.isPending && (
          <>
            <progress aria-label="Recomputing scores" />
            <span className="muted">
              {refresh.running ? 'Still running in the background; checking every 2 s…' : "Recomputing every cluster's score…"}{' '}
              {/* A ticking counter in a live region would be read out every second. */}
              <span aria-hidden="true">{elapsed > 0 ? `${elapsed} s` : ''}</span>
            </span>
          </>
        )}
        {refresh.isSuccess && (
          <span>
            Refreshed: {refresh.data.clusters_scored} clusters scored ({refresh.data.critical} critical, {refresh.data.warning} warning)
            {generatedAt && (
              <>
                , computed <time dateTime={generatedAt}>{utcSeconds(generatedAt)}</time>
              </>
            )}
            .
          </span>
        )}
      </div>
      {refresh.isError && <Problem error={refresh.error} retry={() => refresh.mutate()} />}
    </div>
  );
}
