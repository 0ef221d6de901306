// The computed fleet: rules in force, each cluster's inputs, and every scored
// view (unified, health, risk), computed together from one read of the data.
// Served from a 60-second cache per container that is dropped as soon as the
// generation marker in DynamoDB moves (every refresh; every rule or settings
// change, in its own transaction), so a refresh or rule change anywhere is seen
// everywhere: a view is kept only under a generation read before its rules were.
import { listAlertFactsSince, type AlertFacts } from '../db/alerts.js';
import { listClusters } from '../db/clusters.js';
import { windowDays } from '../db/days.js';
import { PACK_BUILDER, type PackBuilder } from '../db/packing.js';
import { readFleetRollupColumns } from '../db/rollup-packs.js';
import { WindowedColumns } from '../fleet/rollup-columns.js';
import { isGone } from '../fleet/records.js';
import { bumpGeneration, currentGeneration, putSnapshot, type SnapshotKind } from '../db/scores.js';
import { loadHealthRules, loadRiskRules, type LoadedRuleSet } from '../rules/load.js';
import type { RiskRuleSet, ScoringRules } from '../rules/schemas.js';
import { PreparedJson } from '../http/route.js';
import type * as z from '../zod.js';
import { CRITICAL_ALERT_DAYS } from './critical.js';
import { fleetKpis, fleetScoresFrom, scoreColumns, type FleetClusterScore } from './fleet-score.js';
import { healthKpis, healthScoresFrom, type HealthScore } from './health-score.js';
import { aggregateFleet, anyNotFinite, columnarClusterData, lookbackStart, staleReason, type ClusterAggregates, type ClusterData } from './inputs.js';
import { riskSnapshot, riskSummary, sortSnapshots, type RiskSnapshot } from './risk.js';
import type * as contract from './schemas.js';

export const CACHE_TTL_MS = 60_000;

export interface FleetView {
  generatedAt: string;
  now: Date;
  health: LoadedRuleSet<ScoringRules>;
  risk: LoadedRuleSet<RiskRuleSet>;
  fleet: ClusterData[];
  /** The fleet's rollups were read with the settled days folded (a refresh's): they answer the rules' lookback only. */
  windowed: boolean;
  /** The fleet's aggregates over the health lookback, which the scores were computed from (healthKpis reads them). */
  aggregates: readonly ClusterAggregates[];
  /** Unified scores, worst first. */
  scores: FleetClusterScore[];
  /** Metrics-only scores, worst first. */
  healthScores: HealthScore[];
  /** Risk snapshots, worst first. */
  snapshots: RiskSnapshot[];
}

/** Days of rollups a computation with these rules reads. */
export const rollupDaysFor = (health: ScoringRules, risk: RiskRuleSet) => Math.max(health.lookback_days, risk.lookback_days);

/**
 * Each cluster's inputs: inventory, `days` days of daily rollups (a row of the
 * fleet's columns, decoded from packed rollups: no rollup object is built), and
 * the alerts of the critical-cluster window or the health lookback, whichever is longer.
 */
export async function loadFleetInputs(
  days: number,
  alertLookbackDays: number,
  now: Date,
  buildPacks?: PackBuilder,
  { window = false }: { window?: boolean } = {},
): Promise<ClusterData[]> {
  const alertDays = Math.max(CRITICAL_ALERT_DAYS, alertLookbackDays);
  const [clusters, columns, alerts] = await Promise.all([
    listClusters({ build: buildPacks }),
    readFleetRollupColumns(windowDays(days, now), now, { build: buildPacks, window }),
    listAlertFactsSince(new Date(now.getTime() - alertDays * 86_400_000), now),
  ]);
  const alertsByCluster = new Map<string, AlertFacts[]>();
  for (const alert of alerts) {
    const list = alertsByCluster.get(alert.cluster_id);
    if (list) list.push(alert);
    else alertsByCluster.set(alert.cluster_id, [alert]);
  }
  return clusters.filter((cluster) => !isGone(cluster)).map((cluster) => columnarClusterData(cluster, columns, alertsByCluster.get(cluster.cluster_id) ?? []));
}

/**
 * `buildPacks`: given by the refresh (whose worker may write those tables), the packs read as items
 * are written (settled rollup days, the inventory), and the lookback's settled days are read folded,
 * one window pack per shard (shared/db/rollup-packs.ts), when both rule sets look back from the same
 * day: every view then folds two cells per cluster (the window, today) instead of one per day, to the
 * same doubles. Such a view answers the rules' lookback only (RollupColumns.window: nothing per day, no
 * other lookback; the rule impact preview reads its own then); and where a sum leaves the double range,
 * whose exact answer needs each day, the refresh reads day by day.
 */
