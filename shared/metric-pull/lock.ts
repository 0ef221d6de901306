// The puller's lease lock (shared/db/locks.ts): one run at a time. Apart from pull.ts so that the
// metric-sources route group, which asks whether a run holds it, carries none of the puller.
export const PULL_LOCK = 'metrics-puller';
