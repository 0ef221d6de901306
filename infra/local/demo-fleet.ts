// A realistic demo fleet, deterministic from a seed: N clusters over 15
// customers (tiers S/A/B), regions and engine versions; 14 days of hourly
// metrics where most clusters are healthy, some drift into warning and a few
// are critical (rising compaction, filling disks, error bursts, heap pressure,
// slow queries); alert episodes that fire and resolve (the troubled ones still
// firing); and log events with error signatures. It is loaded through the same
// ingest functions as real data (shared/fleet/ingest.ts).
import { createHash } from 'node:crypto';
import { ingestAlerts, ingestClusters, ingestLogs, ingestMetrics } from '../../shared/fleet/ingest.js';
import { type ClusterInput, type LogEventInput, type MetricKey, type MetricSample, PERCENT_METRIC_KEYS } from '../../shared/fleet/records.js';

const CUSTOMERS: [name: string, tier: 'S' | 'A' | 'B'][] = [
  ['Acme Retail', 'S'],
  ['Globex Logistics', 'S'],
  ['Initech Finance', 'S'],
  ['Umbrella Health', 'A'],
  ['Stark Analytics', 'A'],
  ['Wayne Media', 'A'],
  ['Hooli Cloud', 'A'],
  ['Soylent Foods', 'B'],
  ['Tyrell Robotics', 'B'],
  ['Cyberdyne Energy', 'A'],
  ['Wonka Candy', 'B'],
  ['Oceanic Air', 'B'],
  ['Vandelay Imports', 'B'],
  ['Pied Piper', 'A'],
  ['Massive Dynamic', 'S'],
];
const REGIONS = [
  'US East (us-east-1)',
  'US West (us-west-2)',
  'Europe (eu-central-1)',
  'Europe (eu-west-1)',
  'Asia Pacific (ap-southeast-1)',
  'Asia Pacific (ap-northeast-1)',
];
const VERSIONS = ['3.1.11', '3.2.6', '3.2.9', '3.3.2', '3.3.5'];
const TYPES = ['ELASTIC', 'ELASTIC', 'ELASTIC', 'SHARED_DATA', 'CLASSIC'];
const ENVIRONMENTS = ['prod', 'prod', 'analytics', 'staging', 'reporting'];

export type Trouble = 'compaction' | 'disk' | 'errors' | 'memory' | 'latency';
export type Health = 'healthy' | 'warning' | 'critical';

export interface DemoCluster {
  inventory: ClusterInput;
  health: Health;
  trouble: Trouble | null;
  /** A healthy cluster to watch: this metric sits at this level, past the risk rules' warning, its score still Healthy. */
  watch: { metric: MetricKey; level: number } | null;
}

/** Where a cluster to watch keeps its disk: past the risk rules' warning (80%), short of their critical (90%). */
const WATCHED_DISK_PCT = 84;

