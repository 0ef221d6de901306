// Refresh and recompute routes (issue 21 §2): the whole fleet is computed by the
// recompute worker (its memory and 300 s), never inside an API Lambda. A route
// starts the worker asynchronously with a run id recorded in the `scores` table,
// waits up to REFRESH_WAIT_SECONDS polling the record, and answers its contract's
// 200 when the run is done in time, or 202 `running` with the id to follow at
// GET <route>/{refresh_id}. A request arriving while a refresh of the same kinds
// runs joins that run (answers its id) instead of starting another, if that run
// computes with the rules current for the request; else its run is queued after it.
// The claim is a lease lock (shared/db/locks.ts) per kinds set, owned by the run's id (refresh-claim.ts).
// A run's outcome is final: one past its lease is recorded failed before it is answered so.
// `refreshRoutes` builds a route pair's two handlers (start, follow) from these.
// This module carries no engine: the routes load only the record and the worker start.
import { randomUUID } from 'node:crypto';
import { refreshSettings } from '../config/refresh.js';
import { createRefresh, finishRefresh, getRefresh, type RefreshFigures, type RefreshRecord, type RuleVersions, type SnapshotKind } from '../db/scores.js';
import { NotFound, ServiceUnavailable } from '../http/errors.js';
import { Reply } from '../http/route.js';
import { invokeWorker, startAndWait } from '../worker-invoke.js';
import { claimRefresh, currentRefresh, currentRuleVersions, releaseRefresh, settleRefresh } from './refresh-claim.js';

const POLL_MS = 250;

export interface RunningAnswer {
  status: 'running';
  refresh_id: string;
  message: string;
}

/** Where a run stands, as a route answers it: done with its figures, failed with a sentence, or still running. */
type RefreshState =
  | { state: 'done'; refresh_id: string; figures: RefreshFigures }
  | { state: 'failed'; refresh_id: string; error: string }
  | { state: 'running'; answer: RunningAnswer };

/** The state of a run as recorded; `settleRefresh` has recorded one past its lease failed. */
function stateOf(run: RefreshRecord, followPath: string): RefreshState {
  if (run.status === 'done' && run.figures) return { state: 'done', refresh_id: run.refresh_id, figures: run.figures };
  if (run.status === 'failed') return { state: 'failed', refresh_id: run.refresh_id, error: run.error ?? 'the refresh failed' };
  return runningState(run.refresh_id, followPath);
}

/** The 202 answer of a run still going, naming its follow route. */
const runningState = (refreshId: string, followPath: string): RefreshState => ({
  state: 'running',
  answer: { status: 'running', refresh_id: refreshId, message: `The refresh is still running: poll GET ${followPath}/${refreshId}.` },
});

/**
 * Records run `id` (with the rule versions read before it, which its worker loads or newer; and the run it is
 * queued after, if any) and starts the worker on it; if that fails, the run is marked failed and the claim let go.
 */
async function startRun(id: string, kinds: readonly SnapshotKind[], rules: RuleVersions, after: string | undefined): Promise<void> {
  try {
    await createRefresh(id, kinds, { rules, after });
    await invokeWorker('recompute', { refresh_id: id, kinds: [...kinds] });
  } catch (error) {
    await finishRefresh(id, { status: 'failed', error: 'the refresh could not start (see the logs)' }).catch(() => undefined);
    await releaseRefresh(id, kinds).catch(() => undefined);
    throw error;
  }
}

/**
 * Starts (or joins) a refresh of `kinds` and waits for it up to REFRESH_WAIT_SECONDS.
 * `followPath`: the route's own path, under which GET /{refresh_id} follows the run.
 */
async function runRefresh(kinds: readonly SnapshotKind[], followPath: string): Promise<RefreshState> {
  const id = randomUUID();
  // Read at the start: a run this request answers computes with these versions or newer (refresh-claim.ts).
  const rules = await currentRuleVersions();
  const claim = await claimRefresh(id, kinds, rules);
  const joined = typeof claim === 'string' ? claim : undefined;
  const after = typeof claim === 'object' ? claim.after : undefined;
  const refreshId = joined ?? id;
  const state = await startAndWait({
    start: async () => {
      if (!joined) await startRun(id, kinds, rules, after);
    },
    // A joined run's record is written right after its claim: absent for a moment at most.
    poll: async () => {
      const run = await currentRefresh(refreshId);
      return run && stateOf(run, followPath);
    },
    done: (s) => s.state !== 'running',
    // REFRESH_WAIT_SECONDS=0: answer 202 at once, whatever the run has done meanwhile (callers that always poll).
    waitMs: refreshSettings().waitMs,
    intervalMs: POLL_MS,
  });
  return state ?? runningState(refreshId, followPath);
}

/** GET <route>/{refresh_id}: the run's state; 404 for an unknown or expired id, or a run of other kinds than the route's. */
async function followRefresh(refreshId: string, kinds: readonly SnapshotKind[], followPath: string): Promise<RefreshState> {
  const run = await getRefresh(refreshId);
  if (!run || !kinds.every((k) => run.kinds.includes(k))) throw new NotFound('No such refresh (refresh records are kept a day).');
  return stateOf(await settleRefresh(run), followPath);
}

/**
 * A route's answer for a run's state: `done`'s contract fields (200), 202 `running` with the id to follow,
 * or 503 when the run failed (the cause is in the recompute logs, not the answer).
 */
async function refreshAnswer<T>(
  state: RefreshState,
  done: (figures: RefreshFigures) => T | Promise<T>,
  failedDetail: string,
): Promise<T | Reply<RunningAnswer>> {
  if (state.state === 'running') return new Reply(202, state.answer);
  if (state.state === 'failed') throw new ServiceUnavailable(failedDetail);
  return done(state.figures);
}

const FOLLOW_SUFFIX = '/{refresh_id}';

/**
 * The two handlers of a refresh route pair: `start` (POST <route>: starts or joins a run of `kinds`
 * and waits) and `follow` (GET <route>/{refresh_id}), both answering `done`'s contract fields,
 * 202 `running`, or 503 with `failedDetail`. `followRoute`: the follow route's declaration; its
 * path, less `/{refresh_id}`, is where the 202 tells the client to poll.
 */
export function refreshRoutes<T>(
  kinds: readonly SnapshotKind[],
  followRoute: { readonly path: string },
  done: (figures: RefreshFigures) => T | Promise<T>,
  failedDetail: string,
) {
  if (!followRoute.path.endsWith(FOLLOW_SUFFIX)) throw new Error(`${followRoute.path}: a refresh follow route ends in ${FOLLOW_SUFFIX}`);
  const followPath = followRoute.path.slice(0, -FOLLOW_SUFFIX.length);
  const answer = (state: RefreshState) => refreshAnswer(state, done, failedDetail);
  return {
    start: async () => answer(await runRefresh(kinds, followPath)),
    follow: async (req: { readonly params: { readonly refresh_id: string } }) => answer(await followRefresh(req.params.refresh_id, kinds, followPath)),
  };
}
