// The console's one name per metric key (infra/web/src/components/metric-label.ts), read against the
// keys the service stores (METRIC_KEYS), so a page never shows a raw key such as "disk_used_pct".
import { describe, expect, it } from 'vitest';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { metricLabel, metricUnit } from '../../infra/web/src/components/metric-label.js';

describe('metricLabel', () => {
  it('names every metric the service stores in words, capitalised, with no underscore', () => {
    for (const key of METRIC_KEYS) {
      const name = metricLabel(key, { unit: true });
      expect(name, key).not.toMatch(/_/);
      expect(name.charAt(0), key).toBe(name.charAt(0).toUpperCase());
    }
  });

  it('names the unit only when asked, for the keys whose suffix is one', () => {
    expect(metricLabel('compaction_score')).toBe('Compaction score');
    expect(metricLabel('compaction_score', { unit: true })).toBe('Compaction score');
    expect(metricLabel('disk_used_pct')).toBe('Disk used');
    expect(metricLabel('disk_used_pct', { unit: true })).toBe('Disk used (%)');
    expect(metricLabel('peak_jvm_heap_gb', { unit: true })).toBe('Peak JVM heap (GB)');
    expect(metricLabel('p99_latency_ms', { unit: true })).toBe('P99 latency (ms)');
    expect(metricLabel('query_errors_7d', { unit: true })).toBe('Query errors (7 d)');
    expect([metricUnit('memory_pct'), metricUnit('qps'), metricUnit('slow_queries_7d')]).toEqual(['%', '', '']);
  });

  it('reads a key it does not know (a service a release ahead) in words, its window and unit spelled out', () => {
    expect(metricLabel('replica_lag_ms', { unit: true })).toBe('Replica lag (ms)');
    expect(metricLabel('failed_loads_30d')).toBe('Failed loads (30 d)');
    expect(metricLabel('tablets')).toBe('Tablets');
  });
});
