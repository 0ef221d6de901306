// The console's pages and their URLs. Every page but sign-in and activation needs
// a session; each page's code loads when it is first visited (route-level
// splitting), so the first load carries only the shell and the page asked for.
import { createBrowserRouter, Navigate, Outlet, useLocation } from 'react-router';
import { Shell } from './components/shell';
import { useSession } from './session';

function RequireSession() {
  const { user } = useSession();
  const location = useLocation();
  if (!user) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return (
    <Shell>
      <Outlet />
    </Shell>
  );
}

const page = (load: () => Promise<{ default: React.ComponentType }>) => async () => ({ Component: (await load()).default });

export const router = createBrowserRouter([
  { path: '/sign-in', lazy: page(() => import('./pages/sign-in')) },
  { path: '/activate', lazy: page(() => import('./pages/activate')) },
  {
    element: <RequireSession />,
    children: [
      { index: true, lazy: page(() => import('./pages/fleet')) },
      { path: 'clusters/:clusterId', lazy: page(() => import('./pages/cluster')) },
      { path: 'health', lazy: page(() => import('./pages/health')) },
      { path: 'risk', lazy: page(() => import('./pages/risk')) },
      { path: 'critical', lazy: page(() => import('./pages/critical')) },
      { path: 'analysis', lazy: page(() => import('./pages/analysis')) },
      { path: 'issues', lazy: page(() => import('./pages/issues')) },
      { path: 'issues/:issueId', lazy: page(() => import('./pages/issue')) },
      { path: '*', lazy: page(() => import('./pages/not-found')) },
    ],
  },
]);
