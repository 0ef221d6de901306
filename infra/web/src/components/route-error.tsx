// What a route shows when its page cannot be shown: the page's code failed to load
// (a new release replaced the file, the connection dropped) or it threw while
// rendering. Without it React Router shows its bare "Unexpected Application Error!"
// with no way on; this says what happened and offers a reload.
import { useState } from 'react';
import { isRouteErrorResponse, useRouteError } from 'react-router';
import { Button } from './button';

/**
 * The browsers' and Vite's words for a page's code (a lazily loaded chunk, or its styles) that did not arrive:
 * Chromium, Firefox, Safari, and Vite's preload of the chunk's CSS.
 */
const CHUNK_FAILED =
  /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed|Unable to preload CSS/i;

/** Whether the service answers at all: a reload while it does not would leave the console for the browser's own error page. */
async function serviceAnswers(): Promise<boolean> {
  try {
    await fetch('/', { method: 'HEAD', cache: 'no-store' });
    return true;
  } catch {
    return false;
  }
}

export function RouteError() {
  return <PageError error={useRouteError()} />;
}

/** The message of RouteError for `error`: also what a page whose code failed to load shows until it loads (app.tsx). */
export function PageError({ error }: { error: unknown }) {
  const message = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : error instanceof Error ? error.message : String(error);
  const chunk = CHUNK_FAILED.test(message);
  const [checking, setChecking] = useState(false);
  const [unreachable, setUnreachable] = useState(false);
  const reload = async () => {
    setChecking(true);
    setUnreachable(false);
    if (await serviceAnswers()) {
      window.location.reload();
      return;
    }
    setChecking(false);
    setUnreachable(true);
  };
  return (
    <section className="route-error" aria-labelledby="route-error-title">
      <h1 id="route-error-title">This page could not be shown</h1>
      <div className="state problem" role="alert">
        {chunk ? (
          <>
            <p>The console could not load this page from the service: the connection dropped, the service is restarting, or a new version was deployed.</p>
            <p className="muted">{message}</p>
          </>
        ) : (
          <p>{message}</p>
        )}
        <p>Reloading loads the console afresh, which usually fixes it (a new version may have been deployed meanwhile).</p>
        {unreachable && (
          <p>The service still does not answer, so the console was not reloaded (it would be lost until the service is back). Try again in a moment.</p>
        )}
        {/* Button: focus stays on it while it checks (a disabled button would drop it to the top of the page). */}
        <Button type="button" disabled={checking} onClick={() => void reload()}>
          {checking ? 'Checking…' : 'Reload'}
        </Button>
      </div>
    </section>
  );
}