/** mulberry32: small, fast, deterministic. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uuidFrom(random: () => number): string {
  const bytes = Array.from({ length: 16 }, () => Math.floor(random() * 256));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const slug = (name: string) => name.toLowerCase().split(' ')[0]!;

export function demoClusters(count: number, seed = 42): DemoCluster[] {
  const random = rng(seed);
  const troubles: Trouble[] = ['compaction', 'disk', 'errors', 'memory', 'latency'];
  const perCustomer = new Map<string, number>();
  return Array.from({ length: count }, (_, i) => {
    const [customer, tier] = CUSTOMERS[i % CUSTOMERS.length]!;
    const n = (perCustomer.get(customer) ?? 0) + 1;
    perCustomer.set(customer, n);
    // About 1 in 12 critical, 1 in 6 warning, the rest healthy; spread over customers.
    const roll = random();
    const health: Health = i % 12 === 5 || roll < 0.04 ? 'critical' : i % 6 === 2 || roll > 0.9 ? 'warning' : 'healthy';
    const accountNo = String(100_000_000_000 + (i % CUSTOMERS.length) * 7_919_113).slice(0, 12);
    return {
      health,
      trouble: health === 'healthy' ? null : troubles[i % troubles.length]!,
      // Some healthy clusters are at risk by one metric: the health view's class and the risk level then differ.
      watch: health === 'healthy' && i % 7 === 3 ? { metric: 'disk_used_pct', level: WATCHED_DISK_PCT } : null,
      inventory: {
        cluster_id: uuidFrom(random),
        cluster_name: `${slug(customer)}-${pick(random, ENVIRONMENTS)}-${n}`,
        customer_name: customer,
        account_id: accountNo,
        account_name: `${customer} Production`,
        email: `dba-team@${slug(customer)}.example.com`,
        customer_tier: tier,
        cluster_type: pick(random, TYPES),
        region: pick(random, REGIONS),
        engine_version: pick(random, VERSIONS),
        resource_state: random() < 0.05 ? 'SCALING' : 'RUNNING',
        node_count: 3 + Math.floor(random() * 18),
      },
    };
  });
}

/** Where each metric sits for a healthy cluster: [low, high]. */
export const HEALTHY: Record<MetricKey, [number, number]> = {
  compaction_score: [15, 80],
  disk_used_pct: [28, 62],
  query_errors_7d: [0, 40],
  query_error_pct: [0.01, 0.3],
  qps: [60, 2500],
  node_count: [0, 0],
  memory_pct: [35, 65],
  peak_jvm_heap_gb: [4, 14],
  error_rate_pct: [0.01, 0.4],
  slow_queries_7d: [0, 25],
  p99_latency_ms: [90, 380],
  avg_latency_ms: [8, 55],
  max_latency_ms: [400, 1800],
};

/**
 * Where a troubled cluster's metrics settle: [warning, critical], null where only a critical one's does. Set against
 * the default health rules (rules/health-rules.yaml) so each shows as its class: a warning cluster's dimensions about
 * midway from yellow to red (metrics score ≈ 75: Warning on the health view, and with an alert or two Warning on the
 * fleet view for every tier, tier S's ×1.5 included), a critical one's past red, its trouble spilling into more
 * (metrics score ≈ 45). One bad metric alone weighs at most 20 of 100, and left every warning cluster Healthy.
 */
export const TROUBLE_TARGETS: Record<Trouble, Partial<Record<MetricKey, [number | null, number]>>> = {
  compaction: { compaction_score: [690, 1600], slow_queries_7d: [500, 2000], p99_latency_ms: [1950, 6000], memory_pct: [89, 99.5], error_rate_pct: [null, 15] },
  disk: { disk_used_pct: [84, 99], query_error_pct: [3.4, 10], error_rate_pct: [5.4, 15], p99_latency_ms: [null, 6000] },
  errors: { query_error_pct: [3.4, 10], error_rate_pct: [5.4, 15], p99_latency_ms: [1950, 6000], slow_queries_7d: [500, 2000], memory_pct: [null, 99.5] },
  memory: {
    memory_pct: [89, 99.5],
    peak_jvm_heap_gb: [26.3, 37],
    query_error_pct: [3.4, 10],
    p99_latency_ms: [1950, 6000],
    error_rate_pct: [null, 15],
    slow_queries_7d: [null, 2000],
  },
  latency: { p99_latency_ms: [1950, 6000], slow_queries_7d: [500, 2000], compaction_score: [690, 1600], memory_pct: [null, 99.5], query_error_pct: [null, 10] },
};

/** Where a short incident (the living feed's: an hour or a few) takes a cluster's metrics: [warning, critical]. */
export const INCIDENT_TARGETS: Record<Trouble, Partial<Record<MetricKey, [number, number]>>> = {
  compaction: { compaction_score: [620, 1350], p99_latency_ms: [900, 2200] },
  disk: { disk_used_pct: [84, 96.5] },
  errors: { query_errors_7d: [900, 6500], query_error_pct: [2.5, 9], error_rate_pct: [3, 11] },
  memory: { memory_pct: [86, 96], peak_jvm_heap_gb: [26, 31] },
  latency: { slow_queries_7d: [260, 1400], p99_latency_ms: [1500, 4200], avg_latency_ms: [160, 420], max_latency_ms: [6000, 15000] },
};

