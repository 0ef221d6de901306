// What a route shows when its page cannot be shown: the page's code failed to load
// (a new release replaced the file, the connection dropped) or it threw while
// rendering. Without it React Router shows its bare "Unexpected Application Error!"
// with no way on; this says what happened and offers a reload.
import { isRouteErrorResponse, useRouteError } from 'react-router';

export function RouteError() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : error instanceof Error ? error.message : String(error);
  return (
    <section className="route-error" aria-labelledby="route-error-title">
      <h1 id="route-error-title">This page could not be shown</h1>
      <div className="state problem" role="alert">
        <p>{message}</p>
        <p>Reloading loads the console afresh, which usually fixes it (a new version may have been deployed meanwhile).</p>
        <button type="button" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    </section>
  );
}
