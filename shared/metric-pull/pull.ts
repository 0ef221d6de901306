// The metrics puller (issue 20 §2): for each metric of the metric-sources rule
// set, the steps since its watermark are queried with query_range and added to
// the daily rollups with the same rules as HTTP ingest: only known clusters,
// only finite values within ±1e15, a refusal counted per point with its reason.
//
// Work is planned as windows on the step grid, never crossing a UTC day (a
// window's points belong to one rollup day); metrics with the same window are
// pulled together, so each cluster-day is written once per window whatever the
// number of metrics. Memory is bounded by the rollups (clusters × metrics), not
// the points: each query_range asks for at most max_points_per_request points
// (series × steps), which are folded into per-cluster accumulators and dropped.
//
// Exactly once: before a window's rollups are written its metrics record it as
// pending; after, the watermark moves to its end. A run that dies in between
// leaves the pending window, which the next run replays exactly, and the
// rollup items skip a window they already hold (mergePulledRollups).
import { randomUUID } from 'node:crypto';
import { prometheusSettings } from '../config/prometheus.js';
import { ConditionFailed, mapLimit } from '../db/client.js';
import { listClusters } from '../db/clusters.js';
import { acquireLock, heartbeatLock, releaseLock, takeOverLock } from '../db/locks.js';
import {
  getPullRun,
  putPullRun,
  putPullStates,
  readPullStates,
  recordPullErrors,
  type MetricPullState,
  type PullErrorRecord,
  type PullRunRecord,
} from '../db/metric-pulls.js';
import { mergePulledRollups, type PulledRollup } from '../db/metrics.js';
import { bumpGeneration } from '../db/scores.js';
import { clusterIdOf, isGone, metricValueRefusal, type MetricKey } from '../fleet/records.js';
import type { DayRollup } from '../fleet/rollup.js';
import { createLogger } from '../log.js';
import { MAX_BODY_BYTES, prometheusClient, type PrometheusClient } from '../prometheus/client.js';
import { loadMetricSources } from '../rules/load.js';
import { UNIT_CONVERSIONS, type MetricQuery, type MetricSources } from '../rules/schemas.js';
import { pullInventory, type InventoryOutcome } from './inventory.js';
import { PULL_LOCK } from './lock.js';

const log = createLogger('metrics-puller');

/** Longer than the worker's 600 s timeout, renewed after every window. */
const LEASE_MS = 11 * 60_000;
/** Prometheus refuses a range query of more than 11,000 points per series. */
const MAX_STEPS_PER_QUERY = 11_000;
/** Points asked for at once across the metrics of a window: four answers of the default 200,000. */
const POINTS_IN_FLIGHT = 800_000;

/**
 * Metrics queried at once within a window: four, fewer when each answer may be large. A query's
 * answer of max_points_per_request points (≈ 30 bytes of JSON a point) takes about seven times its
 * size while it is parsed, so four answers of a million points at once (≈ 800 MB) would not fit the
 * worker's 1,024 MB; at most 800,000 points are in flight.
 */
export const metricConcurrency = (maxPointsPerRequest: number) => Math.max(1, Math.min(4, Math.floor(POINTS_IN_FLIGHT / maxPointsPerRequest)));

/**
 * The largest answer a query may have: the client's 64 MB shared among the queries at once (16 MB
 * each at four), whole MB. The points bound above holds only while the series are the inventory's
 * size: a query yielding many more (not aggregated by cluster) could otherwise have four answers of
 * 64 MB in flight, ≈ 2.5 GB once parsed (about ten times the bytes, text included) in the worker's
 * 1,024 MB. With at most 64 MB in flight a pull of 10,000 clusters peaked at 524–543 MB (`npm run bench -- puller-memory`).
 */
export const answerByteLimit = (maxPointsPerRequest: number) => Math.floor(MAX_BODY_BYTES / 2 ** 20 / metricConcurrency(maxPointsPerRequest)) * 2 ** 20;
const DAY = 86_400;
/** Warnings kept (and logged) per metric and run: the first is recorded as its `warning_last`. */
const NOTES_KEPT = 5;

export interface MetricPullOutcome {
  metric_key: MetricKey;
  accepted: number;
  refused: number;
  /** Windows added (or found already added). */
  windows: number;
  error: string | null;
}

