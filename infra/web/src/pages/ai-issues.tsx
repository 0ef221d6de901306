// AI issues (/ai-issues): alerts grouped by the language model, or by the rules
// engine when none is configured (marked plainly). The same filters as alert
// issues, kept in the URL; the AI KPIs (total alerts included); each issue's AI
// summary and reasoning in the list, linking to its page.
import { keepPreviousData } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { Link } from 'react-router';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { live } from '../api/live';
import { Updated } from '../components/updated';
import type { Answer, QueryOf } from '../api/types';
import { GroupedBy } from '../components/ai/grouping';
import { KpiTiles } from '../components/ai/kpis';
import { firstLine, plainText } from '../components/ai/plain-text';
import { count } from '../components/format';
import { maybe, COLUMNS as SHARED } from '../components/issues/columns';
import { FilterBar, Results, sortedByService, UnassignedLink, useAssignees, useIssueFilters, windowLabel } from '../components/issues/filters';
import { duration, Maybe } from '../components/issues/format';
import { Problem } from '../components/states';
import { ItemLink } from '../components/list-link';
import './issues.css';
import './ai-issues.css';

const listEndpoint = endpoint<'ai-issues', 'list'>('GET', '/api/ai-issues');
const kpisEndpoint = endpoint<'ai-issues', 'kpis'>('GET', '/api/ai-issues/kpis');

type Issue = Answer<'ai-issues', 'list'>['issues'][number];

export default function AiIssuesPage() {
  const state = useIssueFilters();
  const query: QueryOf<'ai-issues', 'list'> = state.query;
  const list = useApi(listEndpoint, { query }, { placeholderData: keepPreviousData, ...live });
  const kpis = useApi(kpisEndpoint, { query: { days: state.days } }, { placeholderData: keepPreviousData, ...live });
  const assignees = useAssignees('ai-issues');

  return (
    <section className="issues-page ai-issues-page" aria-labelledby="issues-title">
      <h1 id="issues-title">AI issues</h1>
      <p className="muted ai-issues-intro">
        Alerts grouped into issues by the language model, each with its summary and reasoning. When no model is configured the rules engine groups them, and the
        issue says so. Rule-grouped issues are under <Link to="/issues">Alert issues</Link>.
      </p>
      <Updated reads={[list, kpis]} />
      <Kpis kpis={kpis} days={state.days} />
      <FilterBar label="Filter AI issues" state={state} options={list.data} assignees={assignees} />
      <Results
        list={list}
        state={state}
        noun={['AI issue', 'AI issues']}
        none={(window) => `No AI issues ${window}. AI issues form when alerts arrive and the grouping runs after each recompute.`}
        caption="AI issues"
        columns={COLUMNS}
        assignees={assignees}
        rowHeight={96}
      />
    </section>
  );
}

function Kpis({ kpis, days }: { kpis: ReturnType<typeof useApi<'ai-issues', 'kpis'>>; days: string }) {
  if (kpis.isError && !kpis.data) return <Problem error={kpis.error} retry={() => void kpis.refetch()} />;
  const k = kpis.data;
  return (
    <KpiTiles
      busy={kpis.isFetching}
      note={`Key figures for every AI issue active ${windowLabel(days)}; the other filters narrow the list below.`}
      tiles={[
        ['Issues', k && count(k.total)],
        ['Ongoing', k && count(k.ongoing)],
        ['Resolved', k && count(k.resolved)],
        [<UnassignedLink key="unassigned" />, k && count(k.unassigned)],
        ['Alerts grouped', k && count(k.total_alerts)],
        ['Average duration', k && (k.total > 0 ? duration(Math.round(k.avg_duration_minutes)) : '—')],
      ]}
    />
  );
}

/**
 * Two texts in one cell, each cut to two lines with its whole text as a tooltip: the summary, and the reasoning
 * muted under it. Two columns of them were 560 px, and at 1280 px Duration, Triage and Assignee fell off the right.
 * A model writes them in Markdown: the cell shows the first line's words (`firstLine`), not `## Summary` or `**Disk**`.
 */
function AiText({ summary, reasoning }: { summary: string; reasoning: string }) {
  return (
    <>
      <div className="ai-clamp" title={plainText(summary) || undefined}>
        <Maybe value={firstLine(summary)} />
      </div>
      <div className="ai-clamp muted" title={plainText(reasoning) || undefined}>
        <Maybe value={firstLine(reasoning)} />
      </div>
    </>
  );
}

const column = createColumnHelper<Issue>();
// The service orders issues (newest activity first, or by the column a header chose: `sort`, beyond the contract) and
// pages them; a header asks it for another order, since sorting one page in the browser would mislead. At 1280 px every column shows with no
// sideways scroll (as on Alert issues): pairs share a cell, as "Cluster · customer" does there.
const COLUMNS = [
  column.accessor('issue_name', {
    header: 'Issue',
    size: 176,
    meta: { className: 'ai-wrap' },
    cell: (c) => (
      <>
        <ItemLink to={`/ai-issues/${encodeURIComponent(c.row.original.issue_id)}`}>{c.getValue()}</ItemLink>
        <div>
          <GroupedBy value={c.row.original.grouped_by} />
        </div>
      </>
    ),
  }),
  column.accessor('severity', SHARED.severity),
  column.accessor('status', SHARED.status),
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
  column.accessor('alert_count', SHARED.alerts),
  column.accessor('ai_summary', {
    header: 'AI summary · reasoning',
    size: 280,
    meta: { className: 'ai-wrap ai-text' },
    cell: (c) => <AiText summary={c.getValue()} reasoning={c.row.original.ai_reasoning} />,
  }),
  column.accessor('last_seen', {
    header: 'Last seen (UTC) · duration',
    size: 144,
    cell: (c) => (
      <>
        {SHARED.lastSeen.cell(c)}
        <div className="muted issues-customer">{duration(c.row.original.duration_minutes)}</div>
      </>
    ),
  }),
  column.accessor('triage_status', maybe('Triage', 100)),
  column.accessor('assignee', SHARED.assignee),
].map(sortedByService);
