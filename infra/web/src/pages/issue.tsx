// One alert issue (/issues/{id}): its summary and alert timeline, the evidence
// (recent alerts, 24-hour metrics, inventory) and the cluster's other issues;
// admins and superadmins also triage it and create its ticket. Viewers read only.
import { endpoint } from '../api/client';
import { useApiTagged } from '../api/hooks';
import { ClusterHistory, Evidence, Timeline } from '../components/issues/evidence';
import { IssueFacts, IssueFrame, IssueHeader } from '../components/issues/issue-page';
import { TicketPanel } from '../components/issues/ticket-panel';
import { TriageForm } from '../components/issues/triage-form';
import { MAY_TRIAGE_ISSUES } from '../api/access';
import { useSession } from '../session';
import type { Answer } from '../api/types';
import { Link, useParams } from 'react-router';
import { SiblingLink } from '../components/list-link';
import { When } from '../components/time';
import './issue.css';
import { count } from '../components/format';

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
          {!data.regrouped && <QuietNote detail={data} />}
          <div className="issue-layout">
            <div className="issue-main">
              <IssueFacts
                issue={data.issue}
                title="Summary"
                alerts={['Alerts', `${count(data.issue.alert_count)} (${data.issue.alert_names.join(', ')})`]}
                // Triage offers "Closed" among its words, which leaves Status as it was: what does resolve it, said where it is read.
                resolvesWhen="it resolves when its alerts have all ended and the issue rules' quiet period has passed (triage does not resolve it)"
              />
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

/**
 * Why an issue reads Ongoing while every alert it shows has ended: it resolves once the issue rules' quiet period
 * (`resolution.quiet_minutes`) passes with no new alert, at the next grouping (an alert ingested for the cluster, or
 * the recompute every 15 minutes), resolved as of its last alert's end. Without this the page said Ongoing, "Resolved:
 * not yet" and "so far" above a timeline of Resolved alerts, and an on-call engineer could not tell whether the
 * issue was stuck. Said only when the answer holds every alert of the issue (a cut list may leave one firing out).
 */
function QuietNote({ detail }: { detail: Answer<'issues', 'get'> }) {
  const { issue, alerts, alerts_truncated } = detail;
  if (issue.status !== 'Ongoing' || alerts_truncated || alerts.length === 0 || alerts.some((a) => a.status !== 'Resolved' || !a.ends_at)) return null;
  const lastEnd = alerts.map((a) => a.ends_at!).sort((a, b) => Date.parse(b) - Date.parse(a))[0]!;
  return (
    <p className="notice issue-quiet" role="note">
      <strong>
        Every alert has ended, the last <When iso={lastEnd} />.
      </strong>{' '}
      The issue stays Ongoing until the quiet period of the <Link to="/rules?set=issue">issue rules</Link> has passed with no new alert; it is then Resolved as
      of that last end, at the next grouping (a new alert of the cluster, or the recompute every 15 minutes). A new alert before then keeps it open.
    </p>
  );
}