export interface PullResult {
  outcome: PullRunRecord['outcome'] | 'locked';
  accepted: number;
  refused: number;
  metrics: MetricPullOutcome[];
  inventory: InventoryOutcome | null;
}

export interface PullOptions {
  now?: Date;
  /** Waits between retries (tests record them instead of waiting). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * The run's time left (ms), as Lambda's `context.getRemainingTimeInMillis`: asked at the start and
   * before each window. No new window starts once less than WINDOW_RESERVE_MS is left, and the
   * queries still in flight are ended BOOKKEEPING_MS before the end; the windows left are the next
   * run's (the watermarks say where). Without it a run pulls every window (the local runtime).
   */
  remainingMs?: () => number;
  /** The id of the run POST /api/metric-sources/pull took the lock for (shared/metric-pull/status.ts): this run takes it over. */
  runId?: string;
}

/**
 * Time kept for what a run does after its last window: the per-metric states, the errors and the
 * run record. Lambda ends a run at its timeout without a word: a first pull of a large fleet's
 * backfill, or a Prometheus that answers slowly, would lose all of that and hold the lock (below).
 */
const BOOKKEEPING_MS = 30_000;
/** Time a window is given at least: no window starts with less than this left (a day of 10,000 clusters ≈ 100 s). */
const WINDOW_RESERVE_MS = 180_000;

/** A window of steps [from, to] (epoch seconds, on the step grid) and the metrics pulled over it. */
interface Window {
  from: number;
  to: number;
  metrics: MetricQuery[];
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * Each metric's windows from its watermark (or the backfill) up to the settled
 * end, split at UTC midnights; a pending window (a run that died while writing
 * it) comes first, exactly as it was.
 */
export function planWindows(sources: MetricSources, states: ReadonlyMap<string, MetricPullState>, nowSeconds: number): Window[] {
  const { step_seconds: step, settle_seconds: settle, backfill_days: backfill } = sources.prometheus;
  const end = Math.floor((nowSeconds - settle) / step) * step;
  const oldest = Math.ceil((nowSeconds - backfill * DAY) / step) * step;
  const windows = new Map<string, Window>();
  const add = (from: number, to: number, metric: MetricQuery) => {
    const key = `${from}:${to}`;
    const window = windows.get(key) ?? { from, to, metrics: [] };
    window.metrics.push(metric);
    windows.set(key, window);
  };
  for (const metric of sources.metrics) {
    const state = states.get(metric.metric_key);
    let next = oldest;
    if (state?.pending_from != null && state.pending_to != null) {
      add(state.pending_from, state.pending_to, metric);
      next = Math.max(oldest, (Math.floor(state.pending_to / step) + 1) * step);
    } else if (state?.watermark != null) {
      next = Math.max(oldest, (Math.floor(state.watermark / step) + 1) * step);
    }
    while (next <= end) {
      const lastOfDay = Math.floor((Math.floor(next / DAY) * DAY + DAY - 1) / step) * step;
      const to = Math.min(end, lastOfDay);
      add(next, to, metric);
      next = to + step;
    }
  }
  return [...windows.values()].sort((a, b) => a.from - b.from || a.to - b.to);
}

/** Per cluster, the running min/max/sum/count/last of one metric's points in a window. */
interface Accumulator {
  min: number;
  max: number;
  sum: number;
  count: number;
  last: number;
  lastAt: number;
}

/** Refusals by reason, as ingest words them. */
class Refusals {
  readonly reasons = new Map<string, number>();
  total = 0;
  add(reason: string, count = 1): void {
    if (count <= 0) return;
    this.total += count;
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + count);
  }
  top(): string | null {
    let best: [string, number] | undefined;
    for (const entry of this.reasons) if (!best || entry[1] > best[1]) best = entry;
    return best ? `${best[0]} (${best[1]} point${best[1] === 1 ? '' : 's'})` : null;
  }
}

/** The distinct warnings and infos Prometheus gave with a metric's answers in a run, the first few, each logged once. */
class Notes {
  readonly kept: string[] = [];
  add(notes: readonly string[], metricKey: string): void {
    for (const note of notes) {
      if (this.kept.length >= NOTES_KEPT || this.kept.includes(note)) continue;
      this.kept.push(note);
      log.warn('prometheus answered with a warning', { metric_key: metricKey, warning: note });
    }
  }
}

