// The issue lists' shared parts (alert issues and AI issues): every filter of the
// contract's list query, and whose issues (`assignee`, beyond it), kept in the URL;
// the filter bar, and the results section with its count, empty states and pager.
// What differs between the lists (names, texts, the table) comes in as props.
import type { UseQueryResult } from '@tanstack/react-query';
import { useId, useMemo } from 'react';
import { Link, useLocation } from 'react-router';
import { endpoint, type ApiProblem, type Endpoint } from '../../api/client';
import type { QueryOf } from '../../api/types';
import { MAY_LIST_AI_ASSIGNEES, MAY_LIST_ASSIGNEES } from '../../api/access';
import { useApi } from '../../api/hooks';
import { useSession } from '../../session';
import { DataTable, type DataTableProps, decodeSorting, encodeSorting } from '../data-table';
import { Empty, HOW_DATA_ARRIVES, Loading, PastLastPage, Problem } from '../states';
import { useUrlState } from '../url-state';
import { Pager, positive } from '../pager';
import { AssigneeNames } from './columns';
import { SuggestField } from './suggest-field';
import { DISPOSITION_SUGGESTIONS, TRIAGE_SUGGESTIONS } from './triage-values';
import { useDraft } from '../use-draft';
import { count } from '../format';

const DEFAULTS = {
  search: '',
  days: '7',
  severities: '',
  status: '',
  customer: '',
  cluster: '',
  triage: '',
  disposition: '',
  assignee: '',
  sort: '-last_seen',
  page: '1',
  page_size: '20',
};
export type Filters = typeof DEFAULTS;
const FILTER_KEYS = ['search', 'days', 'severities', 'status', 'customer', 'cluster', 'triage', 'disposition', 'assignee'] as const;
/** The list's word for the issues nobody can act on (shared/routes/common.ts UNASSIGNED): the KPIs' Unassigned. */
const UNASSIGNED = '(none)';
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

/**
 * 0..365, fractions allowed (the contract's `days`), written as decimals: Number() also reads `0x10` and `0b11`,
 * which the route refuses (shared/routes/days.ts), so an edited link so spelled is read as the default.
 */
const validDays = (v: string) => /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(v) && Number(v) <= 365;

/** The window as a sentence ends with it: "today (UTC)", "in the last 7 days" ("active in today" read wrong). */
export function windowLabel(days: string): string {
  const d = Number(days);
  if (d === 0) return 'today (UTC)';
  if (d < 1) return `in the last ${Math.round(d * 24 * 10) / 10} hours`;
  return d === 1 ? 'in the last day' : `in the last ${d} days`;
}

const STATUSES = ['Ongoing', 'Resolved'] as const;
/** Known severities and status in their case, others dropped (an edited or old link): the list asks for what the controls show, not a 422 no retry mends. */
const knownSeverities = (v: string) => SEVERITIES.filter((s) => v.split(',').some((x) => x.trim().toLowerCase() === s.toLowerCase())).join(',');
const knownStatus = (v: string) => STATUSES.find((s) => s.toLowerCase() === v.trim().toLowerCase()) ?? '';
type IssueSort = NonNullable<QueryOf<'issues', 'list'>['sort']>;
/** The columns a list sorts by (the API's sort keys, shared/routes/common.ts ISSUE_SORT_KEYS, typechecked against it). */
const SORT_KEYS = [
  'last_seen',
  'first_seen',
  'severity',
  'status',
  'issue_name',
  'cluster_name',
  'alert_count',
  'duration_minutes',
] as const satisfies readonly (IssueSort | `-${IssueSort}`)[];
const SORTABLE: ReadonlySet<string> = new Set(SORT_KEYS);
/**
 * A list column as the service sorts it (the whole list, then paged): by its field when the API sorts by it; a first
 * click descending (newest, longest, most alerts, Critical and Ongoing first) but for names.
 */
