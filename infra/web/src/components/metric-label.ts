// One name per metric key on every page that shows one (risk columns and filter, a cluster's risk
// tiles and charts, analysis, an issue's evidence, critical cards): the risk table wrote "compaction
// score" where the critical cards wrote "Compaction score" for the same figure.
const NAMES: Record<string, string> = {
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
};
const UNITS: Record<string, string> = { pct: '%', ms: 'ms', gb: 'GB' };

/** The unit a metric key's suffix names (`disk_used_pct` is %, `p99_latency_ms` is ms), or '' for a count or score. */
export const metricUnit = (key: string) => UNITS[key.slice(key.lastIndexOf('_') + 1)] ?? '';

/**
 * A metric key as the console names it: "Compaction score"; with `unit`, where the figure beside it is a
 * bare number, "Disk used (%)". A key added to the rules since (any metric_key is allowed) reads in words.
 */
export function metricLabel(key: string, { unit = false }: { unit?: boolean } = {}): string {
  const u = metricUnit(key);
  const name =
    NAMES[key] ??
    (() => {
      const words = (u ? key.slice(0, key.lastIndexOf('_')) : key).replace(/_/g, ' ').replace(/\b(\d+)d\b/, '($1 d)');
      return words.charAt(0).toUpperCase() + words.slice(1);
    })();
  return unit && u ? `${name} (${u})` : name;
}
