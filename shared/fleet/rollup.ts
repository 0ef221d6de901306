// Daily metric rollups: per cluster, per UTC day, per metric key the min, max,
// sum, count and the value of the latest sample. Pure functions; the metrics
// repository stores the result.
import type { MetricKey, MetricSample } from './records.js';

export interface MetricRollup {
  min: number;
  max: number;
  sum: number;
  count: number;
  /** Value of the sample with the latest `at` (ties: the one merged last). */
  last: number;
  last_at: string;
}

export type DayRollup = Partial<Record<MetricKey, MetricRollup>>;

export const dayOf = (at: string): string => new Date(at).toISOString().slice(0, 10);

export function mergeSample(into: DayRollup, sample: Pick<MetricSample, 'metric_key' | 'value' | 'at'>): DayRollup {
  const at = new Date(sample.at).toISOString();
  const current = into[sample.metric_key];
  if (!current) {
    into[sample.metric_key] = { min: sample.value, max: sample.value, sum: sample.value, count: 1, last: sample.value, last_at: at };
    return into;
  }
  current.min = Math.min(current.min, sample.value);
  current.max = Math.max(current.max, sample.value);
  current.sum += sample.value;
  current.count += 1;
  if (at >= current.last_at) {
    current.last = sample.value;
    current.last_at = at;
  }
  return into;
}

export const average = (r: MetricRollup): number => r.sum / r.count;
