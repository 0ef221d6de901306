// Daily metric rollups: per cluster, per UTC day, per metric key the min, max,
// sum, count and the value of the latest sample. Pure functions; the metrics
// repository stores the result.
//
// Every number of a rollup is finite, always: samples are bounded to ±1e15
// (METRIC_VALUE_MAX), so a day's sum stays within count × 1e15, and the merge,
// the stored cell's encoder (rollup-columns.ts) and both readers each refuse or
// drop anything else. JSON, the stored form before cells, had no Infinity: it
// was stored as null and read back as 0.
import { METRIC_VALUE_MAX, type MetricKey, type MetricSample } from './records.js';

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

export const dayOf = (at: string | number): string => new Date(at).toISOString().slice(0, 10);

/** Every number finite, the count a positive integer. (Spelled out: a refresh checks 130,000 of them.) */
export function isSound(r: MetricRollup | undefined): r is MetricRollup {
  return (
    typeof r === 'object' &&
    r !== null &&
    Number.isFinite(r.min) &&
    Number.isFinite(r.max) &&
    Number.isFinite(r.sum) &&
    Number.isFinite(r.last) &&
    Number.isSafeInteger(r.count) &&
    r.count > 0
  );
}

/**
 * Merges one sample; a value outside ±1e15 (or a merge that would not be finite) is refused with a RangeError,
 * leaving `into` as it was. Only finiteness: ingest and pulls refuse negatives too (isMetricValue), but rollups
 * stored before may hold them, and the engine reads them as they are.
 */
export function mergeSample(into: DayRollup, sample: Pick<MetricSample, 'metric_key' | 'value' | 'at'>): DayRollup {
  const { value } = sample;
  if (!Number.isFinite(value) || Math.abs(value) > METRIC_VALUE_MAX) throw new RangeError(`metric value ${value} is not a finite number within ±1e15`);
  const at = new Date(sample.at).toISOString();
  const current = into[sample.metric_key];
  if (!current) {
    into[sample.metric_key] = { min: value, max: value, sum: value, count: 1, last: value, last_at: at };
    return into;
  }
  const sum = current.sum + value;
  const count = current.count + 1;
  if (!Number.isFinite(sum) || !Number.isSafeInteger(count)) throw new RangeError(`the ${sample.metric_key} rollup of this day would overflow`);
  current.min = Math.min(current.min, value);
  current.max = Math.max(current.max, value);
  current.sum = sum;
  current.count = count;
  if (at >= current.last_at) {
    current.last = value;
    current.last_at = at;
  }
  return into;
}

/**
 * Adds a rollup of other samples of the same day (a pulled window's) into
 * `into`: min of mins, max of maxes, sums and counts added, the later `last`.
 * Refused with a RangeError, leaving `into` as it was, when the result would
 * not be finite.
 */
export function combineRollup(into: DayRollup, key: MetricKey, part: MetricRollup): DayRollup {
  if (!isSound(part)) throw new RangeError(`the ${key} rollup to add holds a non-finite number`);
  const current = into[key];
  if (!current) {
    into[key] = { ...part };
    return into;
  }
  const sum = current.sum + part.sum;
  const count = current.count + part.count;
  if (!Number.isFinite(sum) || !Number.isSafeInteger(count)) throw new RangeError(`the ${key} rollup of this day would overflow`);
  current.min = Math.min(current.min, part.min);
  current.max = Math.max(current.max, part.max);
  current.sum = sum;
  current.count = count;
  if (part.last_at >= current.last_at) {
    current.last = part.last;
    current.last_at = part.last_at;
  }
  return into;
}

/**
 * A day's rollups stored as a JSON string, as every item was before issue 21's
 * binary cells (shared/fleet/rollup-columns.ts encodeCell). An entry with a number
 * that is not finite (a rollup that overflowed before samples were bounded was
 * stored with a null sum) is dropped: "no data" rather than an average of 0 that
 * scoring would believe.
 */
export function parseDayRollup(json: string): DayRollup {
  const parsed = JSON.parse(json) as Record<string, MetricRollup | undefined>;
  const day: DayRollup = {};
  for (const key in parsed) {
    const r = parsed[key];
    if (isSound(r)) day[key as MetricKey] = r;
  }
  return day;
}

/**
 * The mean of `count` samples of `sum`, never outside [min, max]: a sum past 2^53 (300 samples near 1e15) is
 * rounded, and its quotient came out above the day's maximum (999999999999999.8 beside a max of 999999999999999).
 */
export const meanWithin = (sum: number, count: number, min: number, max: number): number => Math.min(max, Math.max(min, sum / count));

export const average = (r: MetricRollup): number => meanWithin(r.sum, r.count, r.min, r.max);
