// The puller's lease lock (shared/db/locks.ts): one run at a time. Apart from pull.ts so that the
// metric-sources route group, which takes it for the run Pull now starts, carries none of the puller.
export const PULL_LOCK = 'metrics-puller';

/**
 * How long a run Pull now started holds the lock before its worker takes it over (with the run's own lease):
 * an asynchronous invocation starts within seconds; one that never starts frees the lock for the schedule soon.
 */
export const START_LEASE_MS = 2 * 60_000;