/** How far into the 14 days a trouble has reached its level: it then holds, so the 7-day lookback sees it. */
const TROUBLE_SETTLED_AT = 0.7;

export const ALERTS_FOR: Record<Trouble, string> = {
  compaction: 'CompactionScoreHigh',
  disk: 'DiskUsageHigh',
  errors: 'QueryErrorRateHigh',
  memory: 'JvmHeapPressure',
  latency: 'SlowQueriesHigh',
};

const LOG_SIGNATURES: Record<Trouble, string[]> = {
  compaction: ['Compaction backlog: tablet {n} compaction score {v} exceeds 500', 'Too many versions: tablet {n} has {v} rowsets, load rejected'],
  disk: ['Disk usage {v}% on be-{n}: storage medium almost full', 'Write failed: no space left on device (be-{n})'],
  errors: ['Query failed: Memory of process exceed limit (query_id {n})', 'Query failed: Timeout by txn manager (query_id {n})'],
  memory: ['GC overhead: old generation at {v}% after full GC', 'JVM heap pressure: {v}% used, throttling loads'],
  latency: ['Slow query: {v} ms scanning {n} tablets', 'Slow query: {v} ms waiting for exchange data from be-{n}'],
};

export const HOUR = 3_600_000;

/** The hour starts of the last `days` days, ending with the hour before `now`. */
function hours(days: number, now: Date): Date[] {
  const last = Math.floor(now.getTime() / HOUR) * HOUR - HOUR;
  return Array.from({ length: days * 24 }, (_, i) => new Date(last - (days * 24 - 1 - i) * HOUR));
}

/** A number of the cluster, to seed its own random streams. */
export const clusterSeed = (cluster: DemoCluster, seed: number) => seed ^ parseInt(cluster.inventory.cluster_id.slice(0, 8), 16);

/** Where the cluster's metrics sit when nothing is wrong; the stream then goes on with its noise. */
export function demoBaseline(random: () => number): Record<MetricKey, number> {
  return Object.fromEntries((Object.keys(HEALTHY) as MetricKey[]).map((k) => [k, HEALTHY[k][0] + random() * (HEALTHY[k][1] - HEALTHY[k][0]) * 0.7])) as Record<
    MetricKey,
    number
  >;
}

/** The day's rhythm qps follows (UTC): 0.5 at 00:00, 1.0 at 12:00. */
export const diurnal = (at: Date): number => 0.75 + 0.25 * Math.sin(((at.getUTCHours() - 6) / 24) * 2 * Math.PI);

/** A metric value as a sample carries it: percentages at most 100, 7-day counts whole, two decimals. */
export function sampleValue(key: MetricKey, value: number): number {
  const capped = PERCENT_METRIC_KEYS.has(key) ? Math.min(100, value) : key.endsWith('_7d') ? Math.round(value) : value;
  return Math.round(capped * 100) / 100;
}

/**
 * One metric's hourly value where nothing is wrong, and the noise drawn for it (which a settled level or an
 * incident scales too): node_count as the inventory says (no draw), else the baseline with ±6% noise, qps
 * with the day's rhythm. The load and the living feed both start each sample here.
 */
export function quietValue(cluster: DemoCluster, baseline: Record<MetricKey, number>, key: MetricKey, random: () => number, rhythm: number) {
  if (key === 'node_count') return { value: cluster.inventory.node_count, noise: null };
  const noise = 1 + (random() - 0.5) * 0.12;
  return { value: baseline[key] * noise * (key === 'qps' ? rhythm : 1), noise };
}

/**
 * An hour's maximum latency, never below its P99 (with some headroom, as a server's own figures have): a troubled
 * cluster's P99 climbs past the quiet maximum it keeps, and an issue's key metrics showed a maximum of 953 ms beside
 * a P99 of 1,927. Only the maximum moves: it is no scored dimension, so no cluster changes class.
 */
