// Loading, empty and error states every page uses: an error shows the service's
// problem+json `detail` (and where to go on, when the problem names a place); an
// empty state says how data arrives.
import type { ReactNode } from 'react';
import { ApiProblem } from '../api/client';
import { SiblingLink } from './list-link';
import { count } from './format';

export function Loading({ what }: { what: string }) {
  return (
    <p className="state" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state empty">{children}</div>;
}

/** A paged list opened past its last page (an old link or a bookmark): says so, and offers the last page. */
export function PastLastPage({ page, last, onLast }: { page: number; last: number; onLast: () => void }) {
  return (
    <Empty>
      <p>
        Page {count(page)} is past the last page ({count(last)}).
      </p>
      <button type="button" onClick={onLast}>
        Go to page {last}
      </button>
    </Empty>
  );
}

/** A refusal that asks for another try (429, 503 with Retry-After) says when; nothing for any other. */
export function RetryAfterNote({ problem }: { problem: ApiProblem | null }) {
  if (problem?.retryAfter === undefined) return null;
  return <p className="muted">A passing refusal: nothing was changed, and the service asks for another try in {problem.retryAfter} s.</p>;
}

/**
 * A failed read or write: the problem's title and detail, then what the caller adds (`children`: e.g. what to do next).
 * A write refused on a regrouped issue names the live one (`superseded_by`): linked under `liveIssues`, the pages of that kind of issue.
 */
export function Problem({
  error,
  retry,
  className = '',
  liveIssues = '/issues',
  children,
}: {
  error: unknown;
  retry?: () => void;
  className?: string;
  liveIssues?: '/issues' | '/ai-issues';
  children?: ReactNode;
}) {
  const problem = error instanceof ApiProblem ? error : null;
  // The request itself was refused (bad input, no such item, not allowed): sent again, it is refused again.
  const retryable = !problem || ![400, 403, 404, 413, 422].includes(problem.status);
  return (
    <div className={`state problem ${className}`.trim()} role="alert">
      <strong>{problem ? `${problem.title} (${problem.status || 'no answer'})` : 'Something went wrong'}</strong>
      <p>{problem ? problem.detail : error instanceof Error ? error.message : String(error)}</p>
      <RetryAfterNote problem={problem} />
      {problem?.supersededBy && (
        <p>
          <SiblingLink to={`${liveIssues}/${encodeURIComponent(problem.supersededBy)}`}>Continue on the live issue {problem.supersededBy}</SiblingLink>
        </p>
      )}
      {children}
      {retry && retryable && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** How fleet data gets here, for empty states. */
export const HOW_DATA_ARRIVES =
  'Clusters, metrics, alerts and logs arrive through the ingest routes (POST /api/ingest/…, or `npm run ingest` locally); scores follow at the next refresh.';
