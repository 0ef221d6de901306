// Loading, empty and error states every page uses: an error shows the service's
// problem+json `detail`; an empty state says how data arrives.
import type { ReactNode } from 'react';
import { ApiProblem } from '../api/client';

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

export function Problem({ error, retry }: { error: unknown; retry?: () => void }) {
  const problem = error instanceof ApiProblem ? error : null;
  return (
    <div className="state problem" role="alert">
      <strong>{problem ? `${problem.title} (${problem.status || 'no answer'})` : 'Something went wrong'}</strong>
      <p>{problem ? problem.detail : error instanceof Error ? error.message : String(error)}</p>
      {retry && (
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
