// Rule change proposals (/proposals?status=pending): a superadmin sees everyone's,
// others their own (the API decides). The status filter lives in the URL.
import { Link } from 'react-router';
import { useApi } from '../api/hooks';
import { type ChangeSummary, changesEndpoint, NAME_LABEL } from '../components/rules/api';
import { When } from '../components/time';
import { StatusBadge } from '../components/rules/status-badge';
import { Email } from '../components/email';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import { MAY_REVIEW_PROPOSALS } from '../api/access';
import { useSession } from '../session';
import '../components/rules/rules.css';
import { ItemLink } from '../components/list-link';
import './proposals.css';

const URL_DEFAULTS = { status: '' };
const STATUSES = ['', 'pending', 'approved', 'rejected', 'withdrawn'] as const;
type StatusFilter = (typeof STATUSES)[number];

export default function ProposalsPage() {
  const [url, setUrl] = useUrlState(URL_DEFAULTS);
  const status: StatusFilter = (STATUSES as readonly string[]).includes(url.status as string) ? (url.status as StatusFilter) : '';
  const { can } = useSession();
  const changes = useApi(changesEndpoint, { query: { status_filter: status } });

  return (
    <section className="proposals-page" aria-labelledby="proposals-title">
      <h1 id="proposals-title">Rule proposals</h1>
      <p className="muted">
        {can(...MAY_REVIEW_PROPOSALS)
          ? 'Every proposed rule change; open one to see its diff and impact, and approve or reject it.'
          : 'Your proposed rule changes and what became of them. A superadmin reviews them.'}{' '}
        Propose a change from <Link to="/rules">Rules</Link>.
      </p>
      <div className="toolbar">
        <label>
          Status
          <br />
          <select value={status} onChange={(e) => setUrl({ status: e.target.value })}>
            <option value="">All</option>
            <option value="pending">Pending</option>
            <option value="approved">Approved</option>
            <option value="rejected">Rejected</option>
            <option value="withdrawn">Withdrawn</option>
          </select>
        </label>
        {changes.data && (
          <span className="muted proposals-count" role="status">
            {changes.data.total} {changes.data.total === 1 ? 'proposal' : 'proposals'}
            {changes.data.total > changes.data.changes.length && ` (the newest ${changes.data.changes.length} shown; narrow by status to reach older ones)`}
          </span>
        )}
      </div>
      {changes.isPending ? (
        <Loading what="the proposals" />
      ) : changes.isError ? (
        <Problem error={changes.error} retry={() => void changes.refetch()} />
      ) : changes.data.changes.length === 0 ? (
        <Empty>
          {status ? `No ${status} proposals.` : 'No proposals yet.'} A rule edit saved by an admin or viewer on the <Link to="/rules">Rules</Link> page becomes
          one.
        </Empty>
      ) : (
        <ProposalTable changes={changes.data.changes} />
      )}
    </section>
  );
}

function ProposalTable({ changes }: { changes: ChangeSummary[] }) {
  return (
    <ScrollRegion label="Proposals">
      <table className="proposals-table">
        <caption className="visually-hidden">Proposals</caption>
        <thead>
          <tr>
            <th scope="col">Proposal</th>
            <th scope="col">Rule set</th>
            <th scope="col">Status</th>
            <th scope="col">Proposed by</th>
            <th scope="col">Proposed</th>
            <th scope="col" className="num">
              Based on
            </th>
            <th scope="col">Reviewed</th>
            <th scope="col" className="num">
              Applied as
            </th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c) => (
            <tr key={c.change_id}>
              <th scope="row">
                <ItemLink to={`/proposals/${encodeURIComponent(c.change_id)}`}>{c.change_id}</ItemLink>
              </th>
              <td>{NAME_LABEL[c.rule_set]}</td>
              <td>
                <StatusBadge status={c.status} />
              </td>
              <td className="proposals-who">
                <Email address={c.proposed_by} />
              </td>
              <td>
                <When iso={c.proposed_at} />
              </td>
              <td className="num">v{c.base_version}</td>
              <td className="proposals-review">
                {c.reviewed_by ? (
                  <>
                    <Email address={c.reviewed_by} />, <When iso={c.reviewed_at} />
                    {c.review_note ? <span className="muted"> · “{c.review_note}”</span> : null}
                  </>
                ) : (
                  <span className="muted">not yet</span>
                )}
              </td>
              <td className="num">{c.applied_version === null ? '—' : `v${c.applied_version}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
