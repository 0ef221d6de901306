// The issue's ticket: a link when it has one; for admins without one, a button
// that creates it (POST …/create-ticket) and a form that links a ticket made by
// hand (PATCH ticket_key and ticket_url); with one, the same form corrects or removes
// it (a mistyped key is not for ever). The service's answers are shown as its
// problem `detail` says: 503 no provider configured (a note, not a failure: the button gives way to the form that
// links a ticket made by hand), 409 a ticket exists already
// (its key and link from the problem) or the issue was regrouped (a link to the live
// one, as every problem shows it), 502 the provider failed. Two answers name a ticket
// the issue does not hold: a 409 for a ticket created but not stored, and a 502 whose
// ticket may exist (`ticket_may_exist`, found by its label): each offers to link it
// rather than create a second one. The issue itself says when a create got no definite
// answer (`ticket_unconfirmed_at`), so every admin's page warns; creating another then
// is a deliberate `again=true`.
import { When } from './format';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { ApiProblem, endpoint } from '../../api/client';
import { useApiMutation } from '../../api/hooks';
import type { Answer } from '../../api/types';
import { Problem } from '../states';
import { isWebLink, TicketLink } from './format';
import { Button } from '../button';

const createTicketEndpoint = endpoint<'issues', 'createTicket'>('POST', '/api/issues/{issue_id}/create-ticket');
const patchEndpoint = endpoint<'issues', 'patch'>('PATCH', '/api/issues/{issue_id}');

type Issue = Answer<'issues', 'get'>['issue'];

const NOT_SET_UP = 'Ticket creation is not set up on this service: ask whoever runs it, or link a ticket made by hand.';

export function TicketPanel({ issue, etag, canCreate, refetch }: { issue: Issue; etag: string | null; canCreate: boolean; refetch: () => void }) {
  const create = useApiMutation(createTicketEndpoint, ['/api/issues']);
  const link = useApiMutation(patchEndpoint, ['/api/issues']);
  const problem = create.error instanceof ApiProblem ? create.error : null;
  const named = (field: string) => (problem && typeof problem.body[field] === 'string' ? (problem.body[field] as string) : '');
  // A ticket the answer names that this issue does not hold (created, but its key not stored): linkable as it is.
  const existingKey = problem?.status === 409 ? named('ticket_key') : '';
  const existingUrl = problem?.status === 409 ? named('ticket_url') : '';
  const answeredMayExist = (problem?.status === 502 || problem?.status === 409) && problem.body.ticket_may_exist === true;
  // Stored on the issue by a create that got no definite answer (here or anywhere else) until a ticket is linked.
  const unconfirmed = issue.ticket_key ? undefined : issue.ticket_unconfirmed_at;
  const mayExist = answeredMayExist || Boolean(unconfirmed);
  const label = answeredMayExist ? named('ticket_label') : '';
  // No provider (a 503 with no time to retry): not a failure to show in red, and no create can succeed until the
  // service is configured, so the button gives way to a note and the form that links a ticket made by hand.
  const notSetUp = problem?.status === 503 && problem.retryAfter === undefined;
  const linkTicket = (ticket_key: string, ticket_url: string) =>
    // If-Match as the triage form sends it: a ticket linked by someone else meanwhile is a 409, not overwritten.
    link.mutate(
      { params: { issue_id: issue.issue_id }, body: { ticket_key, ticket_url }, headers: etag ? { 'if-match': etag } : {} },
      {
        // The ticket is linked: a failed create before it (a 503 without a provider) is stale, and would show under "Linked …".
        onSuccess: () => {
          create.reset();
          refetch();
        },
        onError: (error) => error.status === 409 && refetch(),
      },
    );

  // The button or form that did it gives way to the ticket: focus moves to what was done (as after a proposal's
  // review), not to the top of the page, where a keyboard user who pressed Enter in the key field ended up.
  const created = useRef<HTMLParagraphElement>(null);
  const linked = useRef<HTMLParagraphElement>(null);
  const notSetUpNote = useRef<HTMLDivElement>(null);
  const linkedShown = link.isSuccess && Boolean(issue.ticket_key);
  const removedShown = link.isSuccess && !issue.ticket_key && link.variables?.body?.ticket_key === '';
  useEffect(() => {
    if (create.isSuccess) created.current?.focus();
  }, [create.isSuccess]);
  useEffect(() => {
    if (notSetUp) notSetUpNote.current?.focus();
  }, [notSetUp]);
  useEffect(() => {
    if (linkedShown || removedShown) linked.current?.focus();
  }, [linkedShown, removedShown]);

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
      {unconfirmed && !answeredMayExist && (
        <p className="notice issue-ticket-unconfirmed">
          A ticket creation at <When iso={unconfirmed} /> got no definite answer from the tracker: a ticket may exist there, labelled with this issue's id. Link
          it below rather than creating another.
        </p>
      )}
      {create.isSuccess && (
        <p className="notice" role="status" tabIndex={-1} ref={created}>
          Created <TicketLink ticketKey={create.data.ticket_key} url={create.data.ticket_url} />.
        </p>
      )}
      {linkedShown && (
        <p className="notice" role="status" tabIndex={-1} ref={linked}>
          Linked <TicketLink ticketKey={issue.ticket_key} url={issue.ticket_url} />.
        </p>
      )}
      {removedShown && (
        <p className="notice" role="status" tabIndex={-1} ref={linked}>
          Ticket removed from this issue. The ticket itself is left as it is in the tracker.
        </p>
      )}
      {notSetUp && !issue.ticket_key && (
        <div className="notice" role="status" tabIndex={-1} ref={notSetUpNote}>
          <p>{NOT_SET_UP}</p>
          {/* What the service says is missing (no provider, or one whose settings are incomplete). */}
          <p className="muted">{problem.detail}</p>
        </div>
      )}
      {canCreate && !issue.ticket_key && !notSetUp && (
        <Button
          type="button"
          // A ticket that may exist, or one created but not linked: linking it comes first; another is a deliberate second ticket.
          className={mayExist || existingKey ? undefined : 'primary'}
          onClick={() => {
            // A failed link before this create says nothing about it.
            link.reset();
            create.mutate(
              // A ticket that may exist: another is asked for on purpose.
              { params: { issue_id: issue.issue_id }, ...(mayExist ? { query: { again: 'true' } } : {}) },
              // A 409 means the issue has (or is getting) a ticket; a 502 may have left one: read it again to show it.
              { onError: (error) => (error.status === 409 || error.body.ticket_may_exist === true) && refetch() },
            );
          }}
          disabled={create.isPending}
        >
          {create.isPending ? 'Creating ticket…' : mayExist || existingKey ? 'Create another ticket anyway' : 'Create ticket'}
        </Button>
      )}
      {create.isError && !notSetUp && (
        <Problem error={create.error} className="issue-ticket-problem">
          {existingKey && (
            <p>
              {issue.ticket_key === existingKey ? 'Existing ticket: ' : 'The ticket, not linked to this issue: '}
              <TicketLink ticketKey={existingKey} url={existingUrl} />
              {canCreate && !issue.ticket_key && (
                <>
                  {' '}
                  <Button type="button" onClick={() => linkTicket(existingKey, existingUrl)} disabled={link.isPending}>
                    Link {existingKey} to this issue
                  </Button>
                </>
              )}
            </p>
          )}
          {label && (
            <p className="muted">
              Look in the tracker for a ticket labelled <code>{label}</code>. If it is there, link it below rather than creating another.
            </p>
          )}
        </Problem>
      )}
      {canCreate && !issue.ticket_key && <LinkTicketForm open={mayExist || notSetUp} pending={link.isPending} onLink={linkTicket} />}
      {canCreate && issue.ticket_key && (
        // Keyed by the ticket, so the form starts from the one the issue holds now.
        <LinkTicketForm
          key={`${issue.ticket_key} ${issue.ticket_url}`}
          open={false}
          pending={link.isPending}
          onLink={linkTicket}
          current={{ key: issue.ticket_key, url: issue.ticket_url }}
          onRemove={() => linkTicket('', '')}
        />
      )}
      {link.isError && <Problem error={link.error} className="issue-ticket-problem" />}
    </section>
  );
}

