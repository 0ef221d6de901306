// The recompute worker's two runs (functions/recompute.ts is its entry). The scheduled one (every 15
// minutes) refreshes scores and risk, so dashboards are never older than that without anyone clicking refresh.
// The same run regroups recent alerts into issues (open issues whose quiet
// period has passed become Resolved; edited issue rules reach recent history)
// and into AI issues (only clusters whose alerts changed: the debounce), and
// creates agent tasks for the clusters the health rules' ai_trigger selects, and
// packs the settled days the chat's SQL snapshot reads that have no current pack,
// and takes alerts whose resolution never arrived out of the firing index.
// A pass that fails costs none of the others; the run then ends by throwing
// (RecomputePassFailed), so a grouping broken for days does not go unalarmed.
// Started by a refresh or recompute route with `{ refresh_id, kinds }` (issue 21 §2),
// it refreshes only those views and records the run's figures (or its failure)
// for the route to answer: shared/scoring/refresh.ts. Such an event may come late
// or twice: only a run still waiting for its worker, within its lease and holding
// its claim, is computed (refresh-claim.ts takeUpRefresh). A run queued after another waits
// for it at most a minute per invocation, then hands the wait on to a new one (waitOn).
import { createAgentTasks } from './agents/tasks.js';
import { regroupAiRecent } from './ai-issues/regroup.js';
import { SQL_ROLLUP_DAYS } from './chat/sql-snapshot.js';
import { regroupRecent } from './issues/regroup.js';
import * as z from './zod.js';
import { windowDays } from './db/days.js';
import { PACK_BUILDER } from './db/packing.js';
import { retireUnheardFiring } from './db/alerts.js';
import { packSettledDays } from './db/rollup-packs.js';
import { finishRefresh, SNAPSHOT_KINDS, type RefreshFigures } from './db/scores.js';
import { createLogger, errorFields } from './log.js';
import { fleetKpis } from './scoring/fleet-score.js';
import { refreshFleetView, type FleetView } from './scoring/fleet-view.js';
import { currentRefresh, releaseRefresh, takeUpRefresh } from './scoring/refresh-claim.js';
import { riskSummary } from './scoring/risk.js';
import { invokeWorker } from './worker-invoke.js';

const log = createLogger('recompute');

/** The event a refresh route sends; the schedule sends `{}`. */
export const RefreshEvent = z.object({
  refresh_id: z.string().check(z.minLength(1), z.maxLength(128)),
  kinds: z.array(z.enum(SNAPSHOT_KINDS)).check(z.minLength(1)),
});

/** Every figure a refresh route answers, from the view just computed. */
function refreshFigures(view: FleetView): RefreshFigures {
  const kpis = fleetKpis(view.scores);
  const risk = riskSummary(view.snapshots);
  return {
    generated_at: view.generatedAt,
    total_clusters: kpis.total_clusters,
    critical: kpis.critical_count,
    warning: kpis.warning_count,
    risk_total: risk.total,
    risk_critical: risk.critical,
    risk_warning: risk.warning,
  };
}

/** What a run reads of the Lambda context: the invocation's time left (a direct call without one: a whole invocation's). */
export type InvocationTime = { getRemainingTimeInMillis?: () => number };

/** A route's refresh: only the views asked for, then the record the route polls. Failures are recorded, then thrown (dead letter, alarm). */
export async function refreshRun({ refresh_id, kinds }: z.infer<typeof RefreshEvent>, context?: InvocationTime) {
  const takeUp = await takeUpRefresh(refresh_id, kinds, context?.getRemainingTimeInMillis?.());
  if (takeUp === 'waiting') return waitOn(refresh_id, kinds);
  if (takeUp === 'not-started') {
    // Not ours to run (finished, taken up already, past its lease, or its claim another run's): nothing is
    // computed, and the claim is left alone (a worker running this run holds it under the same id).
    // A run past its lease is recorded failed now rather than at its route's next look.
    const run = await currentRefresh(refresh_id);
    log.warn('refresh run not started: it is not waiting for a worker', { refresh_id, kinds, run_status: run?.status ?? 'not recorded' });
    return { refresh_id, status: 'not_started' as const };
  }
  const started = Date.now();
  try {
    const figures = refreshFigures(await refreshFleetView(kinds));
    if (!(await finishRefresh(refresh_id, { status: 'done', figures })))
      log.warn('refresh run done but not recorded: it was no longer running (failed or expired meanwhile)', { refresh_id });
    log.info('refreshed', { refresh_id, kinds, ...figures, duration_ms: Date.now() - started });
    return { refresh_id, status: 'done' as const, ...figures };
  } catch (error) {
    log.error('refresh failed', { refresh_id, kinds, ...errorFields(error) });
    // The cause stays in the log; the record carries a sentence for the client.
    await finishRefresh(refresh_id, { status: 'failed', error: 'the scores could not be computed (see the recompute logs)' }).catch(() => undefined);
    throw error;
  } finally {
    // The run's claim (a lease lock per kinds set): the next request of these kinds starts afresh.
    await releaseRefresh(refresh_id, kinds).catch(() => undefined);
  }
}

