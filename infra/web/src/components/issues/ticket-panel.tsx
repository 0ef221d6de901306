// The issue's ticket: a link when it has one; for admins without one, a button
// that creates it (POST …/create-ticket). The service's answers are shown as its
// problem `detail` says: 503 no provider configured, 409 a ticket exists already
// (its key and link from the problem) or the issue was regrouped (a link to the live
// one, as every problem shows it), 502 the provider failed.
import { ApiProblem, endpoint } from '../../api/client';
import { useApiMutation } from '../../api/hooks';
import type { Answer } from '../../api/types';
import { Problem } from '../states';
import { isWebLink, TicketLink } from './format';

const createTicketEndpoint = endpoint<'issues', 'createTicket'>('POST', '/api/issues/{issue_id}/create-ticket');

type Issue = Answer<'issues', 'get'>['issue'];

const WHAT_TO_DO: Record<number, string> = {
  503: 'Ticket creation is not set up on this service; ask whoever runs it to configure a ticket provider.',
  502: 'Nothing was stored on the issue; you can try again.',
};

export function TicketPanel({ issue, canCreate, refetch }: { issue: Issue; canCreate: boolean; refetch: () => void }) {
  const create = useApiMutation(createTicketEndpoint, ['/api/issues']);
  const problem = create.error instanceof ApiProblem ? create.error : null;
  const existingKey = problem?.status === 409 && typeof problem.body.ticket_key === 'string' ? problem.body.ticket_key : '';
  const existingUrl = problem?.status === 409 && typeof problem.body.ticket_url === 'string' ? problem.body.ticket_url : '';

  return (
    <section className="card issue-ticket" aria-labelledby="ticket-title">
      <h2 id="ticket-title">Ticket</h2>
      {issue.ticket_key ? (
        <p>
          <TicketLink ticketKey={issue.ticket_key} url={issue.ticket_url} />
          {issue.ticket_url && !isWebLink(issue.ticket_url) && <span className="muted"> ({issue.ticket_url})</span>}
        </p>
      ) : (
        <p className="muted">No ticket yet.</p>
      )}
      {create.isSuccess && (
        <p className="notice" role="status">
          Created <TicketLink ticketKey={create.data.ticket_key} url={create.data.ticket_url} />.
        </p>
      )}
      {canCreate && !issue.ticket_key && (
        <button
          type="button"
          className="primary"
          onClick={() =>
            create.mutate(
              { params: { issue_id: issue.issue_id } },
              // A 409 means the issue has (or is getting) a ticket: read it again to show it.
              { onError: (error) => error.status === 409 && refetch() },
            )
          }
          disabled={create.isPending}
        >
          {create.isPending ? 'Creating ticket…' : 'Create ticket'}
        </button>
      )}
      {create.isError && (
        <Problem error={create.error} className="issue-ticket-problem">
          {existingKey && (
            <p>
              Existing ticket: <TicketLink ticketKey={existingKey} url={existingUrl} />
            </p>
          )}
          {problem && WHAT_TO_DO[problem.status] && <p className="muted">{WHAT_TO_DO[problem.status]}</p>}
        </Problem>
      )}
    </section>
  );
}
