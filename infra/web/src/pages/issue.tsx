// One alert issue (/issues/{id}): its summary and alert timeline, the evidence
// (recent alerts, 24-hour metrics, inventory) and the cluster's other issues;
// admins and superadmins also triage it and create its ticket. Viewers read only.
import { useParams } from 'react-router';
import { endpoint } from '../api/client';
import { useApiTagged } from '../api/hooks';
import { ClusterHistory, Evidence, Timeline } from '../components/issues/evidence';
import { IssueFacts, IssueFrame, IssueHeader } from '../components/issues/issue-page';
import { TicketPanel } from '../components/issues/ticket-panel';
import { TriageForm } from '../components/issues/triage-form';
import { MAY_TRIAGE_ISSUES } from '../api/access';
import { useSession } from '../session';
import type { Answer } from '../api/types';
import { SiblingLink } from '../components/list-link';
import { When } from '../components/time';
import './issue.css';

const issueEndpoint = endpoint<'issues', 'get'>('GET', '/api/issues/{issue_id}');

export default function IssuePage() {
  const { issueId = '' } = useParams();
  const { can } = useSession();
  const detail = useApiTagged(issueEndpoint, { params: { issue_id: issueId } }, { retry: (count, error) => error.status >= 500 && count < 2 });
  const admin = can(...MAY_TRIAGE_ISSUES);

  return (
    <IssueFrame className="issue-page" back={['/issues', 'Alert issues']} title="Alert issue" notFound="Issue not found" detail={detail}>
      {(data) => (
        <>
          <IssueHeader issue={data.issue} />
          {data.regrouped && <RegroupedNote regrouped={data.regrouped} />}
          <div className="issue-layout">
            <div className="issue-main">
              <IssueFacts issue={data.issue} title="Summary" alerts={['Alerts', `${data.issue.alert_count} (${data.issue.alert_names.join(', ')})`]} />
              <Timeline alerts={data.alerts} total={data.alerts_total} truncated={data.alerts_truncated} />
            </div>
            {/* Keyed by the issue: going to another issue (only :issueId changes, the page stays mounted)
                starts the form and the ticket panel afresh, with none of this one's edits or notices. */}
            <aside key={data.issue.issue_id} className="issue-side" aria-label={admin ? 'Triage and ticket' : 'Ticket'}>
              {/* A regrouped issue takes no triage nor ticket (409): its successor does. */}
              {admin && !data.regrouped && <TriageForm group="issues" issue={data.issue} etag={data.etag} refetch={detail.refetch} />}
              <TicketPanel issue={data.issue} etag={data.etag} canCreate={admin && !data.regrouped} refetch={() => void detail.refetch()} />
            </aside>
          </div>
          <Evidence issueId={issueId} />
          <ClusterHistory issueId={issueId} />
        </>
      )}
    </IssueFrame>
  );
}

/**
 * Why an issue reads Resolved while its alerts may still fire: regrouping folded it into another (a bridging alert
 * merged two, or the grouping keys changed), and it is kept as it was, for its history and its ticket's link.
 */
function RegroupedNote({ regrouped }: { regrouped: NonNullable<Answer<'issues', 'get'>['regrouped']> }) {
  return (
    <p className="notice issue-regrouped" role="note">
      <strong>
        Regrouped <When iso={regrouped.at} />.
      </strong>{' '}
      {regrouped.into ? (
        <>
          Its alerts are followed, triaged and ticketed on the live issue{' '}
          <SiblingLink to={`/issues/${encodeURIComponent(regrouped.into)}`}>{regrouped.into}</SiblingLink>; this one is kept as it was, resolved as of then.
        </>
      ) : (
        'Its alerts now form other issues (the grouping keys changed); this one is kept as it was, resolved as of then.'
      )}
    </p>
  );
}
