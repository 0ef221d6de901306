// Alert issues (/issues): every filter of the contract's list query kept in the
// URL, so a link reproduces the view; the window's KPIs; the page of issues, each
// linking to its page; paging with the contract's page and page_size.
import { keepPreviousData } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { live } from '../api/live';
import { Updated } from '../components/updated';
import type { Answer, QueryOf } from '../api/types';
import { maybe, COLUMNS as SHARED } from '../components/issues/columns';
import { FilterBar, Results, sortedByService, UnassignedLink, useAssignees, useIssueFilters, windowLabel } from '../components/issues/filters';
import { duration, TicketLink } from '../components/issues/format';
import { KpiTiles } from '../components/ai/kpis';
import { count } from '../components/format';
import { Problem } from '../components/states';
import { ItemLink } from '../components/list-link';
import './issues.css';

const listEndpoint = endpoint<'issues', 'list'>('GET', '/api/issues');
const kpisEndpoint = endpoint<'issues', 'kpis'>('GET', '/api/issues/kpis');

type Issue = Answer<'issues', 'list'>['issues'][number];

export default function IssuesPage() {
  const state = useIssueFilters();
  const query: QueryOf<'issues', 'list'> = state.query;
  const list = useApi(listEndpoint, { query }, { placeholderData: keepPreviousData, ...live });
  const kpis = useApi(kpisEndpoint, { query: { days: state.days } }, { placeholderData: keepPreviousData, ...live });
  const assignees = useAssignees('issues');

  return (
    <section className="issues-page" aria-labelledby="issues-title">
      <h1 id="issues-title">Alert issues</h1>
      <Updated reads={[list, kpis]} />
      <Kpis kpis={kpis} days={state.days} />
      <FilterBar label="Filter issues" state={state} options={list.data} assignees={assignees} />
      <Results
        list={list}
        state={state}
        noun={['issue', 'issues']}
        none={(window) => `No alert issues ${window}. Issues form when alerts arrive and are grouped by the issue rules.`}
        caption="Alert issues"
        columns={COLUMNS}
        assignees={assignees}
        rowHeight={48}
      />
    </section>
  );
}

function Kpis({ kpis, days }: { kpis: ReturnType<typeof useApi<'issues', 'kpis'>>; days: string }) {
  if (kpis.isError && !kpis.data) return <Problem error={kpis.error} retry={() => void kpis.refetch()} />;
  const k = kpis.data;
  return (
    <KpiTiles
      busy={kpis.isFetching}
      note={`Key figures for every issue active ${windowLabel(days)}; the other filters narrow the list below.`}
      tiles={[
        ['Issues', k && count(k.total)],
        ['Ongoing', k && count(k.ongoing)],
        ['Resolved', k && count(k.resolved)],
        [<UnassignedLink key="unassigned" />, k && count(k.unassigned)],
        // No issue, no average: 0 min would read as a measured one.
        ['Average duration', k && (k.total > 0 ? duration(Math.round(k.avg_duration_minutes)) : '—')],
      ]}
    />
  );
}

const column = createColumnHelper<Issue>();
// The service orders issues (newest activity first, or by the column a header chose: `sort`, beyond the contract) and
// pages them; a header asks it for another order, since sorting one page in the browser would mislead.
const COLUMNS = [
  column.accessor('issue_name', {
    header: 'Issue',
    size: 176,
    cell: (c) => (
      <ItemLink to={`/issues/${encodeURIComponent(c.row.original.issue_id)}`} title={c.getValue()}>
        {c.getValue()}
      </ItemLink>
    ),
  }),
  column.accessor('severity', SHARED.severity),
  column.accessor('status', SHARED.status),
  column.accessor('cluster_name', {
    header: 'Cluster · customer',
    size: 164,
    cell: (c) => (
      <>
        <span title={c.getValue()}>{c.getValue()}</span>
        <div className="muted issues-customer">{c.row.original.customer_name}</div>
      </>
    ),
  }),
  column.accessor('alert_count', SHARED.alerts),
  column.accessor('last_seen', SHARED.lastSeen),
  column.accessor('duration_minutes', SHARED.duration),
  column.accessor('triage_status', maybe('Triage', 100)),
  column.accessor('disposition_status', maybe('Disposition', 100)),
  column.accessor('assignee', SHARED.assignee),
  column.accessor('ticket_key', {
    header: 'Ticket',
    size: 80,
    cell: (c) => <TicketLink ticketKey={c.getValue()} url={c.row.original.ticket_url} />,
  }),
].map(sortedByService);