export interface ClusterResolver {
  /** The cluster id a series' label names, or the refusal reason. */
  resolve(labels: Record<string, string>): { id: string } | { reason: string };
  /** Series per query_range request expected (the fleet's size). */
  seriesEstimate: number;
}

/** How a series' cluster label names a stored cluster (`cluster` of the metric sources): by id, or by a name only one cluster bears. */
export async function clusterResolver(cluster: MetricSources['cluster']): Promise<ClusterResolver> {
  const clusters = await listClusters();
  const { label, match } = cluster;
  const ids = new Set(clusters.map((c) => c.cluster_id));
  // Names need not be unique (two customers' `prod-1`): a name that several clusters bear names none of them, or
  // a series of either would be scored as one of them, the other left without metrics.
  // A deleted cluster is out of it: the inventory keeps it for good, and it would block the new cluster given its name.
  const byName = new Map<string, string | null>();
  for (const c of clusters) if (!isGone(c)) byName.set(c.cluster_name, byName.has(c.cluster_name) ? null : c.cluster_id);
  return {
    seriesEstimate: Math.max(1, clusters.length),
    resolve(labels) {
      const value = labels[label];
      if (value === undefined || value === '') return { reason: `labels.${label}: missing (the label that names the cluster)` };
      if (match === 'name') {
        const id = byName.get(value);
        if (id === null) return { reason: 'cluster_name: names more than one cluster (match them by id: cluster.match: id)' };
        return id ? { id } : { reason: `cluster_name: unknown cluster name` };
      }
      const id = clusterIdOf(value);
      return ids.has(id) ? { id } : { reason: 'cluster_id: unknown cluster' };
    },
  };
}

/** One metric over one window: every point folded into per-cluster accumulators. */
async function pullMetricWindow(
  client: PrometheusClient,
  sources: MetricSources,
  resolver: ClusterResolver,
  metric: MetricQuery,
  window: Window,
  refusals: Refusals,
  notes: Notes,
): Promise<Map<string, Accumulator>> {
  const step = sources.prometheus.step_seconds;
  const stepsPerQuery = Math.max(1, Math.min(MAX_STEPS_PER_QUERY, Math.floor(sources.prometheus.max_points_per_request / resolver.seriesEstimate)));
  const factor = UNIT_CONVERSIONS[metric.convert] * metric.scale;
  const byCluster = new Map<string, Accumulator>();
  for (let start = window.from; start <= window.to; start += stepsPerQuery * step) {
    const end = Math.min(window.to, start + (stepsPerQuery - 1) * step);
    const answered: string[] = [];
    const series = await client.queryRange(metric.query, start, end, step, answered);
    notes.add(answered, metric.metric_key);
    const seen = new Set<string>();
    for (const { labels, points } of series) {
      const cluster = resolver.resolve(labels);
      if ('reason' in cluster) {
        refusals.add(cluster.reason, points.length);
        continue;
      }
      if (seen.has(cluster.id)) {
        refusals.add(`the query yields more than one series per cluster: aggregate it by (${sources.cluster.label})`, points.length);
        continue;
      }
      seen.add(cluster.id);
      let acc = byCluster.get(cluster.id);
      // A point is counted once: by the request that asked for its time (not also by its neighbour, when a
      // Prometheus-compatible server answers a step beyond the range), and once within its series.
      let previous = Number.NEGATIVE_INFINITY;
      for (const [t, raw] of points) {
        const value = raw * factor;
        const refused = metricValueRefusal(metric.metric_key, value);
        if (refused) {
          refusals.add(`value: ${refused}`);
          continue;
        }
        if (t < start || t > end) {
          refusals.add('at: outside the range asked for');
          continue;
        }
        if (t <= previous) {
          refusals.add('at: not after the series’ previous point (a repeated or out-of-order time)');
          continue;
        }
        previous = t;
        if (!acc) byCluster.set(cluster.id, (acc = { min: value, max: value, sum: 0, count: 0, last: value, lastAt: t }));
        if (value < acc.min) acc.min = value;
        if (value > acc.max) acc.max = value;
        acc.sum += value;
        acc.count++;
        if (t >= acc.lastAt) {
          acc.last = value;
          acc.lastAt = t;
        }
      }
    }
  }
  return byCluster;
}