export async function computeFleetView(now = new Date(), buildPacks?: PackBuilder): Promise<FleetView> {
  const [health, risk] = await Promise.all([loadHealthRules(), loadRiskRules()]);
  const days = rollupDaysFor(health.rules, risk.rules);
  if (buildPacks && health.rules.lookback_days === risk.rules.lookback_days) {
    try {
      const view = computeViews(await loadFleetInputs(days, health.rules.lookback_days, now, buildPacks, { window: true }), health, risk, now);
      // Checked here, so no later reader of the view (the snapshots' kpis) meets one.
      if (!anyNotFinite(view.aggregates)) return view;
    } catch (error) {
      if (!(error instanceof WindowedColumns)) throw error;
    }
  }
  return computeViews(await loadFleetInputs(days, health.rules.lookback_days, now, buildPacks), health, risk, now);
}

/** Every view of a fleet already read: the pure part of computeFleetView (the refresh bench times it as the floor's compute). */
export function computeViews(fleet: ClusterData[], health: LoadedRuleSet<ScoringRules>, risk: LoadedRuleSet<RiskRuleSet>, now: Date): FleetView {
  // The fleet's rollup columns folded once into columnar aggregates, which every view reads (inputs.ts);
  // the risk rules share them unless their lookback differs.
  const aggregates = aggregateFleet(fleet, lookbackStart(health.rules.lookback_days, now));
  const riskFrom = lookbackStart(risk.rules.lookback_days, now);
  const riskAggregates = aggregates[0]?.fromDay === riskFrom ? aggregates : aggregateFleet(fleet, riskFrom);
  // One scoring pass; the unified and the health answers are both built from its columns.
  const columns = scoreColumns(fleet, health.rules, now, aggregates);
  const scores = fleetScoresFrom(columns);
  const unified = new Map(scores.map((s) => [s.cluster_id, s]));
  const snapshots = sortSnapshots(
    fleet.map((d, i) => {
      const score = unified.get(d.cluster.cluster_id);
      // Staleness is the unified score's (the health rules decide it): the same flag and text in every view.
      const stale = score?.metrics_stale ? staleReason(score.last_metric_at, health.rules.lookback_days) : undefined;
      return riskSnapshot(d, risk.rules, score?.overall_score ?? 0, now, stale, riskAggregates[i]);
    }),
  );
  const riskLevels = new Map(snapshots.map((s) => [s.cluster_id, s.risk_level]));
  return {
    generatedAt: now.toISOString(),
    now,
    health,
    risk,
    fleet,
    windowed: fleet.some((d) => d.columns?.window !== undefined),
    aggregates: columns.aggregates,
    scores,
    // One risk level per cluster: the health view shows the snapshot's, not its own classification.
    healthScores: healthScoresFrom(columns, (id) => riskLevels.get(id)),
    snapshots,
  };
}

let cached: { view: FleetView; at: number; generation: number } | undefined;
/** The computation under way in this container, and the generation read before it loaded the rules. */
let computing: { generation: number; view: Promise<FleetView> } | undefined;

/** The generation this container read last: a cached view of any other is answered to nobody. */
let lastRead: number | undefined;

/**
 * Caches `view`, computed from rules loaded after `generation` was read, unless a newer one is cached that
 * is still of the generation last read (a marker that went back, its table recreated, is a new start: the
 * view cached under the old number would otherwise keep every later view out, each read computing afresh).
 */
function cacheView(view: FleetView, generation: number): void {
  // Its age counts from when its data was read: a computation of a large fleet in a cold container takes seconds.
  if (!cached || cached.generation <= generation || cached.generation !== lastRead) cached = { view, at: view.now.getTime(), generation };
}

/** The fleet view, at most 60 s old and never older than the last refresh or rule change anywhere. */
export async function fleetView(): Promise<FleetView> {
  return (await fleetViewOfGeneration()).view;
}

/** The fleet view with the generation it is of (the one just read: a view of another is never answered). */
async function fleetViewOfGeneration(): Promise<{ view: FleetView; generation: number }> {
  const generation = await currentGeneration();
  lastRead = generation;
  if (cached && cached.generation === generation && Date.now() - cached.at < CACHE_TTL_MS) return { view: cached.view, generation };
  // Concurrent misses in one container share one computation, but only one started under this generation:
  // one started before a rule change (which moves the generation in its transaction) loaded the old rules.
  if (computing?.generation !== generation) {
    const entry = {
      generation,
      view: computeFleetView()
        .then((view) => {
          cacheView(view, generation);
          return view;
        })
        .finally(() => {
          if (computing === entry) computing = undefined;
        }),
    };
    computing = entry;
  }
  return { view: await computing.view, generation };
}