export function keepAboveP99(key: MetricKey, value: number, hour: Partial<Record<MetricKey, number>>): number {
  const p99 = hour.p99_latency_ms;
  return key === 'max_latency_ms' && p99 !== undefined ? Math.max(value, p99 * 1.25) : value;
}

/** Where a metric of the cluster settles: a watched metric at its level, a troubled one at its class's target; null where it keeps its baseline. */
export function settledLevel(cluster: DemoCluster, key: MetricKey): number | null {
  if (cluster.watch?.metric === key) return cluster.watch.level;
  if (!cluster.trouble || cluster.health === 'healthy') return null;
  return TROUBLE_TARGETS[cluster.trouble][key]?.[cluster.health === 'critical' ? 1 : 0] ?? null;
}

/** Hourly samples for one cluster (13 metric keys × 24 × days). */
export function* demoSamples(cluster: DemoCluster, days: number, now: Date, seed = 42): Generator<MetricSample> {
  const random = rng(clusterSeed(cluster, seed));
  const baseline = demoBaseline(random);
  const slots = hours(days, now);
  for (const [i, at] of slots.entries()) {
    const progress = i / (slots.length - 1); // 0 → 1 over the window
    const rhythm = diurnal(at);
    const hour: Partial<Record<MetricKey, number>> = {};
    for (const key of Object.keys(HEALTHY) as MetricKey[]) {
      let { value, noise } = quietValue(cluster, baseline, key, random, rhythm);
      const end = settledLevel(cluster, key);
      // drift from the baseline towards the target, steeper as it goes, then hold there (node_count keeps the inventory's)
      if (noise !== null && end != null) value = baseline[key] + (end - baseline[key]) * Math.min(1, progress / TROUBLE_SETTLED_AT) ** 2 * noise;
      hour[key] = value = keepAboveP99(key, value, hour);
      yield { cluster_id: cluster.inventory.cluster_id, metric_key: key, value: sampleValue(key, value), at: at.toISOString() };
    }
  }
}

