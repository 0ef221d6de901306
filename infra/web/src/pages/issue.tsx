// One alert issue (/issues/{id}): its summary and alert timeline, the evidence
// (recent alerts, 24-hour metrics, inventory) and the cluster's other issues;
// admins and superadmins also triage it and create its ticket. Viewers read only.
import { Link, useParams } from 'react-router';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import type { Answer } from '../api/types';
import { ClusterHistory, Evidence, Timeline } from '../components/issues/evidence';
import { duration, Maybe, Severity, Status, TicketLink, When } from '../components/issues/format';
import { TicketPanel } from '../components/issues/ticket-panel';
import { TriageForm } from '../components/issues/triage-form';
import { Loading, Problem } from '../components/states';
import { ADMINS, useSession } from '../session';
import './issue.css';

const issueEndpoint = endpoint<'issues', 'get'>('GET', '/api/issues/{issue_id}');

type Issue = Answer<'issues', 'get'>['issue'];

export default function IssuePage() {
  const { issueId = '' } = useParams();
  const { can } = useSession();
  const detail = useApi(issueEndpoint, { params: { issue_id: issueId } }, { retry: (count, error) => error.status >= 500 && count < 2 });
  const admin = can(...ADMINS);

  return (
    <section className="issue-page" aria-labelledby="issue-title">
      <p className="issue-back">
        <Link to="/issues">← Alert issues</Link>
      </p>
      {detail.isPending ? (
        <>
          <h1 id="issue-title">Alert issue</h1>
          <Loading what="the issue" />
        </>
      ) : detail.isError ? (
        <>
          <h1 id="issue-title">{detail.error.status === 404 ? 'Issue not found' : 'Alert issue'}</h1>
          <Problem error={detail.error} retry={detail.error.status === 404 ? undefined : () => void detail.refetch()} />
        </>
      ) : (
        <>
          <Header issue={detail.data.issue} />
          <div className="issue-layout">
            <div className="issue-main">
              <Summary issue={detail.data.issue} />
              <Timeline alerts={detail.data.alerts} />
            </div>
            <aside className="issue-side" aria-label={admin ? 'Triage and ticket' : 'Ticket'}>
              {admin && <TriageForm issue={detail.data.issue} refetch={detail.refetch} />}
              <TicketPanel issue={detail.data.issue} canCreate={admin} refetch={() => void detail.refetch()} />
            </aside>
          </div>
          <Evidence issueId={issueId} />
          <ClusterHistory issueId={issueId} />
        </>
      )}
    </section>
  );
}

function Header({ issue }: { issue: Issue }) {
  return (
    <header className="issue-header">
      <h1 id="issue-title">{issue.issue_name}</h1>
      <p className="issue-badges">
        <Severity value={issue.severity} /> <Status value={issue.status} />{' '}
        <span className="muted">
          on <Link to={`/clusters/${encodeURIComponent(issue.cluster_id)}`}>{issue.cluster_name}</Link> · {issue.customer_name}
        </span>
      </p>
    </header>
  );
}

function Summary({ issue }: { issue: Issue }) {
  return (
    <section aria-labelledby="summary-title" className="card issue-summary">
      <h2 id="summary-title">Summary</h2>
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
        <dd>{issue.resolved_at ? <When iso={issue.resolved_at} /> : <span className="muted">not yet</span>}</dd>
        <dt>Duration</dt>
        <dd>
          {duration(issue.duration_minutes)}
          {issue.status === 'Ongoing' ? ' so far' : ''}
        </dd>
        <dt>Alerts</dt>
        <dd>
          {issue.alert_count} ({issue.alert_names.join(', ')})
        </dd>
        <dt>Triage status</dt>
        <dd>
          <Maybe value={issue.triage_status} />
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
