// The rule sets' full schemas (beyond the spec's minimal checks): a rule set
// that cannot score is refused with a message that says where it is wrong.
import * as z from 'zod';
import { MetricKey } from '../fleet/records.js';

export const Aggregation = z.enum(['max', 'avg', 'last', 'sum', 'min']);
export type Aggregation = z.infer<typeof Aggregation>;

/**
 * Every number in a rule set is finite and bounded (issue 15): a rule set that
 * passes the schema can never make the engine overflow to Infinity or NaN.
 * Thresholds stay within the magnitude ingest accepts for metric values, so
 * their differences are finite too. The ranges are listed in shared/rules/README.md.
 */
export const LIMITS = {
  threshold: 1e15,
  weight: 100,
  minDimensionWeight: 0.001,
  tierMultiplier: 10,
  maxAlerts: 1_000_000,
  lookbackDays: 30,
  cooldownHours: 24 * 30,
  minutes: 10_080,
} as const;

const Threshold = z.number().min(-LIMITS.threshold).max(LIMITS.threshold);
/** A score on the 0..100 scale. */
const Score = z.number().min(0).max(100);

export const DimensionRule = z
  .strictObject({
    metric_key: MetricKey,
    display_name: z.string().min(1).max(64),
    category: z.string().min(1).max(32),
    weight: z.number().min(LIMITS.minDimensionWeight).max(LIMITS.weight),
    green: Threshold,
    yellow: Threshold,
    red: Threshold,
    inverted: z.boolean().default(false),
    aggregation: Aggregation.default('last'),
    action: z.string().min(1).max(500),
  })
  .refine((d) => (d.inverted ? d.green > d.yellow && d.yellow > d.red : d.green < d.yellow && d.yellow < d.red), {
    message: 'thresholds must be ordered green < yellow < red (or green > yellow > red when inverted)',
  });
export type DimensionRule = z.infer<typeof DimensionRule>;

export const AlertBand = z.strictObject({
  /** Up to this many alerts in the lookback (inclusive); null for "any more". */
  max_alerts: z.number().int().min(0).max(LIMITS.maxAlerts).nullable(),
  score: Score,
});
export type AlertBand = z.infer<typeof AlertBand>;

export const HealthRules = z.strictObject({
  scoring: z.strictObject({
    lookback_days: z.number().int().min(1).max(LIMITS.lookbackDays),
    weights: z
      .strictObject({ metrics: z.number().min(0).max(LIMITS.weight), alerts: z.number().min(0).max(LIMITS.weight) })
      .refine((w) => w.metrics + w.alerts > 0, 'weights must not both be 0'),
    tier_multipliers: z
      .record(z.enum(['S', 'A', 'B']), z.number().min(0).max(LIMITS.tierMultiplier))
      .refine((m) => ['S', 'A', 'B'].every((t) => t in m), 'a multiplier for each tier S, A and B'),
    alert_bands: z
      .array(AlertBand)
      .min(1)
      .max(20)
      .refine((bands) => bands.at(-1)!.max_alerts === null, 'the last band must have max_alerts: null (any more alerts)')
      .refine(
        (bands) => bands.slice(0, -1).every((b, i) => b.max_alerts !== null && (i === 0 || b.max_alerts > bands[i - 1]!.max_alerts!)),
        'max_alerts must increase from band to band',
      )
      .refine((bands) => bands.every((b, i) => i === 0 || b.score <= bands[i - 1]!.score), 'band scores must not rise as alerts increase'),
    classification: z
      .strictObject({ healthy: Score, warning: Score })
      .refine((c) => c.healthy > c.warning, 'classification.healthy must be above classification.warning'),
    ai_trigger: z.strictObject({
      tiers: z
        .array(z.enum(['S', 'A', 'B']))
        .max(3)
        .refine((t) => new Set(t).size === t.length, 'each tier at most once'),
      below_score: Score,
      cooldown_hours: z.number().min(0).max(LIMITS.cooldownHours),
    }),
    dimensions: z
      .array(DimensionRule)
      .min(1)
      .max(50)
      .refine((ds) => new Set(ds.map((d) => d.metric_key)).size === ds.length, 'each metric_key at most once'),
  }),
});
export type HealthRules = z.infer<typeof HealthRules>;
export type ScoringRules = HealthRules['scoring'];

export const RiskRule = z
  .strictObject({
    metric_key: MetricKey,
    category: z.string().min(1).max(32),
    warning: Threshold,
    critical: Threshold,
    inverted: z.boolean().default(false),
    aggregation: Aggregation,
    action: z.string().min(1).max(500),
  })
  .refine((r) => (r.inverted ? r.critical < r.warning : r.critical > r.warning), {
    message: 'critical must be beyond warning (above it, or below it when inverted)',
  });
export type RiskRule = z.infer<typeof RiskRule>;

export const RiskRules = z.strictObject({
  risk: z.strictObject({
    lookback_days: z.number().int().min(1).max(LIMITS.lookbackDays),
    rules: z
      .array(RiskRule)
      .min(1)
      .max(50)
      .refine((rs) => new Set(rs.map((r) => r.metric_key)).size === rs.length, 'each metric_key at most once'),
  }),
});
export type RiskRules = z.infer<typeof RiskRules>;
export type RiskRuleSet = RiskRules['risk'];

export const Severity = z.enum(['Critical', 'Warning']);
export type Severity = z.infer<typeof Severity>;

/** `cluster`, `alert_name`, or `label:<name>` (one of the alert's labels). */
const GroupingKey = z.union([z.enum(['cluster', 'alert_name']), z.string().regex(/^label:[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a label key is `label:<name>`')]);

/**
 * An alert-name pattern: a glob (`*` any run of characters, `?` one character),
 * alternatives separated by `|`, matched case-insensitively against the whole
 * name. Globs, not regular expressions: they match in linear time, so a
 * proposed pattern cannot stall grouping (regular expressions can backtrack
 * exponentially, and any role may propose rules).
 */
const AlertNamePattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_.:*?|-]+$/, 'use letters, digits, _ . : - and the wildcards * ? with | between alternatives')
  .refine((p) => p.split('|').every((alt) => alt.length > 0), 'an empty alternative (|| or a | at either end) would match nothing');

export const IssueRules = z.strictObject({
  grouping: z.strictObject({
    keys: z
      .array(GroupingKey)
      .min(1)
      .max(5)
      .refine((keys) => keys.includes('cluster'), 'keys must include `cluster`: an issue belongs to one cluster')
      .refine((keys) => new Set(keys).size === keys.length, 'each key at most once'),
    join_window_minutes: z.number().int().min(1).max(LIMITS.minutes),
  }),
  resolution: z.strictObject({
    quiet_minutes: z.number().int().min(0).max(LIMITS.minutes),
  }),
  severity: z.strictObject({
    default: Severity,
    label: z.string().min(1).max(64).nullable(),
    patterns: z.array(z.strictObject({ match: AlertNamePattern, severity: Severity })).max(50),
  }),
});
export type IssueRules = z.infer<typeof IssueRules>;
