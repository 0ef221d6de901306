// Health: the metrics-only view of every cluster. KPIs, the scores (worst first)
// with each dimension's value, score, status and thresholds on demand, the
// enrichment (cluster type and region) that drives the type and region filters,
// and, for admins only, a refresh that recomputes the scores.
import { createColumnHelper, getCoreRowModel, getSortedRowModel, type SortingFn, useReactTable } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { DataTable, SortHeader, useUrlSorting } from '../components/data-table';
import { useMemo, useRef, useState } from 'react';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { live } from '../api/live';
import { Updated } from '../components/updated';
import { useRefreshRun } from '../api/refresh';
import type { Answer } from '../api/types';
import { StaleBadge } from '../components/stale-badge';
import { Empty, HOW_DATA_ARRIVES, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import {
  Badge,
  ClusterLink,
  Count,
  fmt,
  fmtScore,
  knownOption,
  matches,
  SearchFilter,
  SelectFilter,
  Stamp,
  TopRisk,
  uniqueSorted,
} from '../components/views/common';
import { MAY_REFRESH_HEALTH } from '../api/access';
import { useSession } from '../session';
import '../components/views/views.css';
import './health.css';
import { ScrollRegion } from '../components/scroll-region';
import { Button } from '../components/button';
import { count } from '../components/format';

const scoresEp = endpoint<'health', 'scores'>('GET', '/api/health/scores');
const kpisEp = endpoint<'health', 'kpis'>('GET', '/api/health/kpis');
const enrichmentEp = endpoint<'health', 'enrichment'>('GET', '/api/health/enrichment');
const refreshEp = endpoint<'health', 'refresh'>('POST', '/api/health/refresh');
const refreshStatusEp = endpoint<'health', 'refreshStatus'>('GET', '/api/health/refresh/{refresh_id}');

type Score = Answer<'health', 'scores'>['scores'][number];
type Dimension = Score['dimension_scores'][number];

const FILTERS = { q: '', class: '', type: '', region: '', open: [] as string[] };
const CLASSES = ['Critical', 'Warning', 'Healthy'];

/** The engine writes "max over 7 days; green 100, yellow 500, red 1000 (higher is worse); status critical". */
const DESCRIPTION = /^(.*?); green (\S+), yellow (\S+), red (\S+) \(([^)]*)\); status (\w+)$/;

/** A threshold the description writes ("1000") as the console writes a figure (1,000, as the cluster page's); anything else as it is. */
const threshold = (written: string) => (written.trim() !== '' && Number.isFinite(Number(written)) ? fmt(Number(written)) : written);

function parseDimension(d: Dimension) {
  const m = DESCRIPTION.exec(d.description);
  if (!m) return null;
  return { over: m[1]!, green: threshold(m[2]!), yellow: threshold(m[3]!), red: threshold(m[4]!), direction: m[5]!, status: m[6]! };
}

function Kpis() {
  const kpis = useApi(kpisEp, {}, live);
  if (kpis.isPending) return <Loading what="health KPIs" />;
  if (!kpis.data) return <Problem error={kpis.error} retry={() => void kpis.refetch()} />;
  const k = kpis.data.kpis;
  const tiles: [string, string, string?][] = [
    ['Clusters', fmt(k.total_clusters)],
    ['Healthy', fmt(k.healthy_count), 'healthy'],
    ['Warning', fmt(k.warning_count), 'warning'],
    ['Critical', fmt(k.critical_count), 'critical'],
    ['Average health score', fmtScore(k.avg_score)],
    ['Average P99 latency', `${fmt(k.avg_p99_latency)} ms`],
  ];
  return (
    <>
      {/* The Fleet overview's tiles say the same words of the tier-adjusted score (alerts and tier too), so their counts differ: each says which it counts. */}
      <p className="muted tiles-note" id="health-tiles-note">
        Healthy, Warning and Critical count clusters by metrics score (the metric dimensions only: no alerts, no tier adjustment) against the health rules'
        thresholds; the Fleet overview counts them by tier-adjusted score.
      </p>
      <ul className="tiles health-kpis" aria-label="Health KPIs" aria-describedby="health-tiles-note">
        {tiles.map(([label, value, tone]) => (
          <li className={`tile ${tone ?? ''}`} key={label}>
            <div className="value">{value}</div>
            <div className="label">{label}</div>
          </li>
        ))}
      </ul>
    </>
  );
}