/**
 * A ticket made by hand (or by a create whose answer was lost), linked by its key and optional address; with
 * `current`, the issue's ticket corrected or (`onRemove`) unlinked.
 */
function LinkTicketForm({
  open,
  pending,
  onLink,
  current,
  onRemove,
}: {
  open: boolean;
  pending: boolean;
  onLink(key: string, url: string): void;
  current?: { key: string; url: string };
  onRemove?(): void;
}) {
  const id = useId();
  const [key, setKey] = useState(current?.key ?? '');
  const [url, setUrl] = useState(current?.url ?? '');
  const unchanged = current !== undefined && key.trim() === current.key && url.trim() === current.url;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (key.trim()) onLink(key.trim(), url.trim());
  };
  return (
    <details className="issue-ticket-link" open={open || undefined}>
      <summary>{current ? 'Change or remove the ticket' : 'Link an existing ticket'}</summary>
      <form onSubmit={submit}>
        <label htmlFor={`${id}-key`}>Ticket key</label>
        {/* One key, as the service takes it (ends trimmed): a space inside is said before sending. */}
        <input
          id={`${id}-key`}
          value={key}
          onChange={(e) => setKey(e.target.value)}
          maxLength={64}
          required
          pattern="\s*\S+\s*"
          title="One ticket key, with no spaces (such as OPS-42)"
          placeholder="OPS-42"
        />
        <label htmlFor={`${id}-url`}>Address (optional)</label>
        {/* type=url alone lets ftp: or mailto: through, which the service refuses: http(s) only, said before sending. */}
        <input
          id={`${id}-url`}
          type="url"
          pattern="[Hh][Tt][Tt][Pp][Ss]?://.+"
          title="An http:// or https:// address"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://…"
        />
        <Button type="submit" disabled={pending || !key.trim() || unchanged}>
          {pending ? 'Linking…' : current ? 'Save ticket' : 'Link ticket'}
        </Button>
        {onRemove && (
          <Button type="button" onClick={onRemove} disabled={pending}>
            Remove the ticket from this issue
          </Button>
        )}
      </form>
    </details>
  );
}
