// Watch pages (fleet, health, risk, critical, alert and AI issues) stay current on a screen left open:
// their reads refetch every LIVE_MS while the tab is visible (TanStack Query stops the interval in a
// hidden tab, and refetches on focus as every read does). Decision and cost: infra/web/README.md.
import type { ApiProblem } from './client';

/** How often a watch page asks again: the recompute runs every 15 min, alerts and issues arrive at any time. */
export const LIVE_MS = 60_000;

/** The options of a watch page's read: `useApi(ep, request, live)`. */
export const live = { refetchInterval: LIVE_MS, refetchIntervalInBackground: false } as const;

/** What the freshness line needs of a read (TanStack Query's result). */
export interface LiveRead {
  data: unknown;
  dataUpdatedAt: number;
  isFetching: boolean;
  isError: boolean;
  error: ApiProblem | null;
}
