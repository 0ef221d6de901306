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
          <div className="issue-layout">
            <div className="issue-main">
              <IssueFacts issue={data.issue} title="Summary" alerts={['Alerts', `${data.issue.alert_count} (${data.issue.alert_names.join(', ')})`]} />
              <Timeline alerts={data.alerts} total={data.alerts_total} truncated={data.alerts_truncated} />
            </div>
            {/* Keyed by the issue: going to another issue (only :issueId changes, the page stays mounted)
                starts the form and the ticket panel afresh, with none of this one's edits or notices. */}
            <aside key={data.issue.issue_id} className="issue-side" aria-label={admin ? 'Triage and ticket' : 'Ticket'}>
              {admin && <TriageForm group="issues" issue={data.issue} etag={data.etag} refetch={detail.refetch} />}
              <TicketPanel issue={data.issue} etag={data.etag} canCreate={admin} refetch={() => void detail.refetch()} />
            </aside>
          </div>
          <Evidence issueId={issueId} />
          <ClusterHistory issueId={issueId} />
        </>
      )}
    </IssueFrame>
  );
}
