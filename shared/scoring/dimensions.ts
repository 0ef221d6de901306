// One dimension: a metric's value against its green/yellow/red thresholds.
import type { DimensionRule } from '../rules/schemas.js';
import { clamp } from './inputs.js';

/** The four statuses, best first; the columnar scores hold a status as its index here (dimensionStatusCode). */
export const DIMENSION_STATUSES = ['healthy', 'watch', 'warning', 'critical'] as const;

export type DimensionStatus = (typeof DIMENSION_STATUSES)[number];

/** The status code of a dimension without data in the lookback (never an index of DIMENSION_STATUSES). */
export const NO_DATA = 255;

/** How far `value` is past `threshold` in the bad direction (negative: on the good side). */
function beyond(rule: Pick<DimensionRule, 'inverted'>, value: number, threshold: number): number {
  return rule.inverted ? threshold - value : value - threshold;
}

/**
 * 0..100: 100 at or better than green; 100→60 from green to yellow; 60→20
 * from yellow to red; 20→0 over one more (red − yellow) beyond red.
 */
export function dimensionScore(rule: Pick<DimensionRule, 'green' | 'yellow' | 'red' | 'inverted'>, value: number): number {
  const { green, yellow, red } = rule;
  // Every branch is clamped: with thresholds a hair apart or a value near the double range, the
  // arithmetic may round past a band's end (or, for a value that is not a number, give NaN → 0).
  if (beyond(rule, value, green) <= 0) return 100;
  if (beyond(rule, value, yellow) <= 0) return clamp(100 - (40 * beyond(rule, value, green)) / Math.abs(yellow - green), 60, 100);
  if (beyond(rule, value, red) <= 0) return clamp(60 - (40 * beyond(rule, value, yellow)) / Math.abs(red - yellow), 20, 60);
  return clamp(20 - (20 * beyond(rule, value, red)) / Math.abs(red - yellow));
}

/** healthy: at or better than green; watch: before yellow; warning: before red; critical: at or past red. */
export function dimensionStatus(rule: Pick<DimensionRule, 'green' | 'yellow' | 'red' | 'inverted'>, value: number): DimensionStatus {
  return DIMENSION_STATUSES[dimensionStatusCode(rule, value)]!;
}

/** dimensionStatus as its index in DIMENSION_STATUSES, for the columnar scores. */
export function dimensionStatusCode(rule: Pick<DimensionRule, 'green' | 'yellow' | 'red' | 'inverted'>, value: number): number {
  if (beyond(rule, value, rule.green) <= 0) return 0;
  if (beyond(rule, value, rule.yellow) < 0) return 1;
  if (beyond(rule, value, rule.red) < 0) return 2;
  return 3;
}
