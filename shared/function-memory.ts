// Memory of the Lambdas that run the service's two heaviest pieces of shared code, measured at
// 10,000 clusters in a fresh process as deployed (`npm run bench -- refresh-memory chat-memory`).
// The route groups and workers that run them declare these (`memoryMb`); test/infra/all-bundles.test.ts
// finds every function whose bundle carries the code and checks it has at least this much.

/**
 * Every Lambda that computes the fleet view itself (shared/scoring/fleet-view.ts): the API groups
 * answering from it compute it in their own container, cached 60 s. A fleet container's first
 * GET /api/fleet/scores at 10,000 clusters peaked at 455–462 MB (89–90% of the 512 MB they had;
 * 353 MB with V8's default young generation, still 69%), a metrics container's first scrape at
 * 487–508 MB, a settings container's first proposal detail (the impact scores the fleet twice) at
 * 384 MB. 1,024 MB puts them at 37–50%, under issue 21's 60%, and doubles the CPU share that
 * computes the view (3 s of a whole core here).
 */
export const FLEET_VIEW_MEMORY_MB = 1024;

/**
 * Every Lambda whose code runs the run_sql tool (the chat group, the patrol and agent workers:
 * shared/chat/tools.ts), which loads a snapshot of the fleet into SQLite in a worker thread. Its first
 * question over 10,000 clusters × 14 days (1.82 million metric_daily rows) peaked at 1,880 MB RSS
 * when metric_daily was a table of text keys built from rollup objects, and at 908–992 MB since it is
 * loaded from the rollup columns into integer-keyed tables (the fleet view, the columns in shared
 * memory, SQLite's tables and its thread). 2,048 MB puts that under 50%, below issue 21's 60%;
 * 512 and 1,024 MB would end such a Lambda out of memory.
 */
export const RUN_SQL_MEMORY_MB = 2048;