function Dimensions({ score }: { score: Score }) {
  return (
    <div className="health-detail">
      <table>
        <caption className="visually-hidden">Dimensions of {score.cluster_name}</caption>
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
            <th scope="col">Thresholds (green · yellow · red)</th>
            <th scope="col">Measured</th>
          </tr>
        </thead>
        <tbody>
          {score.dimension_scores.map((d) => {
            const p = parseDimension(d);
            return (
              <tr key={d.name}>
                <th scope="row">{d.name}</th>
                <td>{p ? <Badge status={p.status} /> : '–'}</td>
                <td className="num">{fmt(d.value)}</td>
                <td className="num">{fmtScore(d.score)}</td>
                <td className="num">{fmt(d.weight)}</td>
                <td>
                  {p ? (
                    <>
                      <span className="th-green">{p.green}</span> · <span className="th-yellow">{p.yellow}</span> · <span className="th-red">{p.red}</span>{' '}
                      <span className="muted">({p.direction})</span>
                    </>
                  ) : (
                    <span className="wrap-text">{d.description}</span>
                  )}
                </td>
                <td className="muted">{p?.over ?? ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div className="grid-2 health-why">
        <section aria-label="Risk reasons">
          <h3>Risk reasons</h3>
          {score.risk_reasons.length ? (
            <ul className="plain">
              {score.risk_reasons.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          ) : (
            <p className="muted">None: every dimension is green.</p>
          )}
        </section>
        <section aria-label="Suggested actions">
          <h3>Suggested actions</h3>
          {score.suggested_actions.length ? (
            <ul className="plain">
              {score.suggested_actions.map((a) => (
                <li key={a}>{a}</li>
              ))}
            </ul>
          ) : (
            <p className="muted">Nothing to do.</p>
          )}
        </section>
      </div>
    </div>
  );
}

function Refresh() {
  const refresh = useRefreshRun(refreshEp, refreshStatusEp, ['/api/health']);
  return (
    <div className="health-refresh">
      <Button type="button" className="primary" disabled={refresh.isPending} aria-busy={refresh.isPending} onClick={() => refresh.mutate()}>
        {refresh.isPending ? 'Refreshing…' : 'Refresh scores'}
      </Button>
      <span role="status" aria-live="polite" className="muted">
        {refresh.running && 'Still running in the background; checking every 2 s…'}
        {refresh.isSuccess && `Recomputed ${count(refresh.data.scores.length)} clusters.`}
      </span>
      {refresh.isError && <Problem error={refresh.error} retry={() => refresh.mutate()} />}
    </div>
  );
}

type Enrichment = Answer<'health', 'enrichment'>['clusters'][number];

/** The columns' widths: fixed, so they do not change as rows scroll in and out. */
// The first holds the expander, 1.75rem wide: at 40 px its cell (0.5rem padding a side) was 1 px short, and the
// cut showed as an ellipsis, a dot beside every triangle.
// They sum to 1,214 px, so the table fits a 1280-px window beside a classic 15-px scrollbar (its box is 1,233 px;
// 1,284 cut Region off), and the "Health score" and "Classification" headers have room beside their padding (the test of 1280 px checks both).
const WIDTHS = [44, 176, 140, 124, 132, 100, 202, 124, 172];

const scoreColumn = createColumnHelper<Score>();
/** Worst first on the first click, as the fleet page's class column: a text column sorts ascending first. */
const byLevel =
  (key: 'classification' | 'risk_level'): SortingFn<Score> =>
  (a, b) =>
    CLASSES.indexOf(a.original[key]) - CLASSES.indexOf(b.original[key]);
/**
 * The health table's columns, for its headers and its order (its rows it lays out itself): the type and region as the
 * inventory names them, as the cells show them. Unsorted, the rows keep the service's order, worst first.
 */
function scoreColumns(byId: Map<string, Enrichment>) {
  return [
    scoreColumn.display({ id: 'dimensions', header: () => <span className="visually-hidden">Dimensions</span>, enableSorting: false }),
    scoreColumn.accessor('cluster_name', { header: 'Cluster', sortingFn: 'alphanumeric' }),
    scoreColumn.accessor('customer_name', { header: 'Customer', sortingFn: 'text' }),
    scoreColumn.accessor('overall_score', { header: 'Health score', sortDescFirst: false, meta: { numeric: true } }),
    scoreColumn.accessor('classification', { header: 'Classification', sortingFn: byLevel('classification') }),
    scoreColumn.accessor('risk_level', { header: 'Risk level', sortingFn: byLevel('risk_level') }),
    scoreColumn.accessor('top_risk', { header: 'Top risk', sortingFn: 'text' }),
    scoreColumn.accessor((s) => byId.get(s.cluster_id)?.cluster_type ?? s.cluster_type, { id: 'type', header: 'Type', sortingFn: 'text' }),
    scoreColumn.accessor((s) => byId.get(s.cluster_id)?.region_name ?? s.region, { id: 'region', header: 'Region', sortingFn: 'text' }),
  ];
}

/**
 * Every cluster's health, worst first, virtualised as the fleet table is (components/data-table.tsx): only the rows in
 * view are in the DOM, so a fleet of thousands stays fast (1,000 clusters rendered whole were 16,000 nodes, and clearing
 * a filter froze the tab for 150 ms). A cluster is one <tbody>, its row and its opened dimensions, measured together.
 */
function HealthTable({ rows: filtered, byId, open, toggle }: { rows: Score[]; byId: Map<string, Enrichment>; open: string[]; toggle: (id: string) => void }) {
  const [sorting, setSorting] = useUrlSorting('');
  const columns = useMemo(() => scoreColumns(byId), [byId]);
  const table = useReactTable({
    data: filtered,
    columns,
    state: { sorting },
    onSortingChange: setSorting,
    getRowId: (s) => s.cluster_id,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    // Three states per header, as DataTable's: the third click restores the service's order, worst first.
  });
  const sortedRows = table.getRowModel().rows;
  const rows = useMemo(() => sortedRows.map((r) => r.original), [sortedRows]);
  // A link's sort naming no column (`?sort=bogus`) sorts nothing: the caption says what is shown.
  const sorted = table.getAllLeafColumns().some((c) => c.getIsSorted());
  const caption = `Health score per cluster, ${sorted ? 'sorted by the marked column' : 'worst first'}`;
  const scrollRef = useRef<HTMLElement>(null);
  const opened = useMemo(() => new Set(open), [open]);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 38,
    overscan: 12,
    // The first render, before the region is measured, fills the region's most (min(70vh, 900px), below) with rows:
    // rendered empty, the page was too short for the scroll position "Back" restores, which fell to the page's end.
    initialRect: { width: 0, height: Math.min(window.innerHeight * 0.7, 900) },
    // Measured heights follow the cluster, not its place: a filter or a fresh answer moves rows.
    getItemKey: (index) => rows[index]!.cluster_id,
  });
  // aria-rowindex counts the opened dimensions' rows above each cluster.
  const rowIndex = useMemo(() => {
    const at: number[] = [];
    let next = 2;
    for (const s of rows) {
      at.push(next);
      next += opened.has(s.cluster_id) ? 2 : 1;
    }
    return { at, count: next - 1 };
  }, [rows, opened]);
  const items = virtualizer.getVirtualItems();
  const paddingTop = items.length ? items[0]!.start : 0;
  const paddingBottom = items.length ? virtualizer.getTotalSize() - items[items.length - 1]!.end : 0;
  const spacer = (height: number) => (
    // A spacer standing for rows scrolled out of view: nothing in it, nothing focusable.
    <tbody aria-hidden="true" className="health-pad">
      <tr>
        <td colSpan={WIDTHS.length} style={{ height }} />
      </tr>
    </tbody>
  );
  return (
    <ScrollRegion label={caption} maxHeight="min(70vh, 900px)" ref={scrollRef}>
      <table className="health-table" aria-rowcount={rowIndex.count} style={{ minWidth: WIDTHS.reduce((a, b) => a + b, 0) }}>
        <caption className="visually-hidden">{caption}</caption>
        <colgroup>
          {WIDTHS.map((w, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the columns are fixed
            <col key={i} style={{ width: w }} />
          ))}
        </colgroup>
        <thead>
          <tr aria-rowindex={1}>
            {table.getHeaderGroups()[0]!.headers.map((header) => (
              <SortHeader key={header.id} header={header} />
            ))}
          </tr>
        </thead>
        {paddingTop > 0 && spacer(paddingTop)}
        {items.map((item) => {
          const s = rows[item.index]!;
          const isOpen = opened.has(s.cluster_id);
          const e = byId.get(s.cluster_id);
          const type = e?.cluster_type ?? s.cluster_type;
          const region = e?.region_name ?? s.region;
          return (
            <tbody key={s.cluster_id} ref={virtualizer.measureElement} data-index={item.index}>
              <tr className={isOpen ? 'open' : undefined} aria-rowindex={rowIndex.at[item.index]}>
                <td>
                  <button
                    type="button"
                    className="health-toggle"
                    aria-expanded={isOpen}
                    aria-controls={`dims-${s.cluster_id}`}
                    onClick={() => toggle(s.cluster_id)}
                  >
                    <span aria-hidden="true">{isOpen ? '▾' : '▸'}</span>
                    <span className="visually-hidden">Dimensions of {s.cluster_name}</span>
                  </button>
                </td>
                <th scope="row" title={s.cluster_name}>
                  <ClusterLink id={s.cluster_id} name={s.cluster_name} />
                </th>
                <td title={s.customer_name}>{s.customer_name}</td>
                <td className="num">{fmtScore(s.overall_score)}</td>
                <td>
                  <Badge status={s.classification} /> <StaleBadge stale={s.metrics_stale} lastMetricAt={s.last_metric_at} />
                </td>
                <td>
                  <Badge status={s.risk_level} />
                </td>
                <td className="health-wrap">
                  <TopRisk text={s.top_risk} />
                </td>
                <td title={type}>{type}</td>
                <td title={region}>{region}</td>
              </tr>
              {isOpen && (
                <tr className="health-detail-row" id={`dims-${s.cluster_id}`} aria-rowindex={rowIndex.at[item.index]! + 1}>
                  <td colSpan={WIDTHS.length}>
                    <Dimensions score={s} />
                  </td>
                </tr>
              )}
            </tbody>
          );
        })}
        {paddingBottom > 0 && spacer(paddingBottom)}
      </table>
    </ScrollRegion>
  );
}

const inventoryColumn = createColumnHelper<Enrichment>();
/** The inventory, every cluster of it, virtualised like the scores above (1,000 clusters rendered whole were 5,000 more nodes). */
const INVENTORY_COLUMNS = [
  inventoryColumn.accessor('cluster_name', {
    header: 'Cluster',
    meta: { rowHeader: true },
    size: 220,
    sortingFn: 'alphanumeric',
    cell: (c) => (
      <span title={c.getValue()}>
        <ClusterLink id={c.row.original.cluster_id} name={c.getValue()} />
      </span>
    ),
  }),
  inventoryColumn.accessor('cluster_type', { header: 'Type', size: 140, sortingFn: 'text' }),
  inventoryColumn.accessor('region_name', { header: 'Region', size: 220, sortingFn: 'text', cell: (c) => <span title={c.getValue()}>{c.getValue()}</span> }),
];

export default function HealthPage() {
  const { can } = useSession();
  const scores = useApi(scoresEp, {}, live);
  const enrichment = useApi(enrichmentEp, {}, live);
  const kpis = useApi(kpisEp, {}, live);
  const [filters, setFilters] = useUrlState(FILTERS);
  const open = filters.open as string[];
  const [showInventory, setShowInventory] = useState(false);

  const byId = useMemo(() => new Map(enrichment.data?.clusters.map((c) => [c.cluster_id, c]) ?? []), [enrichment.data]);
  const types = useMemo(() => uniqueSorted(enrichment.data?.clusters.map((c) => c.cluster_type) ?? []), [enrichment.data]);
  const regions = useMemo(() => uniqueSorted(enrichment.data?.clusters.map((c) => c.region_name) ?? []), [enrichment.data]);

  // The controls' values: a type or region is known once the inventory is read (until then, the link's is kept).
  const cls = knownOption(filters.class as string, CLASSES);
  const type = enrichment.data ? knownOption(filters.type as string, types) : (filters.type as string);
  const region = enrichment.data ? knownOption(filters.region as string, regions) : (filters.region as string);
  const rows = useMemo(
    () =>
      (scores.data?.scores ?? []).filter((s) => {
        const e = byId.get(s.cluster_id);
        return (
          matches(filters.q as string, s.cluster_name, s.customer_name) &&
          (!cls || s.classification === cls) &&
          (!type || (e?.cluster_type ?? s.cluster_type) === type) &&
          (!region || (e?.region_name ?? s.region) === region)
        );
      }),
    [scores.data, byId, filters.q, cls, type, region],
  );

  const toggle = (id: string) => setFilters({ open: open.includes(id) ? open.filter((o) => o !== id) : [...open, id] });

  return (
    <div className="health-page">
      <div className="view-head">
        <h1>Health</h1>
        {can(...MAY_REFRESH_HEALTH) && <Refresh />}
      </div>
      <Stamp at={scores.data?.generated_at} source={scores.data?.source} />
      <Updated reads={[scores, enrichment, kpis]} />
      <Kpis />

      <section className="view-section" aria-labelledby="health-scores">
        <h2 id="health-scores">Cluster health scores</h2>
        <p className="muted view-note">Metrics only, worst first (a column's header sorts by it). Open a row for each dimension's status and thresholds.</p>
        <search className="toolbar" aria-label="Filter health scores">
          <SearchFilter value={filters.q as string} onChange={(q) => setFilters({ q })} />
          <SelectFilter label="Classification" value={cls} options={CLASSES} onChange={(v) => setFilters({ class: v })} />
          <SelectFilter label="Cluster type" value={type} options={types} onChange={(v) => setFilters({ type: v })} />
          <SelectFilter label="Region" value={region} options={regions} onChange={(v) => setFilters({ region: v })} />
          {(filters.q || cls || type || region) && (
            <button type="button" onClick={() => setFilters({ q: '', class: '', type: '', region: '' })}>
              Clear filters
            </button>
          )}
        </search>
        {scores.isPending ? (
          <Loading what="health scores" />
        ) : !scores.data ? (
          <Problem error={scores.error} retry={() => void scores.refetch()} />
        ) : scores.data.scores.length === 0 ? (
          <Empty>No health scores yet. {HOW_DATA_ARRIVES}</Empty>
        ) : (
          <>
            <Count shown={rows.length} total={scores.data.scores.length} what="clusters" />
            {rows.length === 0 ? <Empty>No cluster matches these filters.</Empty> : <HealthTable rows={rows} byId={byId} open={open} toggle={toggle} />}
          </>
        )}
      </section>

      <section className="view-section" aria-labelledby="health-enrichment">
        <h2 id="health-enrichment">Enrichment</h2>
        <p className="muted view-note">Cluster type and region of every cluster, from the inventory.</p>
        {enrichment.isPending ? (
          <Loading what="enrichment" />
        ) : !enrichment.data ? (
          <Problem error={enrichment.error} retry={() => void enrichment.refetch()} />
        ) : enrichment.data.clusters.length === 0 ? (
          <Empty>No clusters in the inventory. {HOW_DATA_ARRIVES}</Empty>
        ) : (
          <>
            <ul className="health-facets" aria-label="Clusters by type">
              {types.map((t) => (
                <li key={t}>
                  <button type="button" aria-pressed={type === t} onClick={() => setFilters({ type: type === t ? '' : t })}>
                    {t} <span className="muted">{enrichment.data.clusters.filter((c) => c.cluster_type === t).length}</span>
                  </button>
                </li>
              ))}
            </ul>
            <ul className="health-facets" aria-label="Clusters by region">
              {regions.map((r) => (
                <li key={r}>
                  <button type="button" aria-pressed={region === r} onClick={() => setFilters({ region: region === r ? '' : r })}>
                    {r} <span className="muted">{enrichment.data.clusters.filter((c) => c.region_name === r).length}</span>
                  </button>
                </li>
              ))}
            </ul>
            <button type="button" aria-expanded={showInventory} aria-controls="health-inventory" onClick={() => setShowInventory(!showInventory)}>
              {showInventory ? 'Hide' : 'Show'} all {count(enrichment.data.clusters.length)} clusters
            </button>
            {showInventory && (
              <div id="health-inventory" className="health-inventory">
                <DataTable
                  data={enrichment.data.clusters}
                  columns={INVENTORY_COLUMNS}
                  caption="Cluster type and region per cluster"
                  getRowId={(c) => c.cluster_id}
                  maxHeight="28rem"
                />
              </div>
            )}
          </>
        )}
      </section>
    </div>
  );
}
