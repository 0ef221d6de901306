// Builders for the pure scoring engine's inputs (ClusterData: inventory, daily
// rollups, alerts) and the shipped default rule sets, parsed with the real
// schemas. No DynamoDB: everything here is plain data.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { AlertRecord, AlertStatus } from '../../shared/db/alerts.js';
import type { ClusterRecord } from '../../shared/db/clusters.js';
import type { StoredRollup } from '../../shared/db/metrics.js';
import type { MetricKey } from '../../shared/fleet/records.js';
import { mergeSample, type DayRollup } from '../../shared/fleet/rollup.js';
import { HealthRules, RiskRules, type AlertBand, type DimensionRule, type RiskRule, type RiskRuleSet, type ScoringRules } from '../../shared/rules/schemas.js';
import type { ClusterData } from '../../shared/scoring/inputs.js';

/** A fixed "now" (midday UTC) so lookbacks are reproducible. */
export const NOW = new Date('2026-11-20T12:00:00Z');
export const TODAY = '2026-11-20';
const DAY_MS = 86_400_000;

/** The UTC day `n` days before `now` (0 = today). */
export function daysAgo(n: number, now: Date = NOW): string {
  return new Date(now.getTime() - n * DAY_MS).toISOString().slice(0, 10);
}

/** An ISO timestamp `hours` before `now`. */
export function hoursAgo(hours: number, now: Date = NOW): string {
  return new Date(now.getTime() - hours * 3_600_000).toISOString();
}

// ---------- rule sets ----------

function readYaml(name: string): unknown {
  return parse(readFileSync(new URL(`../../rules/${name}.yaml`, import.meta.url), 'utf8'), { maxAliasCount: 0 });
}

/** The shipped rules/health-rules.yaml, validated by the real schema. */
export function defaultHealthRules(): ScoringRules {
  return HealthRules.parse(readYaml('health-rules')).scoring;
}

/** The shipped rules/risk-rules.yaml, validated by the real schema. */
export function defaultRiskRules(): RiskRuleSet {
  return RiskRules.parse(readYaml('risk-rules')).risk;
}

export function dimension(over: Partial<DimensionRule> & Pick<DimensionRule, 'metric_key'>): DimensionRule {
  return {
    display_name: over.metric_key,
    category: 'test',
    weight: 1,
    green: 70,
    yellow: 80,
    red: 90,
    inverted: false,
    aggregation: 'last',
    action: `Act on ${over.metric_key}.`,
    ...over,
  };
}

export const DEFAULT_BANDS: AlertBand[] = [
  { max_alerts: 0, score: 100 },
  { max_alerts: 2, score: 80 },
  { max_alerts: 5, score: 50 },
  { max_alerts: 10, score: 25 },
  { max_alerts: null, score: 0 },
];

/** Small hand-written scoring rules (weights 7/3, so normalisation matters). */
export function scoringRules(dimensions: DimensionRule[], over: Partial<ScoringRules> = {}): ScoringRules {
  const rules: ScoringRules = {
    lookback_days: 7,
    weights: { metrics: 7, alerts: 3 },
    tier_multipliers: { S: 1.5, A: 1.2, B: 1 },
    alert_bands: DEFAULT_BANDS,
    classification: { healthy: 80, warning: 60 },
    ai_trigger: { tiers: ['S'], below_score: 60, cooldown_hours: 24 },
    // The fixtures' samples are taken from 00:00, up to 12 h before NOW: a day keeps a cluster with
    // today's samples fresh (the shipped rules say 180 minutes); staleness tests set their own.
    stale_after_minutes: 24 * 60,
    dimensions,
    ...over,
  };
  // Hand-written rules must still be rules the service would accept.
  return HealthRules.parse({ scoring: rules }).scoring;
}

export function riskRule(over: Partial<RiskRule> & Pick<RiskRule, 'metric_key' | 'warning' | 'critical'>): RiskRule {
  return { category: 'test', inverted: false, aggregation: 'last', action: `Act on ${over.metric_key}.`, ...over };
}

export function riskRules(rules: RiskRule[], lookback_days = 7): RiskRuleSet {
  return RiskRules.parse({ risk: { lookback_days, rules } }).risk;
}

// ---------- fleet data ----------

let seq = 0;
/** A deterministic uuid-shaped id per call. */
export function nextId(): string {
  seq += 1;
  return `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`;
}

export function clusterRecord(name: string, over: Partial<ClusterRecord> = {}): ClusterRecord {
  return {
    cluster_id: nextId(),
    cluster_name: name,
    customer_name: 'Acme Retail',
    account_id: '123456789012',
    account_name: 'Acme Production',
    email: 'ops@acme.example.com',
    customer_tier: 'B',
    cluster_type: 'ELASTIC',
    region: 'US East (us-east-1)',
    engine_version: '3.2.6',
    resource_state: 'RUNNING',
    node_count: 6,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

/** Samples of one UTC day: each metric's values, taken one hour apart from 00:00 (the last listed is the latest). */
export type DaySamples = Partial<Record<MetricKey, number | number[]>>;

/** A day's rollup built the way ingest builds it (mergeSample). */
export function rollup(clusterId: string, day: string, samples: DaySamples): StoredRollup {
  const metrics: DayRollup = {};
  for (const [key, v] of Object.entries(samples) as [MetricKey, number | number[]][]) {
    const values = Array.isArray(v) ? v : [v];
    for (const [i, value] of values.entries()) mergeSample(metrics, { metric_key: key, value, at: `${day}T${String(i % 24).padStart(2, '0')}:00:00.000Z` });
  }
  return { cluster_id: clusterId, day, metrics };
}

export function alert(clusterId: string, name: string, startsAt: string, status: AlertStatus = 'Resolved'): AlertRecord {
  const fingerprint = `${name}-${startsAt}`;
  return {
    alert_id: `${clusterId}#${fingerprint}`,
    cluster_id: clusterId,
    alert_name: name,
    severity: 'warning',
    status,
    starts_at: startsAt,
    ends_at: status === 'Resolved' ? startsAt : null,
    fingerprint,
    labels: { cluster_id: clusterId, alertname: name },
    annotations: {},
    summary: name,
    detail: '',
    dashboard_url: '',
    received_at: startsAt,
    updated_at: startsAt,
  };
}

export interface ClusterSpec {
  cluster?: Partial<ClusterRecord>;
  /** Rollups by day offset (0 = today). */
  days?: Record<number, DaySamples>;
  /** Today's samples (shorthand for days[0]). */
  today?: DaySamples;
  /** Number of resolved alerts that started an hour ago each (distinct fingerprints). */
  alertCount?: number;
  alerts?: (clusterId: string) => AlertRecord[];
}

export function clusterData(name: string, spec: ClusterSpec = {}): ClusterData {
  const cluster = clusterRecord(name, spec.cluster);
  const days: Record<number, DaySamples> = { ...spec.days };
  if (spec.today) days[0] = { ...days[0], ...spec.today };
  const rollups = Object.entries(days).map(([offset, samples]) => rollup(cluster.cluster_id, daysAgo(Number(offset)), samples));
  const alerts = [
    ...Array.from({ length: spec.alertCount ?? 0 }, (_, i) => alert(cluster.cluster_id, `Alert${i}`, hoursAgo(1 + i / 60))),
    ...(spec.alerts?.(cluster.cluster_id) ?? []),
  ];
  return { cluster, rollups, alerts };
}
