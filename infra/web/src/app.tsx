// The console's pages and their URLs. Every page but sign-in and activation needs
// a session; each page's code loads when it is first visited (route-level
// splitting), so the first load carries only the shell and the page asked for. A page
// that fails to load or render shows the error, with a reload, inside the shell.
import { type ComponentType, useEffect, useState } from 'react';
import { createBrowserRouter, Navigate, Outlet, ScrollRestoration, useLocation } from 'react-router';
import { PageError, RouteError } from './components/route-error';
import { Loading } from './components/states';
import { Shell } from './components/shell';
import type { Role } from './api/types';
import { MAY_LIST_USERS, MAY_READ_AUDIT, MAY_READ_SETTINGS, MAY_SEE_LLM_COST, MAY_SEE_PULLS } from './api/access';
import { useSession } from './session';

/** `/fleet` and `/clusters` (a cluster page's path cut back): the fleet page, at `/`, with the query kept. */
function ToFleet() {
  const { search, hash } = useLocation();
  return <Navigate to={{ pathname: '/', search, hash }} replace />;
}

function RequireSession() {
  const { user, signedOut } = useSession();
  const location = useLocation();
  // The whole link, fragment included: sign-in leads back to exactly what was opened (or the session was on when it
  // expired). Not after Sign out: the next person to sign in on the tab starts afresh.
  if (!user && signedOut) return <Navigate to="/sign-in" replace />;
  if (!user) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search + location.hash)}`} replace />;
  return (
    <Shell>
      <Outlet />
      {/* Back and forward return to where the page was; a link opens its page at the top. A filter written into the
          URL keeps the list where it was (useUrlState's preventScrollReset). */}
      <ScrollRestoration />
    </Shell>
  );
}

/** Pages only some roles may open: others get a message instead (and never see them in the navigation). */
function RequireRole({ roles }: { roles: readonly Role[] }) {
  const { can } = useSession();
  if (!can(...roles)) {
    return (
      <section>
        <h1>Not available</h1>
        <p>This page needs the {roles.join(' or ')} role.</p>
      </section>
    );
  }
  return <Outlet />;
}

type PageModule = () => Promise<{ default: ComponentType }>;

/**
 * A page's route, its code loaded when first visited. React Router keeps what `lazy` gave for the life of the tab, a
 * failure too: a page whose code did not arrive during a moment offline stayed "could not be shown" on every later
 * visit, the connection long back, until a full reload. So a failed load gives a page that shows the failure, and
 * loads the code again each time it is opened later (the browser fetches a failed module again), then shows the page.
 */
const page = (load: PageModule) => async () => {
  try {
    return { Component: (await load()).default };
  } catch (error) {
    return { element: <LoadedLater entry={{ load, loaded: null, error, failedNow: true }} /> };
  }
};

interface Entry {
  load: PageModule;
  loaded: ComponentType | null;
  /** The last load's failure. */
  error: unknown;
  /** The visit whose load just failed shows that failure; every later one loads again. */
  failedNow: boolean;
}

function LoadedLater({ entry }: { entry: Entry }) {
  const [loading, setLoading] = useState(!entry.failedNow && !entry.loaded);
  useEffect(() => {
    if (entry.loaded) return;
    if (entry.failedNow) {
      entry.failedNow = false;
      return;
    }
    let shown = true;
    setLoading(true);
    entry
      .load()
      .then(
        (module) => {
          entry.loaded = module.default;
        },
        (error: unknown) => {
          entry.error = error;
        },
      )
      .finally(() => {
        if (shown) setLoading(false);
      });
    return () => {
      shown = false;
    };
  }, [entry]);
  const Page = entry.loaded;
  if (Page) return <Page />;
  return loading ? <Loading what="the page" /> : <PageError error={entry.error} />;
}

/**
 * What shows while the first page's code loads: nothing, as before, said outright. Unsaid, the router rendered the
 * same nothing and warned "No `HydrateFallback` element provided" in the browser's log on every load.
 */
const HydrateFallback = () => null;

export const router = createBrowserRouter([
  { path: '/sign-in', lazy: page(() => import('./pages/sign-in')), errorElement: <RouteError />, HydrateFallback },
  { path: '/activate', lazy: page(() => import('./pages/activate')), errorElement: <RouteError />, HydrateFallback },
  { path: '/reset-password', lazy: page(() => import('./pages/activate')), errorElement: <RouteError />, HydrateFallback },
  {
    element: <RequireSession />,
    HydrateFallback,
    // Only when the shell itself fails: the error alone.
    errorElement: <RouteError />,
    children: [
      {
        // A page that fails to load or render: the error inside the shell, the navigation kept.
        errorElement: <RouteError />,
        children: [
          { index: true, lazy: page(() => import('./pages/fleet')) },
          // The fleet is the home page; its name in the navigation, typed as a path, leads there with its filters.
          { path: 'fleet', element: <ToFleet /> },
          { path: 'clusters', element: <ToFleet /> },
          { path: 'clusters/:clusterId', lazy: page(() => import('./pages/cluster')) },
          { path: 'health', lazy: page(() => import('./pages/health')) },
          { path: 'risk', lazy: page(() => import('./pages/risk')) },
          { path: 'critical', lazy: page(() => import('./pages/critical')) },
          { path: 'analysis', lazy: page(() => import('./pages/analysis')) },
          { path: 'issues', lazy: page(() => import('./pages/issues')) },
          { path: 'issues/:issueId', lazy: page(() => import('./pages/issue')) },
          { path: 'ai-issues', lazy: page(() => import('./pages/ai-issues')) },
          { path: 'ai-issues/:issueId', lazy: page(() => import('./pages/ai-issue')) },
          { path: 'patrol', lazy: page(() => import('./pages/patrol')) },
          { path: 'patrol/:reportId', lazy: page(() => import('./pages/patrol-report')) },
          { path: 'investigations', lazy: page(() => import('./pages/investigations')) },
          { path: 'investigations/:investigationId', lazy: page(() => import('./pages/investigation')) },
          { path: 'chat', lazy: page(() => import('./pages/chat')) },
          { path: 'dashboards', lazy: page(() => import('./pages/dashboards')) },
          { path: 'rules', lazy: page(() => import('./pages/rules')) },
          { path: 'proposals', lazy: page(() => import('./pages/proposals')) },
          { path: 'proposals/:changeId', lazy: page(() => import('./pages/proposal')) },
          { path: 'account', lazy: page(() => import('./pages/account')) },
          // Each as its route lets in (api/access.ts): others get a message, and never see it in the navigation.
          { element: <RequireRole roles={MAY_LIST_USERS} />, children: [{ path: 'users', lazy: page(() => import('./pages/users')) }] },
          { element: <RequireRole roles={MAY_READ_AUDIT} />, children: [{ path: 'audit', lazy: page(() => import('./pages/audit')) }] },
          { element: <RequireRole roles={MAY_SEE_PULLS} />, children: [{ path: 'metric-sources', lazy: page(() => import('./pages/metric-sources')) }] },
          { element: <RequireRole roles={MAY_READ_SETTINGS} />, children: [{ path: 'settings', lazy: page(() => import('./pages/general-settings')) }] },
          { element: <RequireRole roles={MAY_SEE_LLM_COST} />, children: [{ path: 'llm-cost', lazy: page(() => import('./pages/llm-cost')) }] },
          { path: '*', lazy: page(() => import('./pages/not-found')) },
        ],
      },
    ],
  },
]);
