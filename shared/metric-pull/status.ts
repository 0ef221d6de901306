// What GET /api/metric-sources/status answers: the source in force, the last
// run, and for each metric its watermark, lag and last error; and the route
// that starts a pull now.
import { randomUUID } from 'node:crypto';
import { acquireLock, releaseLock } from '../db/locks.js';
import { getInventoryState, getPullRun, latestPullErrors, readPullStates } from '../db/metric-pulls.js';
import type { MetricSourcesStatus, PullAnswer } from '../routes/metric-sources.js';
import { loadMetricSources } from '../rules/load.js';
import { invokeWorker } from '../worker-invoke.js';
import { WORKERS } from '../workers.js';
import { PULL_LOCK, START_LEASE_MS } from './lock.js';

const ERRORS_SHOWN = 20;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

export async function metricSourcesStatus(now = new Date()): Promise<MetricSourcesStatus> {
  const { rules: sources, version } = await loadMetricSources();
  const [states, run, inventory, errors] = await Promise.all([
    readPullStates(sources.metrics.map((m) => m.metric_key)),
    getPullRun(),
    getInventoryState(),
    latestPullErrors(ERRORS_SHOWN, now),
  ]);
  const { prometheus, cluster } = sources;
  return {
    enabled: prometheus.enabled,
    rules_version: version,
    source: {
      url: prometheus.url,
      auth: prometheus.auth.type,
      step_seconds: prometheus.step_seconds,
      settle_seconds: prometheus.settle_seconds,
      backfill_days: prometheus.backfill_days,
      cluster_label: cluster.label,
      cluster_match: cluster.match,
      every_minutes: WORKERS['metrics-puller'].schedule.everyMinutes,
    },
    last_run: run && {
      started_at: run.started_at,
      finished_at: run.finished_at,
      outcome: run.outcome,
      accepted: run.accepted,
      refused: run.refused,
      duration_ms: run.duration_ms,
    },
    last_success_at: run?.last_success_at ?? null,
    metrics: sources.metrics.map(({ metric_key, query }) => {
      const state = states.get(metric_key)!;
      return {
        metric_key,
        query,
        watermark: state.watermark === null ? null : iso(state.watermark),
        last_success_at: state.last_success_at,
        lag_seconds: state.watermark === null ? null : Math.max(0, Math.round(now.getTime() / 1000 - state.watermark)),
        accepted_last: state.accepted_last,
        refused_last: state.refused_last,
        refusal_last: state.refusal_last,
        warning_last: state.warning_last,
        // A failure is shown until a later pull of the metric succeeds.
        last_error:
          state.last_error && state.last_error_at && (!state.last_success_at || state.last_error_at >= state.last_success_at)
            ? { at: state.last_error_at, metric_key, message: state.last_error }
            : null,
      };
    }),
    inventory: {
      enabled: sources.inventory?.enabled ?? false,
      last_success_at: inventory?.last_success_at ?? null,
      upserted_last: inventory?.upserted_last ?? 0,
      refused_last: inventory?.refused_last ?? 0,
      last_error: inventory?.last_error && inventory.last_error_at ? { at: inventory.last_error_at, metric_key: null, message: inventory.last_error } : null,
    },
    errors,
  };
}

/**
 * Starts the puller in the background (the schedule's worker); the status route shows how it went. The lock is
 * taken here, for the run this starts (the worker takes it over by its id): a request that finds it held, by the
 * schedule's run or another admin's (two pressing Pull now at once), answers already_running, where a look at the
 * lock let all of them say "started" for runs that found it held and recorded nothing.
 */
export async function startPull(): Promise<PullAnswer> {
  // Before the worker starts: its run's started_at (the same clock, the service's) is at or after it.
  const requestedAt = new Date().toISOString();
  const runId = randomUUID();
  if (!(await acquireLock(PULL_LOCK, runId, START_LEASE_MS)).acquired)
    return {
      status: 'already_running',
      message:
        'A pull is already running (the schedule’s, or another admin’s); GET /api/metric-sources/status shows its outcome when it finishes. Pull again after it for data newer than its start.',
      requested_at: requestedAt,
    };
  try {
    await invokeWorker('metrics-puller', { triggered_by: 'api', run_id: runId });
  } catch (error) {
    // The answer is the worker's failure (a 503); a lock left by a failed release lapses with its short lease.
    await releaseLock(PULL_LOCK, runId).catch(() => undefined);
    throw error;
  }
  return { status: 'started', message: 'A pull has started; GET /api/metric-sources/status shows its outcome when it finishes.', requested_at: requestedAt };
}