/**
 * A queued run whose run ahead has not ended while this invocation could wait (refresh-claim.ts takeUpRefresh):
 * a new invocation waits on, and has at least RUN_TIME_KEPT_MS for the run once it gets the claim. If it cannot
 * be started, the run is recorded failed now, so its route answers 503 rather than wait out the run's lease.
 */
async function waitOn(refresh_id: string, kinds: z.infer<typeof RefreshEvent>['kinds']) {
  try {
    await invokeWorker('recompute', { refresh_id, kinds });
  } catch (error) {
    log.error('queued refresh run could not wait on: the worker could not be started', { refresh_id, kinds, ...errorFields(error) });
    await finishRefresh(refresh_id, { status: 'failed', error: 'the queued refresh could not go on waiting (see the recompute logs)' }).catch(() => undefined);
    throw error;
  }
  log.info('refresh run still queued: a new invocation waits on', { refresh_id, kinds });
  return { refresh_id, status: 'queued' as const };
}

/** The scheduled run: every view, issue and AI grouping, agent tasks. */
export async function scheduledRun() {
  const started = Date.now();
  // Grouping failures are logged per cluster inside regroupRecent; anything else must not cost the score refresh,
  // but fails the run once everything else is done, so the failure queue and the Errors alarm see it.
  const failures: string[] = [];
  const failedSoftly = (what: string) => (error: unknown) => {
    log.error(`${what} failed`, { error: String(error) });
    failures.push(what);
    return null;
  };
  const refreshed = refreshFleetView(['fleet', 'health', 'risk']);
  const issuesGrouped = regroupRecent().catch(failedSoftly('issue grouping pass'));
  // What follows the view does not wait for the AI grouping pass: it may take most of the invocation (a provider
  // answering slowly), and the agent tasks are what such a moment needs. It waits for the rules' grouping (bounded,
  // no model), so an investigation started now finds this run's issues among the cluster's open ones.
  const afterView = async (view: Awaited<typeof refreshed>) => {
    await issuesGrouped;
    // Clusters the health rules' ai_trigger selects get an agent task (and the agent worker is started).
    const agentTasks = await createAgentTasks(view).catch(failedSoftly('agent task creation'));
    // The chat's SQL snapshot reads 14 days; the refresh packed only its lookback's (a day alone: none).
    const now = new Date();
    const packed = await packSettledDays(windowDays(SQL_ROLLUP_DAYS, now), now, PACK_BUILDER).then(
      (read) => read.built,
      failedSoftly('packing the chat snapshot days'),
    );
    // Firing alerts whose resolution never arrived leave the firing index every read of it would read again.
    const firingRetired = await retireUnheardFiring(now).catch(failedSoftly('retiring unheard firing alerts'));
    return { agentTasks, packed, firingRetired };
  };
  const [view, { agentTasks, packed, firingRetired }, issues, aiIssues] = await Promise.all([
    refreshed,
    // A failed refresh fails the run through the line above.
    refreshed.then(afterView, () => ({ agentTasks: null, packed: null, firingRetired: null })),
    issuesGrouped,
    regroupAiRecent().catch(failedSoftly('AI grouping pass')),
  ]);
  const kpis = fleetKpis(view.scores);
  const result = {
    generated_at: view.generatedAt,
    clusters: kpis.total_clusters,
    critical: kpis.critical_count,
    warning: kpis.warning_count,
    issues,
    ai_issues: aiIssues,
    agent_tasks: agentTasks,
    rollup_shards_packed: packed,
    firing_retired: firingRetired,
  };
  log.info('recomputed', { ...result, duration_ms: Date.now() - started });
  if (failures.length) throw new RecomputePassFailed(`${failures.join(', ')} failed (the log says why); the views were refreshed`);
  return result;
}

/** A pass of the scheduled run (grouping, agent tasks, packing) failed; the rest of the run was done. */
export class RecomputePassFailed extends Error {
  override name = 'RecomputePassFailed';
}
