// One AI issue (/ai-issues/{id}): how it was grouped (model, or rule-based and
// marked so), the AI summary and reasoning, its facts and its linked alerts;
// admins and superadmins triage it (assignee "me" available). Viewers read only.
import { Link, useParams } from 'react-router';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import type { Answer } from '../api/types';
import { GroupedBy, isRuleBased } from '../components/ai/grouping';
import { AiTriageForm } from '../components/ai/triage-form';
import { Timeline } from '../components/issues/evidence';
import { duration, Maybe, Severity, Status, TicketLink, When } from '../components/issues/format';
import { Loading, Problem } from '../components/states';
import { ADMINS, useSession } from '../session';
import './issue.css';
import './ai-issue.css';

const issueEndpoint = endpoint<'ai-issues', 'get'>('GET', '/api/ai-issues/{issue_id}');

type Issue = Answer<'ai-issues', 'get'>['issue'];

export default function AiIssuePage() {
  const { issueId = '' } = useParams();
  const { can } = useSession();
  const detail = useApi(issueEndpoint, { params: { issue_id: issueId } }, { retry: (count, error) => error.status >= 500 && count < 2 });
  const admin = can(...ADMINS);

  return (
    <section className="issue-page ai-issue-page" aria-labelledby="issue-title">
      <p className="issue-back">
        <Link to="/ai-issues">← AI issues</Link>
      </p>
      {detail.isPending ? (
        <>
          <h1 id="issue-title">AI issue</h1>
          <Loading what="the issue" />
        </>
      ) : detail.isError ? (
        <>
          <h1 id="issue-title">{detail.error.status === 404 ? 'AI issue not found' : 'AI issue'}</h1>
          <Problem error={detail.error} retry={detail.error.status === 404 ? undefined : () => void detail.refetch()} />
        </>
      ) : (
        <>
          <Header issue={detail.data.issue} />
          <div className="issue-layout">
            <div className="issue-main">
              <Analysis issue={detail.data.issue} />
              <Summary issue={detail.data.issue} />
              <Timeline alerts={detail.data.alerts} />
            </div>
            {admin && (
              <aside className="issue-side" aria-label="Triage">
                <AiTriageForm issue={detail.data.issue} refetch={detail.refetch} />
              </aside>
            )}
          </div>
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
        <Severity value={issue.severity} /> <Status value={issue.status} /> <GroupedBy value={issue.grouped_by} />{' '}
        <span className="muted">
          on <Link to={`/clusters/${encodeURIComponent(issue.cluster_id)}`}>{issue.cluster_name}</Link> · {issue.customer_name}
        </span>
      </p>
    </header>
  );
}

function Analysis({ issue }: { issue: Issue }) {
  const rules = isRuleBased(issue.grouped_by);
  return (
    <section aria-labelledby="analysis-title" className="card ai-issue-analysis">
      <h2 id="analysis-title">{rules ? 'Grouping' : 'AI analysis'}</h2>
      {rules && (
        <p className="notice ai-issue-rules" role="note">
          <strong>Rule-based grouping.</strong> No language model grouped these alerts (none is configured, or its answer could not be used); the rules engine
          did, and wrote the summary and reasoning below.
        </p>
      )}
      <h3>Summary</h3>
      <p className="ai-issue-text">
        <Maybe value={issue.ai_summary} />
      </p>
      <h3>Reasoning</h3>
      <p className="ai-issue-text">
        <Maybe value={issue.ai_reasoning} />
      </p>
      <p className="muted ai-issue-by">Grouped by: {rules ? 'the rules engine' : issue.grouped_by.slice('llm:'.length)}</p>
    </section>
  );
}

function Summary({ issue }: { issue: Issue }) {
  return (
    <section aria-labelledby="summary-title" className="card issue-summary">
      <h2 id="summary-title">Facts</h2>
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
        <dt>Linked alerts</dt>
        <dd>{issue.alert_count}</dd>
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