/** Renews the run's lease; false when the lock is no longer this run's (another run took it). */
async function renewLease(owner: string): Promise<boolean> {
  try {
    await heartbeatLock(PULL_LOCK, owner, LEASE_MS);
    return true;
  } catch (error) {
    if (error instanceof ConditionFailed) return false;
    throw error;
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

/** Runs one pull under the lease lock; a run already in progress makes this one return `locked`. */
export async function pullMetrics(options: PullOptions = {}): Promise<PullResult> {
  const owner = randomUUID();
  // A run the route started holds the lock already, under its run id (for a short lease, unless its worker came too
  // late and the lock went to another run): taken over under an owner of this run's own, so a second delivery of the
  // same event (asynchronous invocations are at least once) finds it taken and does nothing.
  const locked = options.runId ? await takeOverLock(PULL_LOCK, options.runId, owner, LEASE_MS) : (await acquireLock(PULL_LOCK, owner, LEASE_MS)).acquired;
  if (!locked) {
    log.info('pull skipped: another is running');
    return { outcome: 'locked', accepted: 0, refused: 0, metrics: [], inventory: null };
  }
  const run: RunProgress = { now: options.now ?? new Date(), started: Date.now(), accepted: 0, refused: 0 };
  try {
    return await pullLocked(owner, options, run);
  } catch (error) {
    await recordRunFailure(owner, run, error);
    throw error;
  } finally {
    await releaseLock(PULL_LOCK, owner);
  }
}

/** A run's start, on the clock it was started with (tests start it at a chosen time), and its figures so far. */
interface RunProgress {
  now: Date;
  started: number;
  accepted: number;
  refused: number;
}

const runClock = (run: RunProgress) => () => new Date(run.now.getTime() + (Date.now() - run.started)).toISOString();

/**
 * A run stopped by an error outside its windows (reading the rule set, the inventory or the states;
 * the final writes): recorded as failed with the error, so the status does not show the run before
 * it as the last. Only while the lock is still this run's (else the record is the holder's to write);
 * best effort, since DynamoDB may be what failed.
 */
async function recordRunFailure(owner: string, run: RunProgress, error: unknown): Promise<void> {
  const clock = runClock(run);
  try {
    if (!(await renewLease(owner))) return;
    const previous = await getPullRun();
    await recordPullErrors([{ at: clock(), metric_key: null, message: `run failed: ${messageOf(error)}` }]);
    await putPullRun({
      started_at: run.now.toISOString(),
      finished_at: clock(),
      outcome: 'failed',
      accepted: run.accepted,
      refused: run.refused,
      duration_ms: Date.now() - run.started,
      last_success_at: previous?.last_success_at ?? null,
    });
  } catch (recordError) {
    log.error('the failed run could not be recorded', { error: messageOf(error), record_error: messageOf(recordError) });
  }
}

async function pullLocked(owner: string, options: PullOptions, run: RunProgress): Promise<PullResult> {
  const { now, started } = run;
  const clock = runClock(run);
  const { rules: sources } = await loadMetricSources();
  const previous = await getPullRun();
  const finish = async (result: Omit<PullResult, 'outcome'>, outcome: PullRunRecord['outcome']): Promise<PullResult> => {
    const finishedAt = clock();
    await putPullRun({
      started_at: now.toISOString(),
      finished_at: finishedAt,
      outcome,
      accepted: result.accepted,
      refused: result.refused,
      duration_ms: Date.now() - started,
      last_success_at: outcome === 'ok' ? finishedAt : (previous?.last_success_at ?? null),
    });
    return { outcome, ...result };
  };
  if (!sources.prometheus.enabled) return finish({ accepted: 0, refused: 0, metrics: [], inventory: null }, 'disabled');

  // The run's time budget: queries still in flight are ended in time for the bookkeeping below
  // (unref'd: a run that ends first leaves nothing waiting on it).
  const left = options.remainingMs;
  const roomForWindow = () => !left || left() >= WINDOW_RESERVE_MS;
  const stop = new AbortController();
  const timeUp = stop.signal;
  if (left) setTimeout(() => stop.abort(), Math.max(0, left() - BOOKKEEPING_MS)).unref();
  const client = prometheusClient(sources.prometheus, {
    credential: () => prometheusSettings().credential.value(),
    sleep: options.sleep,
    signal: timeUp,
    maxAnswerBytes: answerByteLimit(sources.prometheus.max_points_per_request),
  });
  const errors: PullErrorRecord[] = [];
  const nowSeconds = Math.floor(now.getTime() / 1000);

  // The inventory first, so the clusters it adds are known to the metrics below.
  const inventory = sources.inventory?.enabled && roomForWindow() ? await pullInventory(client, sources, sources.inventory, nowSeconds, now) : null;
  if (inventory?.error) errors.push({ at: clock(), metric_key: null, message: `inventory: ${inventory.error}` });

  const resolver = await clusterResolver(sources.cluster);
  const states = await readPullStates(sources.metrics.map((m) => m.metric_key));
  const outcomes = new Map<MetricKey, MetricPullOutcome & { refusals: Refusals; notes: Notes }>(
    sources.metrics.map((m) => [
      m.metric_key,
      { metric_key: m.metric_key, accepted: 0, refused: 0, windows: 0, error: null, refusals: new Refusals(), notes: new Notes() },
    ]),
  );
  let written = 0;
  const windows = planWindows(sources, states, nowSeconds);
  let windowsNotStarted = 0;
  /** Another run holds the lock now: the states and the run record are its to write. */
  let lockLost = false;

  for (const [index, window] of windows.entries()) {
    if (timeUp.aborted || !roomForWindow()) {
      windowsNotStarted = windows.length - index;
      break;
    }
    const metrics = window.metrics.filter((m) => outcomes.get(m.metric_key)!.error === null);
    if (!metrics.length) continue;
    const pulled = await mapLimit(metrics, metricConcurrency(sources.prometheus.max_points_per_request), async (metric) => {
      const outcome = outcomes.get(metric.metric_key)!;
      try {
        return { metric, byCluster: await pullMetricWindow(client, sources, resolver, metric, window, outcome.refusals, outcome.notes) };
      } catch (error) {
        // Ended because the run's time is up: not this metric's failure; the window is the next run's.
        if (timeUp.aborted) return null;
        outcome.error = messageOf(error);
        errors.push({ at: clock(), metric_key: metric.metric_key, message: outcome.error });
        log.warn('metric pull failed', { metric_key: metric.metric_key, from: iso(window.from), to: iso(window.to), error: outcome.error });
        return null;
      }
    });
    // Time ran out while the window was queried: storing what came back (a day of a large fleet can take longer than
    // the bookkeeping's reserve) could outlive the function, leaving no run record and the lock held. The next run replays it.
    if (timeUp.aborted) {
      windowsNotStarted = windows.length - index;
      break;
    }
    const done = pulled.filter((p) => p !== null);
    if (!done.length) continue;

    // A DynamoDB failure (throttled past its retries) or the lock taken from this run stops the run
    // here, not the bookkeeping below: it is recorded as the window's metrics' error.
    let stoppedBy: string | undefined;
    try {
      // Renewed before anything of the window is written: a run whose lock was taken writes nothing more.
      if (await renewLease(owner)) written += await storeWindow(done, window, states, outcomes, clock);
      else {
        lockLost = true;
        stoppedBy = 'stopped: another run took the lock (this run outlived its lease); nothing more of this run is stored';
      }
    } catch (error) {
      stoppedBy = `stopped: storing the window failed (${messageOf(error)}); the next run replays it`;
    }
    if (stoppedBy) {
      for (const { metric } of done) {
        outcomes.get(metric.metric_key)!.error = stoppedBy;
        errors.push({ at: clock(), metric_key: metric.metric_key, message: stoppedBy });
      }
      log.error('pull stopped', { from: iso(window.from), to: iso(window.to), lock_lost: lockLost, error: stoppedBy });
      windowsNotStarted = windows.length - index - 1;
      break;
    }
  }

  // Every metric's state says how its last run went (unless the states are another run's now: only the errors,
  // appended, are written then). A metric this run asked nothing of (within a step of the last run: "Pull now" just
  // after the schedule's) keeps what its last asking said: its counts and reasons were wiped, and a query still
  // refused read as healthy until its next window.
  const results = [...outcomes.values()];
  const metrics = results.map(({ refusals, notes: _notes, ...outcome }) => ({ ...outcome, refused: refusals.total }));
  const accepted = (run.accepted = metrics.reduce((n, m) => n + m.accepted, 0));
  const refused = (run.refused = metrics.reduce((n, m) => n + m.refused, 0));
  if (!lockLost)
    await putPullStates(
      results.map(({ metric_key, accepted, refusals, notes, error, windows }) => {
        const state = states.get(metric_key)!;
        if (windows === 0 && !error) return state;
        return {
          ...state,
          accepted_last: accepted,
          refused_last: refusals.total,
          refusal_last: refusals.top(),
          warning_last: notes.kept[0] ?? null,
          ...(error ? { last_error: error, last_error_at: clock() } : {}),
        };
      }),
    );
  await recordPullErrors(errors);
  if (written > 0) await bumpGeneration();

  const failed = metrics.filter((m) => m.error !== null).length + (inventory?.error ? 1 : 0);
  const parts = metrics.length + (inventory ? 1 : 0);
  // A run whose time ran out before its last window pulled every metric only part of the way: not `ok`, which
  // would stamp it as the last full success while today's windows were never asked for.
  const outcome = failed === parts ? 'failed' : failed > 0 || windowsNotStarted > 0 ? 'partial' : 'ok';
  log.info('pulled', { outcome, accepted, refused, rollups_written: written, failed, duration_ms: Date.now() - started });
  if (lockLost) return { outcome, accepted, refused, metrics, inventory };
  if (windowsNotStarted > 0) log.warn('pull stopped before its last window; the next run goes on', { windows_not_started: windowsNotStarted });
  return finish({ accepted, refused, metrics, inventory }, outcome);
}

/**
 * Stores a window's pulled metrics: pending first (should this run die, or a write fail, while
 * writing, the next replays this very window; kept in `states` too, so the states the run ends with
 * keep it), then the rollups, then the watermarks. Answers the rollup items written.
 */
async function storeWindow(
  done: { metric: MetricQuery; byCluster: Map<string, Accumulator> }[],
  window: Window,
  states: Map<string, MetricPullState>,
  outcomes: ReadonlyMap<MetricKey, MetricPullOutcome>,
  clock: () => string,
): Promise<number> {
  const pending = done.map(({ metric }) => ({ ...states.get(metric.metric_key)!, pending_from: window.from, pending_to: window.to }));
  for (const state of pending) states.set(state.metric_key, state);
  await putPullStates(pending);
  const { written } = await mergePulledRollups(rollupsOf(done, window));
  const finishedAt = clock();
  const advanced = pending.map((state) => {
    const outcome = outcomes.get(state.metric_key as MetricKey)!;
    outcome.windows++;
    const next: MetricPullState = { ...state, watermark: window.to, pending_from: null, pending_to: null, last_success_at: finishedAt };
    states.set(state.metric_key, next);
    return next;
  });
  for (const { metric, byCluster } of done) for (const acc of byCluster.values()) outcomes.get(metric.metric_key)!.accepted += acc.count;
  await putPullStates(advanced);
  return written;
}

/** The window's accumulators as one pulled rollup per cluster, all metrics together. */
function rollupsOf(done: { metric: MetricQuery; byCluster: Map<string, Accumulator> }[], window: Window): PulledRollup[] {
  const day = iso(window.from).slice(0, 10);
  const span = { from: iso(window.from), to: iso(window.to) };
  const byCluster = new Map<string, PulledRollup>();
  for (const { metric, byCluster: accumulators } of done) {
    for (const [clusterId, acc] of accumulators) {
      if (acc.count === 0) continue;
      let rollup = byCluster.get(clusterId);
      if (!rollup) byCluster.set(clusterId, (rollup = { cluster_id: clusterId, day, metrics: {} as DayRollup, windows: {} }));
      rollup.metrics[metric.metric_key] = { min: acc.min, max: acc.max, sum: acc.sum, count: acc.count, last: acc.last, last_at: iso(acc.lastAt) };
      rollup.windows[metric.metric_key] = span;
    }
  }
  return [...byCluster.values()];
}