export function sortedByService<D extends { accessorKey?: string | number | symbol }>(def: D): D & { enableSorting: boolean; sortDescFirst: boolean } {
  const key = String(def.accessorKey ?? '');
  return { ...def, enableSorting: SORTABLE.has(key), sortDescFirst: key !== 'issue_name' && key !== 'cluster_name' };
}

/** A sort the API takes, else the default (an edited link): the list asks for what its headers show. */
const knownSort = (v: string) => (SORTABLE.has(v.replace(/^-/, '')) ? v : DEFAULTS.sort);

/** `me`, UNASSIGNED, or what a username may be (shared/auth/username.ts, in any case); else anyone's, as the API would refuse it. */
const knownAssignee = (v: string) => {
  const word = v.trim();
  if (['me', UNASSIGNED].includes(word.toLowerCase())) return word.toLowerCase();
  return word.length <= 256 && /^[a-z0-9._@+'-]+$/i.test(word) ? word : '';
};

/** The list's URL state: the filters, the list query they make, and how to change or clear them. */
export function useIssueFilters() {
  const [raw, setFilters] = useUrlState<keyof Filters>(DEFAULTS) as [Filters, (c: Partial<Filters>) => void];
  const filters: Filters = {
    ...raw,
    severities: knownSeverities(raw.severities),
    status: knownStatus(raw.status),
    assignee: knownAssignee(raw.assignee),
    sort: knownSort(raw.sort),
  };
  const page = positive(filters.page, 1);
  const pageSize = Math.min(100, positive(filters.page_size, 20));
  const days = validDays(filters.days) ? filters.days : DEFAULTS.days;
  const query = {
    search: filters.search || undefined,
    days,
    severities: filters.severities || undefined,
    status: (filters.status as 'Ongoing' | 'Resolved' | '') || undefined,
    customer: filters.customer || undefined,
    cluster: filters.cluster || undefined,
    triage: filters.triage || undefined,
    disposition: filters.disposition || undefined,
    assignee: filters.assignee || undefined,
    sort: filters.sort as IssueSort,
    page,
    page_size: pageSize,
  };
  /** A filter change goes back to page 1. */
  const filter = (changes: Partial<Filters>) => setFilters({ ...changes, page: '1' });
  const filtered = FILTER_KEYS.some((k) => k !== 'days' && filters[k] !== DEFAULTS[k]);
  // The order is no filter: it stays, as the window and page size do.
  const clear = () => setFilters({ ...DEFAULTS, days: filters.days, page_size: filters.page_size, sort: filters.sort });
  return { filters, setFilters, page, pageSize, days, query, filter, filtered, clear };
}

type FilterState = ReturnType<typeof useIssueFilters>;

const USERS = {
  issues: { ep: endpoint<'issues', 'users'>('GET', '/api/issues/users'), roles: MAY_LIST_ASSIGNEES },
  'ai-issues': { ep: endpoint<'ai-issues', 'users'>('GET', '/api/ai-issues/users'), roles: MAY_LIST_AI_ASSIGNEES },
};

/**
 * The accounts an "Assigned to" filter offers by name: the active ones, for those who may read them (admins up;
 * the same read, and cache entry, as the triage form's). Others choose from Anyone, Me and Unassigned.
 */
export function useAssignees(list: keyof typeof USERS) {
  const { can } = useSession();
  const { ep, roles } = USERS[list];
  // Both lists' users routes answer the same shape.
  const users = useApi(ep as Endpoint<'issues', 'users'>, {}, { staleTime: 60_000, enabled: can(...roles) });
  return users.data?.users;
}

export function FilterBar({
  label,
  state: { filters, filter, filtered, clear },
  options,
  assignees,
}: {
  /** The form's accessible name. */
  label: string;
  state: FilterState;
  options: { customers: string[]; clusters: string[] } | undefined;
  /** The accounts the assignee filter offers by name (useAssignees); none but Anyone, Me and Unassigned when undefined. */
  assignees: { username: string; name: string }[] | undefined;
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
  const daysInvalid = !validDays(days);

  return (
    <form className="toolbar issues-filters" aria-label={label} onSubmit={(e) => e.preventDefault()}>
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
      <Choice label="Customer" all="All customers" value={filters.customer} values={options?.customers} onChange={(v) => filter({ customer: v })} />
      <Choice label="Cluster" all="All clusters" value={filters.cluster} values={options?.clusters} onChange={(v) => filter({ cluster: v })} />
      <SuggestField
        label="Triage status"
        value={triage}
        onChange={(e) => setTriage(e.target.value)}
        listId={`${id}-triage`}
        suggestions={TRIAGE_SUGGESTIONS}
        placeholder="Any"
      />
      <SuggestField
        label="Disposition"
        value={disposition}
        onChange={(e) => setDisposition(e.target.value)}
        listId={`${id}-disposition`}
        suggestions={DISPOSITION_SUGGESTIONS}
        placeholder="Any"
      />
      <AssigneeChoice value={filters.assignee} people={assignees} onChange={(v) => filter({ assignee: v })} />
      {filtered && (
        <button type="button" onClick={clear} className="issues-clear">
          Clear filters
        </button>
      )}
    </form>
  );
}

/** Names as a person reads them: acme-prod-7 before acme-prod-13 (the service sorts by code point: 13 before 7). */
const NATURAL = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** A select of the values the list offers, in natural order, keeping the current one even when the list no longer has it. */
function Choice({
  label,
  all,
  value,
  values,
  onChange,
}: {
  label: string;
  all: string;
  value: string;
  values: string[] | undefined;
  onChange: (value: string) => void;
}) {
  const shown = useMemo(() => {
    const sorted = [...(values ?? [])].sort(NATURAL.compare);
    return value && !values?.includes(value) ? [value, ...sorted] : sorted;
  }, [value, values]);
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{all}</option>
        {shown.map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The Unassigned tile's label: a link to the list under that filter, whose total is the tile's figure (the other filters kept). */
export function UnassignedLink() {
  const params = new URLSearchParams(useLocation().search);
  params.set('assignee', UNASSIGNED);
  params.delete('page');
  return <Link to={{ search: `?${params}` }}>Unassigned</Link>;
}

/** Anyone, Me, Unassigned, then the accounts by name; a username from the URL that none of them is stays offered. */
function AssigneeChoice({
  value,
  people,
  onChange,
}: {
  value: string;
  people: { username: string; name: string }[] | undefined;
  onChange: (value: string) => void;
}) {
  const named = people ?? [];
  const other = value && value !== 'me' && value !== UNASSIGNED && !named.some((p) => p.username === value);
  return (
    <label>
      Assigned to
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">Anyone</option>
        <option value="me">Me</option>
        <option value={UNASSIGNED}>Unassigned</option>
        {other && <option value={value}>{value}</option>}
        {named.map((p) => (
          <option key={p.username} value={p.username}>
            {p.name && p.name !== p.username ? `${p.name} (${p.username})` : p.username}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The filters set, as the empty list names them: `assigned to you, status Resolved`. */
function filtersSaid(filters: Filters): string {
  const said: string[] = [];
  if (filters.assignee === 'me') said.push('assigned to you');
  else if (filters.assignee === UNASSIGNED) said.push('unassigned');
  else if (filters.assignee) said.push(`assigned to ${filters.assignee}`);
  if (filters.search) said.push(`matching “${filters.search}”`);
  if (filters.severities) said.push(`severity ${filters.severities.split(',').join(' or ')}`);
  if (filters.status) said.push(`status ${filters.status}`);
  if (filters.customer) said.push(`customer ${filters.customer}`);
  if (filters.cluster) said.push(`cluster ${filters.cluster}`);
  if (filters.triage) said.push(`triage ${filters.triage.trim()}`);
  if (filters.disposition) said.push(`disposition ${filters.disposition.trim()}`);
  return said.join(', ');
}

type ListAnswer<T> = { total: number; total_pages: number; page: number; issues: T[] };

export function Results<T extends { issue_id: string }>({
  list,
  state: { filters, page, pageSize, days, filtered, clear, setFilters, filter },
  noun,
  none,
  caption,
  columns,
  rowHeight,
  assignees,
}: {
  list: UseQueryResult<ListAnswer<T>, ApiProblem>;
  state: FilterState;
  /** The count's words: one and many. */
  noun: [string, string];
  /** What the empty, unfiltered list says, given the window ("the last 7 days"). */
  none: (window: string) => string;
  /** The table caption before ", page n of m". */
  caption: string;
  columns: DataTableProps<T>['columns'];
  rowHeight: number;
  /** The accounts the page knows (useAssignees): the Assignee column names them. */
  assignees: { username: string; name: string }[] | undefined;
}) {
  const names = useMemo(() => new Map((assignees ?? []).map((u) => [u.username, u.name])), [assignees]);
  if (list.isPending) return <Loading what="issues" />;
  if (list.isError && !list.data) return <Problem error={list.error} retry={() => void list.refetch()} />;
  const data = list.data;
  if (!data) return null;
  const goTo = (p: number) => setFilters({ page: String(p) });

  let body: React.ReactNode;
  if (data.total === 0) {
    body = filtered ? (
      <Empty>
        <p>
          No issue {windowLabel(days)} matches these filters: {filtersSaid(filters)}.
        </p>
        <button type="button" onClick={clear}>
          Clear filters
        </button>
      </Empty>
    ) : (
      <Empty>
        <p>{none(windowLabel(days))}</p>
        <p>{HOW_DATA_ARRIVES}</p>
      </Empty>
    );
  } else if (data.issues.length === 0) {
    body = <PastLastPage page={page} last={data.total_pages} onLast={() => goTo(data.total_pages)} />;
  } else {
    // Dimmed only while the rows are another query's (a new filter or page loading): a background read of the
    // same list (every minute, or on coming back to it) dimmed it to a contrast no status badge passes.
    const stale = list.isPlaceholderData;
    body = (
      <div className={stale ? 'issues-table busy' : 'issues-table'} aria-busy={list.isFetching}>
        <AssigneeNames.Provider value={names}>
          <DataTable
            data={data.issues}
            columns={columns}
            caption={`${caption}, page ${count(data.page)} of ${count(data.total_pages)}`}
            getRowId={(i) => i.issue_id}
            // The service sorts the whole list and pages it: a header asks it for another order, from page 1.
            manualSorting
            sorting={decodeSorting(filters.sort)}
            onSortingChange={(change) => {
              const next = typeof change === 'function' ? change(decodeSorting(filters.sort)) : change;
              // A header's third click leaves no order, which knownSort reads as the list's default (most recently seen first).
              filter({ sort: knownSort(encodeSorting(next)) });
            }}
            rowHeight={rowHeight}
            maxHeight="none"
          />
        </AssigneeNames.Provider>
      </div>
    );
  }

  return (
    <section aria-labelledby="issues-results" className="issues-results">
      <h2 id="issues-results" className="visually-hidden">
        Issues
      </h2>
      {/* A failed read of the list shown (a background one: a new filter's failure is the Problem above) is said by the page's freshness line (components/updated.tsx), with the rows kept. */}
      <p className="muted issues-count" role="status" aria-live="polite">
        {list.isFetching ? 'Updating… ' : ''}
        {data.total === 1 ? `1 ${noun[0]}` : `${count(data.total)} ${noun[1]}`} {windowLabel(days)}
      </p>
      {body}
      {data.total > 0 && <Pager page={page} totalPages={data.total_pages} pageSize={pageSize} set={setFilters} />}
    </section>
  );
}