/** Computes afresh, persists the snapshots asked for, and invalidates every container's cache. */
export async function refreshFleetView(kinds: readonly SnapshotKind[]): Promise<FleetView> {
  // Read before the rules are loaded: whatever moves the generation after it (a rule change) is missing from this view.
  const before = await currentGeneration();
  const view = await computeFleetView(new Date(), PACK_BUILDER);
  const persist: Record<SnapshotKind, () => Promise<void>> = {
    fleet: () => putSnapshot('fleet', view.generatedAt, view.scores, { kpis: fleetKpis(view.scores), rules_version: view.health.version }),
    health: () =>
      putSnapshot('health', view.generatedAt, view.healthScores, {
        kpis: healthKpis(view.healthScores, view.fleet, view.health.rules, view.now, view.aggregates),
        rules_version: view.health.version,
      }),
    risk: () => putSnapshot('risk', view.generatedAt, view.snapshots, { summary: riskSummary(view.snapshots), rules_version: view.risk.version }),
  };
  await Promise.all(kinds.map((kind) => persist[kind]()));
  const generation = await bumpGeneration();
  lastRead = generation;
  // Only our own bump since that read: anything else moving it (a rule change among them) makes this view
  // older than the generation, and the next read computes afresh rather than answer it for 60 s.
  if (generation === before + 1) cacheView(view, generation);
  return view;
}

/** The `source` literals of the answers' stamps (schemas.ts). */
type Source = z.infer<(typeof contract.LiveStamp)['source']> | z.infer<(typeof contract.UnifiedStamp)['source']>;

const prepared = new WeakMap<FleetView, Map<string, PreparedJson>>();

/**
 * An answer built from a view, serialized once per view (and so once per cache period). `stamp` (the view's
 * `generated_at`) ends the answer and is left out of its weak ETag, which is the view's `generation` and a digest
 * of the rest (PreparedJson; decision in shared/http/README.md, "Conditional reads").
 */
export function preparedAnswer<T>(
  view: FleetView,
  name: string,
  build: () => unknown,
  options: { stamp?: Record<string, unknown>; version?: number } = {},
): PreparedJson<T> {
  let answers = prepared.get(view);
  if (!answers) prepared.set(view, (answers = new Map()));
  let answer = answers.get(name);
  if (!answer) answers.set(name, (answer = new PreparedJson(build(), options)));
  // Each name is always built by the same `build`: what is stored under it is a T.
  return answer as PreparedJson<T>;
}

/** What viewAnswer adds to `build`'s fields: `source` (unless null) and `generated_at`. */
type Stamped<T, S extends Source | null> = T & (S extends Source ? { source: S } : unknown) & { generated_at: string };

/**
 * A route handler answering from the cached fleet view: `build`'s fields, then
 * `source` (spec §1; none for critical-clusters, whose answer has no source)
 * and the view's `generated_at`, serialized once per view. The prepared answer
 * carries the stamped type, which the route's handler type checks against its
 * response schema. With `oneCluster`, a request whose query names a `cluster_id`
 * (OneClusterQuery) gets that cluster's answer (`oneCluster`'s fields), built for the request and
 * not kept: the cluster page needs one item of answers that weigh megabytes at
 * 10,000 clusters.
 */
export function viewAnswer<T extends object, const S extends Source | null>(
  name: string,
  source: S,
  build: (view: FleetView) => T,
  oneCluster?: (view: FleetView, clusterId: string) => T,
): (request?: { query?: { cluster_id?: string } }) => Promise<PreparedJson<Stamped<T, S>>> {
  const stampless = (fields: T) => {
    // The stamp ends the answer (as before) and is no part of its validator.
    const { generated_at: _stamp, ...rest } = fields as T & { generated_at?: unknown };
    return { ...rest, ...(source ? { source } : {}) };
  };
  return async (request) => {
    const { view, generation } = await fleetViewOfGeneration();
    const options = { stamp: { generated_at: view.generatedAt }, version: generation };
    const clusterId = request?.query?.cluster_id;
    if (oneCluster && clusterId) return new PreparedJson<Stamped<T, S>>(stampless(oneCluster(view, clusterId)) as Stamped<T, S>, options);
    return preparedAnswer<Stamped<T, S>>(view, name, () => stampless(build(view)), options);
  };
}

/** For tests: forget this container's cache. */
export function dropFleetViewCache(): void {
  cached = undefined;
}
