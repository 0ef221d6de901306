// The parts of one issue's page that alert issues (/issues/{id}) and AI issues
// (/ai-issues/{id}) share: the frame with its back link and loading and error
// states, the header, and the facts card. What differs comes in as props.
import type { UseQueryResult } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { ApiProblem } from '../../api/client';
import type { Answer } from '../../api/types';
import { BackLink } from '../list-link';
import { Loading, Problem } from '../states';
import { duration, Maybe, Severity, Status, TicketLink, When } from './format';
import { alertedSinceTriage } from './triage-values';

type Issue = Answer<'issues', 'get'>['issue'] | Answer<'ai-issues', 'get'>['issue'];

export function IssueFrame<T>({
  className,
  back,
  title,
  notFound,
  detail,
  children,
}: {
  className: string;
  /** The list page's path and name. */
  back: [string, string];
  /** The heading while loading or on failure. */
  title: string;
  /** The heading when there is no such issue. */
  notFound: string;
  detail: UseQueryResult<T, ApiProblem>;
  children: (data: T) => React.ReactNode;
}) {
  const { data } = detail;
  // No such issue: asking again will not change that.
  const retry = detail.error?.status === 404 ? undefined : () => void detail.refetch();
  return (
    <section className={className} aria-labelledby="issue-title">
      <p className="issue-back">
        <BackLink list={back[0]}>{back[1]}</BackLink>
      </p>
      {data !== undefined ? (
        <>
          {/* A failed re-read keeps the issue as last read, and the triage form with its unsaved edits: the problem shows above it. */}
          {detail.isError && <Problem error={detail.error} retry={retry} />}
          {children(data)}
        </>
      ) : detail.isError ? (
        <>
          <h1 id="issue-title">{detail.error.status === 404 ? notFound : title}</h1>
          <Problem error={detail.error} retry={retry} />
        </>
      ) : (
        <>
          <h1 id="issue-title">{title}</h1>
          <Loading what="the issue" />
        </>
      )}
    </section>
  );
}

export function IssueHeader({ issue, badge }: { issue: Issue; badge?: React.ReactNode }) {
  return (
    <header className="issue-header">
      <h1 id="issue-title">{issue.issue_name}</h1>
      <p className="issue-badges">
        <Severity value={issue.severity} /> <Status value={issue.status} /> {badge}
        {badge && ' '}
        <span className="muted">
          on <Link to={`/clusters/${encodeURIComponent(issue.cluster_id)}`}>{issue.cluster_name}</Link> · {issue.customer_name}
        </span>
      </p>
    </header>
  );
}

/** `resolvesWhen`: what resolves the issue, said beside "not yet" (an alert issue is resolved by its alerts, not by triage). */
export function IssueFacts({
  issue,
  title,
  alerts,
  resolvesWhen,
}: {
  issue: Issue;
  title: string;
  alerts: [string, React.ReactNode];
  resolvesWhen?: React.ReactNode;
}) {
  return (
    <section aria-labelledby="summary-title" className="card issue-summary">
      <h2 id="summary-title">{title}</h2>
      <dl className="facts">
        <dt>Issue id</dt>
        <dd>
          <code>{issue.issue_id}</code>
        </dd>
        <dt>Cluster</dt>
        <dd>
          <Link to={`/clusters/${encodeURIComponent(issue.cluster_id)}`}>{issue.cluster_name}</Link>
        </dd>
        <dt>Customer</dt>
        <dd>{issue.customer_name}</dd>
        <dt>First seen</dt>
        <dd>
          <When iso={issue.first_seen} />
        </dd>
        <dt>Last seen</dt>
        <dd>
          <When iso={issue.last_seen} />
        </dd>
        <dt>Resolved</dt>
        <dd>
          {issue.resolved_at ? (
            <When iso={issue.resolved_at} />
          ) : (
            <span className="muted">
              not yet
              {resolvesWhen && <>: {resolvesWhen}</>}
            </span>
          )}
        </dd>
        <dt>Duration</dt>
        <dd>
          {duration(issue.duration_minutes)}
          {issue.status === 'Ongoing' ? ' so far' : ''}
        </dd>
        <dt>{alerts[0]}</dt>
        <dd>{alerts[1]}</dd>
        <dt>Triage status</dt>
        <dd>
          <Maybe value={issue.triage_status} />
          {alertedSinceTriage(issue) && (
            <p className="issue-retriage">
              An alert started after the last triage (at <When iso={issue.last_seen} />
              ): check this triage again.
            </p>
          )}
        </dd>
        <dt>Disposition</dt>
        <dd>
          <Maybe value={issue.disposition_status} />
        </dd>
        <dt>Assignee</dt>
        <dd>
          <Maybe value={issue.assignee} />
        </dd>
        <dt>Ticket</dt>
        <dd>
          <TicketLink ticketKey={issue.ticket_key} url={issue.ticket_url} />
        </dd>
        <dt>Notes</dt>
        <dd className="issue-notes">
          <Maybe value={issue.notes} />
        </dd>
        {issue.updated_at && (
          <>
            <dt>Last triaged</dt>
            <dd>
              <When iso={issue.updated_at} />
              {issue.updated_by ? ` by ${issue.updated_by}` : ''}
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
