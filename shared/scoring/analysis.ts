// The analysis group: breaking points (who breaches which risk threshold),
// usage charts, and the upgrade view.
import type * as z from '../zod.js';
import { isGone, type MetricKey } from '../fleet/records.js';
import type { RiskRuleSet, ScoringRules } from '../rules/schemas.js';
import type { FleetClusterScore } from './fleet-score.js';
import { aggregateOf, lookbackStart, round2, type ClusterData } from './inputs.js';
import type { RiskSnapshot } from './risk.js';
import type * as contract from './schemas.js';

// The answers' shapes are the zod schemas in schemas.ts; these are inferred from them.
export type BreakingPoints = z.infer<typeof contract.BreakingPoints>;
export type Usage = z.infer<typeof contract.Usage>;
export type Upgrades = z.infer<typeof contract.Upgrades>;

export const METRIC_UNITS: Record<MetricKey, string> = {
  compaction_score: 'score',
  disk_used_pct: '%',
  query_errors_7d: 'errors',
  query_error_pct: '%',
  qps: 'qps',
  node_count: 'nodes',
  memory_pct: '%',
  peak_jvm_heap_gb: 'GB',
  error_rate_pct: '%',
  slow_queries_7d: 'queries',
  p99_latency_ms: 'ms',
  avg_latency_ms: 'ms',
  max_latency_ms: 'ms',
};

const CHART_SIZE = 20;

export function breakingPoints(snapshots: readonly RiskSnapshot[], rules: RiskRuleSet): BreakingPoints {
  const thresholds = rules.rules.map((rule) => {
    const breaching = snapshots
      .filter((s) => s.metrics[rule.metric_key] && s.metrics[rule.metric_key]!.status !== 'healthy')
      .map((s) => ({ cluster_name: s.cluster_name, customer_name: s.customer_name, value: s.metrics[rule.metric_key]!.value }))
      .sort((a, b) => (rule.inverted ? a.value - b.value : b.value - a.value) || a.cluster_name.localeCompare(b.cluster_name));
    return { metric: rule.metric_key, threshold: rule.warning, unit: METRIC_UNITS[rule.metric_key], count: breaching.length, clusters: breaching };
  });
  const inverted = new Map(rules.rules.map((r) => [r.metric_key, r.inverted]));
  const details = snapshots
    .flatMap((s) =>
      rules.rules
        .filter((rule) => s.metrics[rule.metric_key] && s.metrics[rule.metric_key]!.status !== 'healthy')
        .map((rule) => {
          const m = s.metrics[rule.metric_key]!;
          return {
            metric: rule.metric_key,
            cluster_id: s.cluster_id,
            cluster_name: s.cluster_name,
            customer_name: s.customer_name,
            value: m.value,
            threshold: m.status === 'critical' ? rule.critical : rule.warning,
            unit: METRIC_UNITS[rule.metric_key],
            severity: m.status,
          };
        }),
    )
    // critical first, then by metric, worst value first (lowest for inverted rules), then by name
    .sort(
      (a, b) =>
        (a.severity === b.severity ? 0 : a.severity === 'critical' ? -1 : 1) ||
        a.metric.localeCompare(b.metric) ||
        (inverted.get(a.metric as MetricKey) ? a.value - b.value : b.value - a.value) ||
        a.cluster_name.localeCompare(b.cluster_name),
    );
  return { thresholds, details };
}

export function usage(fleet: readonly ClusterData[], scores: readonly FleetClusterScore[], health: ScoringRules, risk: RiskRuleSet, now: Date): Usage {
  const from = lookbackStart(health.lookback_days, now);
  const count = (c: string) => scores.filter((s) => s.classification === c).length;
  const top = <T extends { cluster_name: string }>(rows: T[], by: (t: T) => number) =>
    rows.sort((a, b) => by(b) - by(a) || a.cluster_name.localeCompare(b.cluster_name)).slice(0, CHART_SIZE);
  const compactionThreshold =
    risk.rules.find((r) => r.metric_key === 'compaction_score')?.warning ?? health.dimensions.find((d) => d.metric_key === 'compaction_score')?.yellow ?? 0;
  // From the cluster's rollup columns when it has them: no rollup object is built.
  const value = (d: ClusterData, key: MetricKey, how: 'max' | 'avg') => aggregateOf(d, key, how, from);
  return {
    health_distribution: { healthy: count('Healthy'), warning: count('Warning'), critical: count('Critical') },
    compaction_bars: top(
      fleet.flatMap((d) => {
        const v = value(d, 'compaction_score', 'max');
        return v === null ? [] : [{ cluster_name: d.cluster.cluster_name, value: round2(v), threshold: compactionThreshold }];
      }),
      (r) => r.value,
    ),
    latency_trend: top(
      fleet.flatMap((d) => {
        const avg = value(d, 'avg_latency_ms', 'avg');
        const max = value(d, 'max_latency_ms', 'max');
        // both or nothing: never show the average as a maximum
        return avg === null || max === null ? [] : [{ cluster_name: d.cluster.cluster_name, avg_latency: round2(avg), max_latency: round2(max) }];
      }),
      (r) => r.avg_latency,
    ),
    qps_bars: top(
      fleet.flatMap((d) => {
        const v = value(d, 'qps', 'avg');
        return v === null ? [] : [{ cluster_name: d.cluster.cluster_name, value: round2(v) }];
      }),
      (r) => r.value,
    ),
  };
}

/** Semantic version order: 3.10.0 > 3.9.2; a pre-release sorts before its release; rc.10 > rc.9; a `v` (any text before the first digit) is no part. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    // `v10.0.0` is 10.0.0: read as a 0 part, v10 sorted below v2.5.
    const [core = '', pre] = v.split('+')[0]!.replace(/^\D+/, '').split(/-(.*)/s);
    return { nums: core.split('.').map((p) => Number.parseInt(p, 10) || 0), pre: pre ? pre.split('.') : [] };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return d;
  }
  if (x.pre.length === 0 || y.pre.length === 0) return y.pre.length - x.pre.length; // a release beats its pre-releases
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1; // fewer identifiers, equal so far: lower
    if (q === undefined) return 1;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn) {
      if (Number(p) !== Number(q)) return Number(p) - Number(q);
    } else if (pn !== qn)
      return pn ? -1 : 1; // numeric identifiers sort before text
    else if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}

/** Not running (the fleet's views leave gone clusters out already): nothing to upgrade. */
const STOPPED = new Set(['STOPPED', 'SUSPENDED']);

export function upgrades(fleet: readonly ClusterData[]): Upgrades {
  const active = fleet.map((d) => d.cluster).filter((c) => !isGone(c) && !STOPPED.has(c.resource_state.toUpperCase()));
  return {
    clusters: active
      .map(({ cluster_id, cluster_name, customer_name, cluster_type, region, engine_version, resource_state, node_count }) => ({
        cluster_id,
        cluster_name,
        customer_name,
        cluster_type,
        region,
        engine_version,
        resource_state,
        node_count,
      }))
      .sort((a, b) => compareVersions(a.engine_version, b.engine_version) || a.cluster_name.localeCompare(b.cluster_name)),
    // The versions the listed clusters run: one only a stopped cluster still runs is no version to upgrade to.
    available_versions: [...new Set(active.map((c) => c.engine_version))].sort((a, b) => compareVersions(b, a)),
  };
}
