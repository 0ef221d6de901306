// One name per metric key on every page that shows one (risk columns and filter, a cluster's risk
// tiles and charts, analysis, an issue's evidence, critical cards): the risk table wrote "compaction
// score" where the critical cards wrote "Compaction score" for the same figure. A health rule's own
// display_name (a cluster page's chart title) is the operator's name for it, and stays theirs.
import type { MetricKey } from '../../../../shared/fleet/records.js';
import { capitalised } from './format.js';

/** Every key the service stores (`satisfies`: a key added there and not named here fails the type check). */
const NAMES = {
  compaction_score: 'Compaction score',
  disk_used_pct: 'Disk used',
  query_errors_7d: 'Query errors (7 d)',
  query_error_pct: 'Query error rate',
  error_rate_pct: 'Error rate',
  memory_pct: 'Memory',
  peak_jvm_heap_gb: 'Peak JVM heap',
  qps: 'QPS',
  node_count: 'Nodes',
  slow_queries_7d: 'Slow queries (7 d)',
  p99_latency_ms: 'P99 latency',
  avg_latency_ms: 'Average latency',
  max_latency_ms: 'Max latency',
} satisfies Record<MetricKey, string> as Record<string, string>;
const UNITS: Record<string, string> = { pct: '%', ms: 'ms', gb: 'GB' };

/** The unit a metric key's suffix names (`disk_used_pct` is %, `p99_latency_ms` is ms), or '' for a count or score. */
export const metricUnit = (key: string) => UNITS[key.slice(key.lastIndexOf('_') + 1)] ?? '';

/** A figure followed by its unit as people write it: 85%, 12 ms, 27.5 GB; a score or a count alone. */
export const withUnit = (figure: string, unit: string) => (unit === '%' ? `${figure}%` : unit && unit !== 'score' ? `${figure} ${unit}` : figure);

/**
 * A metric key as the console names it: "Compaction score"; with `unit`, where the figure beside it is a
 * bare number, "Disk used (%)". A key this console does not know (a service a release ahead of it) reads in words.
 */
export function metricLabel(key: string, { unit = false }: { unit?: boolean } = {}): string {
  const u = metricUnit(key);
  const name = NAMES[key] ?? capitalised((u ? key.slice(0, key.lastIndexOf('_')) : key).replace(/_/g, ' ').replace(/\b(\d+)d\b/, '($1 d)'));
  return unit && u ? `${name} (${u})` : name;
}