export interface AlertNotification {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

/** A firing alert as Alertmanager notifies it. */
export function firingNotification(cluster: DemoCluster, name: string, severity: string, startsAt: Date): AlertNotification {
  const { cluster_id, cluster_name } = cluster.inventory;
  return {
    status: 'firing',
    labels: { alertname: name, severity, cluster_id, cluster: cluster_name, customer: cluster.inventory.customer_name },
    annotations: {
      summary: `${name} on ${cluster_name}`,
      description: `${name.replace(/([a-z])([A-Z])/g, '$1 $2')} detected on ${cluster_name} (${cluster.inventory.region}).`,
      dashboard_url: `https://grafana.example.com/d/fleet/cluster?var-cluster=${cluster_name}`,
    },
    startsAt: startsAt.toISOString(),
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: `http://prometheus.example.com/graph?g0.expr=${encodeURIComponent(name)}`,
    // Alertmanager's fingerprint identifies the label set: the same for every episode of this alert.
    fingerprint: createHash('sha256').update(`${cluster_id}/${name}`).digest('hex').slice(0, 16),
  };
}

/** Alert episodes as Alertmanager would notify them: firing, then (mostly) resolved. */
export function demoAlerts(clusters: DemoCluster[], days: number, now: Date, seed = 42): { firing: AlertNotification[]; resolved: AlertNotification[] } {
  const random = rng(seed + 7);
  const firing: AlertNotification[] = [];
  const resolved: AlertNotification[] = [];
  const start = now.getTime() - days * 24 * HOUR;
  for (const cluster of clusters) {
    const episodes: [name: string, severity: string, count: number, stillFiring: boolean][] = [];
    if (cluster.trouble) {
      const critical = cluster.health === 'critical';
      // The last episode still fires: a troubled cluster has an ongoing issue.
      episodes.push([ALERTS_FOR[cluster.trouble], critical ? 'critical' : 'warning', critical ? 5 : 3, true]);
      if (critical) episodes.push(['NodeUnreachable', 'critical', 1, false]);
    } else if (random() < 0.15) {
      episodes.push(['NodeRestarted', 'warning', 1, false]);
    }
    for (const [name, severity, count, stillFiring] of episodes) {
      for (let e = 0; e < count; e++) {
        // later episodes are later in the window; the troubled ones cluster towards now
        const begins = start + ((e + 0.2 + random() * 0.6) / count) * (now.getTime() - start - 2 * HOUR);
        const startsAt = new Date(Math.floor(begins / 60_000) * 60_000);
        const last = e === count - 1;
        const notification = firingNotification(cluster, name, severity, startsAt);
        firing.push(notification);
        if (!(last && stillFiring)) {
          const endsAt = new Date(Math.min(now.getTime() - 60_000, startsAt.getTime() + (20 + random() * 220) * 60_000));
          resolved.push({ ...notification, status: 'resolved', endsAt: endsAt.toISOString() });
        }
      }
    }
  }
  return { firing, resolved };
}

/** Log events of the last `days` days (at most 7: the log retention). */
export function demoLogs(clusters: DemoCluster[], days: number, now: Date, seed = 42): LogEventInput[] {
  const random = rng(seed + 13);
  const events: LogEventInput[] = [];
  const span = Math.min(days, 7) * 24 * HOUR - HOUR;
  for (const cluster of clusters) {
    const count = cluster.trouble ? (cluster.health === 'critical' ? 60 : 25) : 4;
    for (let i = 0; i < count; i++) {
      const at = new Date(now.getTime() - span + (span * (i + random())) / count);
      if (cluster.trouble && random() < 0.8) {
        const template = pick(random, LOG_SIGNATURES[cluster.trouble]);
        const message = template.replace('{n}', String(1000 + Math.floor(random() * 9000))).replace('{v}', String(Math.round(80 + random() * 1200)));
        events.push({
          cluster_id: cluster.inventory.cluster_id,
          at: at.toISOString(),
          level: random() < 0.7 ? 'error' : 'warn',
          message,
          source: `be-${1 + Math.floor(random() * 6)}`,
        });
      } else {
        events.push({
          cluster_id: cluster.inventory.cluster_id,
          at: at.toISOString(),
          level: 'info',
          message: 'Checkpoint finished; tablets balanced',
          source: 'fe-1',
        });
      }
    }
  }
  return events;
}

export interface DemoLoadResult {
  clusters: number;
  samples: number;
  alerts: number;
  logs: number;
  rejected: number;
}

const SAMPLE_BATCH = 5000;

/** Generates the demo fleet and loads it through the ingest functions. */
export async function loadDemoFleet(count: number, options: { seed?: number; now?: Date; days?: number } = {}): Promise<DemoLoadResult> {
  const { seed = 42, now = new Date(), days = 14 } = options;
  const clusters = demoClusters(count, seed);
  const result: DemoLoadResult = { clusters: 0, samples: 0, alerts: 0, logs: 0, rejected: 0 };
  const add = (key: 'clusters' | 'samples' | 'alerts' | 'logs', r: { accepted: number; rejected: unknown[] }) => {
    result[key] += r.accepted;
    result.rejected += r.rejected.length;
  };
  add(
    'clusters',
    await ingestClusters(
      clusters.map((c) => c.inventory),
      now,
    ),
  );
  let batch: MetricSample[] = [];
  for (const cluster of clusters) {
    for (const sample of demoSamples(cluster, days, now, seed)) {
      batch.push(sample);
      if (batch.length === SAMPLE_BATCH) {
        add('samples', await ingestMetrics(batch, now));
        batch = [];
      }
    }
  }
  if (batch.length) add('samples', await ingestMetrics(batch, now));
  const alerts = demoAlerts(clusters, days, now, seed);
  add('alerts', await ingestAlerts(alerts.firing, now));
  add('alerts', await ingestAlerts(alerts.resolved, now));
  const logs = demoLogs(clusters, days, now, seed);
  for (let i = 0; i < logs.length; i += SAMPLE_BATCH) add('logs', await ingestLogs(logs.slice(i, i + SAMPLE_BATCH), now));
  return result;
}
