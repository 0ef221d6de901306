// The console's entry: one query cache (TanStack Query), the session, the router.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { ApiProblem } from './api/client';
import { router } from './app';
import { SessionProvider } from './session';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      refetchOnWindowFocus: true,
      // A problem the service answered (4xx) will not change by asking again.
      retry: (failures, error) => failures < 2 && !(error instanceof ApiProblem && error.status >= 400 && error.status < 500),
      // Asked while the browser is offline, a read is sent and fails in words ("the service did not answer") with a way
      // to try again, as a dropped connection's does, and is read again once the browser is back online. By default it
      // would wait unsaid: a new filter showed the rows of the old one, a new page "Loading…", for as long as it lasted.
      networkMode: 'always',
      // Which 'always' turns off by default.
      refetchOnReconnect: true,
    },
    // A write too: refused at once in those words, its draft kept, where by default it said "Saving…" for as long as the
    // browser was offline, with no way to cancel it, and was sent whenever the connection came back.
    mutations: { networkMode: 'always' },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <SessionProvider>
        <RouterProvider router={router} />
      </SessionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
