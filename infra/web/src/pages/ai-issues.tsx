// AI issues (/ai-issues): alerts grouped by the language model, or by the rules
// engine when none is configured (marked plainly). The same filters as alert
// issues, kept in the URL; the AI KPIs (total alerts included); each issue's AI
// summary and reasoning in the list, linking to its page.
import { keepPreviousData } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useId } from 'react';
import { Link } from 'react-router';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import type { Answer, QueryOf } from '../api/types';
import { GroupedBy } from '../components/ai/grouping';
import { KpiTiles } from '../components/ai/kpis';
import { Pager, positive } from '../components/ai/pager';
import { DataTable } from '../components/data-table';
import { duration, Maybe, Severity, Status, utc } from '../components/issues/format';
import { DISPOSITION_SUGGESTIONS, TRIAGE_SUGGESTIONS } from '../components/issues/triage-values';
import { useDraft } from '../components/issues/use-draft';
import { Empty, HOW_DATA_ARRIVES, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import './issues.css';
import './ai-issues.css';

const listEndpoint = endpoint<'ai-issues', 'list'>('GET', '/api/ai-issues');
const kpisEndpoint = endpoint<'ai-issues', 'kpis'>('GET', '/api/ai-issues/kpis');

type Issue = Answer<'ai-issues', 'list'>['issues'][number];

const DEFAULTS = {
  search: '',
  days: '7',
  severities: '',
  status: '',
  customer: '',
  cluster: '',
  triage: '',
  disposition: '',
  page: '1',
  page_size: '20',
};
type Filters = typeof DEFAULTS;
const FILTER_KEYS = ['search', 'days', 'severities', 'status', 'customer', 'cluster', 'triage', 'disposition'] as const;
const SEVERITIES = ['Critical', 'Warning'] as const;
const DAY_PRESETS: [string, string][] = [
  ['0', 'today (UTC)'],
  ['0.25', '6 hours'],
  ['0.5', '12 hours'],
  ['1', '1 day'],
  ['3', '3 days'],
  ['7', '7 days'],
  ['14', '14 days'],
  ['30', '30 days'],
  ['90', '90 days'],
];

/** 0..365, fractions allowed (the contract's `days`). */
const validDays = (v: string) => v.trim() !== '' && Number.isFinite(Number(v)) && Number(v) >= 0 && Number(v) <= 365;

function windowLabel(days: string): string {
  const d = Number(days);
  if (d === 0) return 'today (UTC)';
  if (d < 1) return `the last ${Math.round(d * 24 * 10) / 10} hours`;
  return d === 1 ? 'the last day' : `the last ${d} days`;
}

export default function AiIssuesPage() {
  const [filters, setFilters] = useUrlState<keyof Filters>(DEFAULTS) as [Filters, (c: Partial<Filters>) => void];
  const page = positive(filters.page, 1);
  const pageSize = Math.min(100, positive(filters.page_size, 20));
  const days = validDays(filters.days) ? filters.days : DEFAULTS.days;

  const query: QueryOf<'ai-issues', 'list'> = {
    search: filters.search || undefined,
    days,
    severities: filters.severities || undefined,
    status: (filters.status as 'Ongoing' | 'Resolved' | '') || undefined,
    customer: filters.customer || undefined,
    cluster: filters.cluster || undefined,
    triage: filters.triage || undefined,
    disposition: filters.disposition || undefined,
    page,
    page_size: pageSize,
  };
  const list = useApi(listEndpoint, { query }, { placeholderData: keepPreviousData });
  const kpis = useApi(kpisEndpoint, { query: { days } }, { placeholderData: keepPreviousData });

  /** A filter change goes back to page 1. */
  const filter = (changes: Partial<Filters>) => setFilters({ ...changes, page: '1' });
  const filtered = FILTER_KEYS.some((k) => k !== 'days' && filters[k] !== DEFAULTS[k]);
  const clear = () => setFilters({ ...DEFAULTS, days: filters.days, page_size: filters.page_size });

  return (
    <section className="issues-page ai-issues-page" aria-labelledby="issues-title">
      <h1 id="issues-title">AI issues</h1>
      <p className="muted ai-issues-intro">
        Alerts grouped into issues by the language model, each with its summary and reasoning. When no model is configured the rules engine groups them, and the
        issue says so. Rule-grouped issues are under <Link to="/issues">Alert issues</Link>.
      </p>
      <Kpis kpis={kpis} days={days} />
      <FilterBar filters={filters} filter={filter} options={list.data} filtered={filtered} clear={clear} />
      <Results list={list} page={page} pageSize={pageSize} days={days} filtered={filtered} clear={clear} setFilters={setFilters} />
    </section>
  );
}

function Kpis({ kpis, days }: { kpis: ReturnType<typeof useApi<'ai-issues', 'kpis'>>; days: string }) {
  if (kpis.isError) return <Problem error={kpis.error} retry={() => void kpis.refetch()} />;
  const k = kpis.data;
  return (
    <KpiTiles
      busy={kpis.isFetching}
      note={`Key figures for every AI issue active in ${windowLabel(days)}; the other filters narrow the list below.`}
      tiles={[
        ['Issues', k && String(k.total)],
        ['Ongoing', k && String(k.ongoing)],
        ['Resolved', k && String(k.resolved)],
        ['Unassigned', k && String(k.unassigned)],
        ['Alerts grouped', k && String(k.total_alerts)],
        ['Average duration', k && duration(Math.round(k.avg_duration_minutes))],
      ]}
    />
  );
}

function FilterBar({
  filters,
  filter,
  options,
  filtered,
  clear,
}: {
  filters: Filters;
  filter: (changes: Partial<Filters>) => void;
  options: Answer<'ai-issues', 'list'> | undefined;
  filtered: boolean;
  clear: () => void;
}) {
  const id = useId();
  const [search, setSearch] = useDraft(filters.search, (v) => filter({ search: v }));
  const [days, setDays] = useDraft(filters.days, (v) => filter({ days: v }), validDays, 400);
  const [triage, setTriage] = useDraft(filters.triage, (v) => filter({ triage: v }));
  const [disposition, setDisposition] = useDraft(filters.disposition, (v) => filter({ disposition: v }));
  const severities = new Set(filters.severities.split(',').filter(Boolean));
  const toggle = (s: string, on: boolean) => {
    const next = SEVERITIES.filter((v) => (v === s ? on : severities.has(v)));
    filter({ severities: next.join(',') });
  };
  const withCurrent = (values: string[] | undefined, current: string) =>
    current && !values?.includes(current) ? [current, ...(values ?? [])] : (values ?? []);
  const daysInvalid = !validDays(days);

  return (
    <form className="toolbar issues-filters" aria-label="Filter AI issues" onSubmit={(e) => e.preventDefault()}>
      <label className="issues-search">
        Search
        <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Issue, cluster or customer" maxLength={200} />
      </label>
      <label>
        Window (days)
        <input
          type="text"
          inputMode="decimal"
          autoComplete="off"
          value={days}
          list={`${id}-days`}
          onChange={(e) => setDays(e.target.value)}
          aria-invalid={daysInvalid}
          aria-describedby={`${id}-days-help`}
          className="issues-days"
        />
        <datalist id={`${id}-days`}>
          {DAY_PRESETS.map(([value, label]) => (
            <option key={value} value={value} label={label} />
          ))}
        </datalist>
        <span id={`${id}-days-help`} className={daysInvalid ? 'error issues-help' : 'muted issues-help'}>
          {daysInvalid ? 'A number from 0 to 365' : `0 = today, 0.5 = 12 h`}
        </span>
      </label>
      <fieldset className="issues-severities">
        <legend>Severity</legend>
        {SEVERITIES.map((s) => (
          <label key={s} className="issues-check">
            <input type="checkbox" checked={severities.has(s)} onChange={(e) => toggle(s, e.target.checked)} />
            {s}
          </label>
        ))}
      </fieldset>
      <label>
        Status
        <select value={filters.status} onChange={(e) => filter({ status: e.target.value })}>
          <option value="">Any</option>
          <option value="Ongoing">Ongoing</option>
          <option value="Resolved">Resolved</option>
        </select>
      </label>
      <label>
        Customer
        <select value={filters.customer} onChange={(e) => filter({ customer: e.target.value })}>
          <option value="">All customers</option>
          {withCurrent(options?.customers, filters.customer).map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <label>
        Cluster
        <select value={filters.cluster} onChange={(e) => filter({ cluster: e.target.value })}>
          <option value="">All clusters</option>
          {withCurrent(options?.clusters, filters.cluster).map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <label>
        Triage status
        <input value={triage} onChange={(e) => setTriage(e.target.value)} list={`${id}-triage`} maxLength={64} placeholder="Any" />
        <datalist id={`${id}-triage`}>
          {TRIAGE_SUGGESTIONS.map((v) => (
            <option key={v} value={v} />
          ))}
        </datalist>
      </label>
      <label>
        Disposition
        <input value={disposition} onChange={(e) => setDisposition(e.target.value)} list={`${id}-disposition`} maxLength={64} placeholder="Any" />
        <datalist id={`${id}-disposition`}>
          {DISPOSITION_SUGGESTIONS.map((v) => (
            <option key={v} value={v} />
          ))}
        </datalist>
      </label>
      {filtered && (
        <button type="button" onClick={clear} className="issues-clear">
          Clear filters
        </button>
      )}
    </form>
  );
}

function Results({
  list,
  page,
  pageSize,
  days,
  filtered,
  clear,
  setFilters,
}: {
  list: ReturnType<typeof useApi<'ai-issues', 'list'>>;
  page: number;
  pageSize: number;
  days: string;
  filtered: boolean;
  clear: () => void;
  setFilters: (changes: Partial<Filters>) => void;
}) {
  if (list.isPending) return <Loading what="issues" />;
  if (list.isError && !list.data) return <Problem error={list.error} retry={() => void list.refetch()} />;
  const data = list.data;
  if (!data) return null;
  const goTo = (p: number) => setFilters({ page: String(p) });

  let body: React.ReactNode;
  if (data.total === 0) {
    body = filtered ? (
      <Empty>
        <p>No issue in {windowLabel(days)} matches these filters.</p>
        <button type="button" onClick={clear}>
          Clear filters
        </button>
      </Empty>
    ) : (
      <Empty>
        <p>No AI issues in {windowLabel(days)}. AI issues form when alerts arrive and the grouping runs after each recompute.</p>
        <p>{HOW_DATA_ARRIVES}</p>
      </Empty>
    );
  } else if (data.issues.length === 0) {
    body = (
      <Empty>
        <p>
          Page {page} is past the last page ({data.total_pages}).
        </p>
        <button type="button" onClick={() => goTo(data.total_pages)}>
          Go to page {data.total_pages}
        </button>
      </Empty>
    );
  } else {
    body = <IssueTable issues={data.issues} busy={list.isFetching} caption={`AI issues, page ${data.page} of ${data.total_pages}`} />;
  }

  return (
    <section aria-labelledby="issues-results" className="issues-results">
      <h2 id="issues-results" className="visually-hidden">
        Issues
      </h2>
      {list.isError && <Problem error={list.error} retry={() => void list.refetch()} />}
      <p className="muted issues-count" role="status" aria-live="polite">
        {list.isFetching ? 'Updating… ' : ''}
        {data.total === 1 ? '1 AI issue' : `${data.total} AI issues`} in {windowLabel(days)}
      </p>
      {body}
      {data.total > 0 && (
        <Pager page={page} totalPages={data.total_pages} pageSize={pageSize} goTo={goTo} setSize={(s) => setFilters({ page_size: s, page: '1' })} />
      )}
    </section>
  );
}

const column = createColumnHelper<Issue>();
const UTC_SHORT = (iso: string) => utc(iso).replace(' UTC', '');
// The service orders issues newest activity first and pages them; sorting one page in the browser would
// mislead, so the columns do not sort (the contract has no sort parameter).
const COLUMNS = [
  column.accessor('issue_name', {
    header: 'Issue',
    size: 200,
    meta: { className: 'ai-wrap' },
    cell: (c) => (
      <>
        <Link to={`/ai-issues/${encodeURIComponent(c.row.original.issue_id)}`}>{c.getValue()}</Link>
        <div>
          <GroupedBy value={c.row.original.grouped_by} />
        </div>
      </>
    ),
  }),
  column.accessor('severity', { header: 'Severity', size: 88, cell: (c) => <Severity value={c.getValue()} /> }),
  column.accessor('status', { header: 'Status', size: 92, cell: (c) => <Status value={c.getValue()} /> }),
  column.accessor('cluster_name', {
    header: 'Cluster · customer',
    size: 164,
    meta: { className: 'ai-wrap' },
    cell: (c) => (
      <>
        <span>{c.getValue()}</span>
        <div className="muted issues-customer">{c.row.original.customer_name}</div>
      </>
    ),
  }),
  column.accessor('alert_count', { header: 'Alerts', size: 64, meta: { numeric: true } }),
  column.accessor('ai_summary', { header: 'AI summary', size: 280, meta: { className: 'ai-wrap ai-text' }, cell: (c) => <Maybe value={c.getValue()} /> }),
  column.accessor('ai_reasoning', { header: 'AI reasoning', size: 280, meta: { className: 'ai-wrap ai-text' }, cell: (c) => <Maybe value={c.getValue()} /> }),
  column.accessor('last_seen', {
    header: 'Last seen (UTC)',
    size: 144,
    cell: (c) => (
      <time dateTime={c.getValue()} title={utc(c.getValue())}>
        {UTC_SHORT(c.getValue())}
      </time>
    ),
  }),
  column.accessor('duration_minutes', { header: 'Duration', size: 104, meta: { numeric: true }, cell: (c) => duration(c.getValue()) }),
  column.accessor('triage_status', { header: 'Triage', size: 100, cell: (c) => <Maybe value={c.getValue()} /> }),
  column.accessor('assignee', { header: 'Assignee', size: 120, cell: (c) => <Maybe value={c.getValue()} /> }),
].map((def) => ({ ...def, enableSorting: false }));

function IssueTable({ issues, busy, caption }: { issues: Issue[]; busy: boolean; caption: string }) {
  return (
    <div className={busy ? 'issues-table busy' : 'issues-table'} aria-busy={busy}>
      <DataTable data={issues} columns={COLUMNS} caption={caption} getRowId={(i) => i.issue_id} rowHeight={96} maxHeight="none" />
    </div>
  );
}
