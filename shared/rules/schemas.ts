// The rule sets' full schemas (beyond the spec's minimal checks): a rule set
// that cannot score is refused with a message that says where it is wrong.
//
// Each schema of a rule set is built on its first use (z.lazy): a function reads one or
// two of the four sets, and building all four at import was ≈ 380 zod schemas in every
// route group's cold start (issue 21 §4). The helpers below are functions for the same
// reason; the small enums and limits stay eager.
import * as z from '../zod.js';
import { ClusterInput, METRIC_KEYS, MetricKey } from '../fleet/records.js';
import { isSecureUrl } from '../http/service-url.js';

const METRIC_KEY_COUNT = METRIC_KEYS.length;

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
  staleMinutes: 30 * 24 * 60,
  stepSeconds: 3_600,
  backfillDays: 30,
  pointsPerRequest: 1_000_000,
  timeoutSeconds: 120,
  scale: 1e12,
} as const;

const threshold = () => z.number().check(z.gte(-LIMITS.threshold), z.lte(LIMITS.threshold));
/** A score on the 0..100 scale. */
const score = () => z.number().check(z.gte(0), z.lte(100));

export const DimensionRule = z.lazy(() =>
  z
    .strictObject({
      metric_key: MetricKey,
      display_name: z.string().check(z.minLength(1), z.maxLength(64)),
      category: z.string().check(z.minLength(1), z.maxLength(32)),
      weight: z.number().check(z.gte(LIMITS.minDimensionWeight), z.lte(LIMITS.weight)),
      green: threshold(),
      yellow: threshold(),
      red: threshold(),
      inverted: z._default(z.boolean(), false),
      aggregation: z._default(Aggregation, 'last'),
      action: z.string().check(z.minLength(1), z.maxLength(500)),
    })
    .check(
      z.refine((d) => (d.inverted ? d.green > d.yellow && d.yellow > d.red : d.green < d.yellow && d.yellow < d.red), {
        message: 'thresholds must be ordered green < yellow < red (or green > yellow > red when inverted)',
      }),
    ),
);
export type DimensionRule = z.infer<typeof DimensionRule>;

export const AlertBand = z.lazy(() =>
  z.strictObject({
    /** Up to this many alerts in the lookback (inclusive); null for "any more". */
    max_alerts: z.nullable(z.int().check(z.gte(0), z.lte(LIMITS.maxAlerts))),
    score: score(),
  }),
);
export type AlertBand = z.infer<typeof AlertBand>;

export const HealthRules = z.lazy(() =>
  z.strictObject({
    scoring: z.strictObject({
      lookback_days: z.int().check(z.gte(1), z.lte(LIMITS.lookbackDays)),
      weights: z
        .strictObject({
          metrics: z.number().check(z.gte(0), z.lte(LIMITS.weight)),
          alerts: z.number().check(z.gte(0), z.lte(LIMITS.weight)),
        })
        .check(z.refine((w) => w.metrics + w.alerts > 0, 'weights must not both be 0')),
      tier_multipliers: z
        .record(z.enum(['S', 'A', 'B']), z.number().check(z.gte(0), z.lte(LIMITS.tierMultiplier)))
        .check(z.refine((m) => ['S', 'A', 'B'].every((t) => t in m), 'a multiplier for each tier S, A and B')),
      alert_bands: z.array(AlertBand).check(
        z.minLength(1),
        z.maxLength(20),
        // No bands is minLength's issue alone (a check does not stop the ones after it).
        z.refine((bands) => bands.length === 0 || bands.at(-1)!.max_alerts === null, 'the last band must have max_alerts: null (any more alerts)'),
        z.refine(
          (bands) => bands.slice(0, -1).every((b, i) => b.max_alerts !== null && (i === 0 || b.max_alerts > bands[i - 1]!.max_alerts!)),
          'max_alerts must increase from band to band',
        ),
        z.refine((bands) => bands.every((b, i) => i === 0 || b.score <= bands[i - 1]!.score), 'band scores must not rise as alerts increase'),
      ),
      classification: z
        .strictObject({ healthy: score(), warning: score() })
        .check(z.refine((c) => c.healthy > c.warning, 'classification.healthy must be above classification.warning')),
      ai_trigger: z.strictObject({
        tiers: z.array(z.enum(['S', 'A', 'B'])).check(
          z.maxLength(3),
          z.refine((t) => new Set(t).size === t.length, 'each tier at most once'),
        ),
        below_score: score(),
        cooldown_hours: z.number().check(z.gte(0), z.lte(LIMITS.cooldownHours)),
      }),
      /**
       * A cluster whose newest sample is older than this many minutes (or that has
       * none in the lookback) is flagged stale: its score says so rather than
       * silently standing on old data. Optional so versions stored before it still load.
       */
      stale_after_minutes: z._default(z.int().check(z.gte(5), z.lte(LIMITS.staleMinutes)), 180),
      dimensions: z.array(DimensionRule).check(
        z.minLength(1),
        z.maxLength(50),
        z.refine((ds) => new Set(ds.map((d) => d.metric_key)).size === ds.length, 'each metric_key at most once'),
      ),
    }),
  }),
);
export type HealthRules = z.infer<typeof HealthRules>;
export type ScoringRules = HealthRules['scoring'];

/**
 * The finest a threshold may be written: a metric is judged at as many decimals as its thresholds have, up to this
 * (shared/scoring/inputs.ts judgedDecimals). Two thresholds apart only beyond it would judge alike, and the band
 * between them could never be reached. Refused where versions are written (the *ToWrite schemas), not where stored
 * ones are read: one stored before still loads.
 */
export const THRESHOLD_DECIMALS = 6;
const DECIMALS_SCALE = 10 ** THRESHOLD_DECIMALS;
/** Written with at most THRESHOLD_DECIMALS decimals (from 2^52 / 10^6 up, every double is). */
const withinThresholdDecimals = (t: number) => Math.abs(t) >= 2 ** 52 / DECIMALS_SCALE || Math.round(t * DECIMALS_SCALE) / DECIMALS_SCALE === t;
const FINER_THRESHOLD = `thresholds may have at most ${THRESHOLD_DECIMALS} decimals: metrics are judged at that precision`;

/** HealthRules as a version is written: thresholds within THRESHOLD_DECIMALS. */
export const HealthRulesToWrite = z.lazy(() =>
  HealthRules.check(
    z.refine((h) => h.scoring.dimensions.every((d) => [d.green, d.yellow, d.red].every(withinThresholdDecimals)), {
      message: FINER_THRESHOLD,
      path: ['scoring', 'dimensions'],
    }),
  ),
);

export const RiskRule = z.lazy(() =>
  z
    .strictObject({
      metric_key: MetricKey,
      category: z.string().check(z.minLength(1), z.maxLength(32)),
      warning: threshold(),
      critical: threshold(),
      inverted: z._default(z.boolean(), false),
      aggregation: Aggregation,
      action: z.string().check(z.minLength(1), z.maxLength(500)),
    })
    .check(
      z.refine((r) => (r.inverted ? r.critical < r.warning : r.critical > r.warning), {
        message: 'critical must be beyond warning (above it, or below it when inverted)',
      }),
    ),
);
export type RiskRule = z.infer<typeof RiskRule>;

export const RiskRules = z.lazy(() =>
  z.strictObject({
    risk: z.strictObject({
      lookback_days: z.int().check(z.gte(1), z.lte(LIMITS.lookbackDays)),
      rules: z.array(RiskRule).check(
        z.minLength(1),
        z.maxLength(50),
        z.refine((rs) => new Set(rs.map((r) => r.metric_key)).size === rs.length, 'each metric_key at most once'),
      ),
    }),
  }),
);
export type RiskRules = z.infer<typeof RiskRules>;
export type RiskRuleSet = RiskRules['risk'];

/** RiskRules as a version is written: thresholds within THRESHOLD_DECIMALS (HealthRulesToWrite says why). */
export const RiskRulesToWrite = z.lazy(() =>
  RiskRules.check(
    z.refine((r) => r.risk.rules.every((rule) => [rule.warning, rule.critical].every(withinThresholdDecimals)), {
      message: FINER_THRESHOLD,
      path: ['risk', 'rules'],
    }),
  ),
);

export const Severity = z.enum(['Critical', 'Warning']);
export type Severity = z.infer<typeof Severity>;

/** `cluster`, `alert_name`, or `label:<name>` (one of the alert's labels). */
const groupingKey = () =>
  z.union([z.enum(['cluster', 'alert_name']), z.string().check(z.regex(/^label:[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a label key is `label:<name>`'))]);

/**
 * An alert-name pattern: a glob (`*` any run of characters, `?` one character),
 * alternatives separated by `|`, matched case-insensitively against the whole
 * name. Globs, not regular expressions: they match in linear time, so a
 * proposed pattern cannot stall grouping (regular expressions can backtrack
 * exponentially, and any role may propose rules).
 */
const alertNamePattern = () =>
  z.string().check(
    z.minLength(1),
    z.maxLength(200),
    z.regex(/^[A-Za-z0-9_.:*?|-]+$/, 'use letters, digits, _ . : - and the wildcards * ? with | between alternatives'),
    z.refine((p) => p.split('|').every((alt) => alt.length > 0), 'an empty alternative (|| or a | at either end) would match nothing'),
  );

export const IssueRules = z.lazy(() =>
  z.strictObject({
    grouping: z.strictObject({
      keys: z.array(groupingKey()).check(
        z.minLength(1),
        z.maxLength(5),
        z.refine((keys) => keys.includes('cluster'), 'keys must include `cluster`: an issue belongs to one cluster'),
        z.refine((keys) => new Set(keys).size === keys.length, 'each key at most once'),
      ),
      join_window_minutes: z.int().check(z.gte(1), z.lte(LIMITS.minutes)),
    }),
    resolution: z.strictObject({
      quiet_minutes: z.int().check(z.gte(0), z.lte(LIMITS.minutes)),
    }),
    severity: z.strictObject({
      default: Severity,
      label: z.nullable(z.string().check(z.minLength(1), z.maxLength(64))),
      patterns: z.array(z.strictObject({ match: alertNamePattern(), severity: Severity })).check(z.maxLength(50)),
    }),
  }),
);
export type IssueRules = z.infer<typeof IssueRules>;

// ---- metric sources: where the puller reads metrics (rules/metric-sources.yaml) ----

/** A Prometheus label name (the data model's syntax). */
const labelName = () => z.string().check(z.regex(/^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/, 'a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)'));

/**
 * Credentials never live in the rule set (any role reads it and may propose
 * changes): a bearer token or basic password is the PROMETHEUS_CREDENTIAL
 * secret; SigV4 signs with the function's own AWS role.
 */
export const PrometheusAuth = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('none') }),
    z.strictObject({ type: z.literal('bearer') }),
    z.strictObject({ type: z.literal('basic'), username: z.string().check(z.minLength(1), z.maxLength(256)) }),
    z.strictObject({
      type: z.literal('sigv4'),
      region: z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'an AWS region such as us-east-1')),
      /** Amazon Managed Service for Prometheus signs for `aps`. */
      service: z._default(z.string().check(z.minLength(1), z.maxLength(64)), 'aps'),
    }),
  ]),
);
export type PrometheusAuth = z.infer<typeof PrometheusAuth>;

/** Unit conversions a query's values go through before `scale`. */
export const UNIT_CONVERSIONS = {
  none: 1,
  ratio_to_percent: 100,
  bytes_to_gib: 1 / 1024 ** 3,
  bytes_to_gb: 1e-9,
  seconds_to_ms: 1000,
} as const;
export const UnitConversion = z.lazy(() => z.enum(Object.keys(UNIT_CONVERSIONS) as [keyof typeof UNIT_CONVERSIONS, ...(keyof typeof UNIT_CONVERSIONS)[]]));

export const MetricQuery = z.lazy(() =>
  z.strictObject({
    metric_key: MetricKey,
    /** PromQL yielding one series per cluster, carrying the cluster label. */
    query: z.string().check(z.trim(), z.minLength(1), z.maxLength(2_000)),
    convert: z._default(UnitConversion, 'none'),
    /** Multiplied in after `convert`. */
    scale: z._default(
      z.number().check(
        z.gte(-LIMITS.scale),
        z.lte(LIMITS.scale),
        z.refine((v) => v !== 0, 'scale 0 would erase every value'),
      ),
      1,
    ),
  }),
);
export type MetricQuery = z.infer<typeof MetricQuery>;

/** Inventory fields an info series may carry, by the label that holds each. */
export const InventoryLabels = z.lazy(() =>
  z.strictObject({
    cluster_name: z.optional(labelName()),
    customer_name: z.optional(labelName()),
    account_id: z.optional(labelName()),
    account_name: z.optional(labelName()),
    email: z.optional(labelName()),
    customer_tier: z.optional(labelName()),
    cluster_type: z.optional(labelName()),
    region: z.optional(labelName()),
    engine_version: z.optional(labelName()),
    resource_state: z.optional(labelName()),
  }),
);

export const MetricSources = z.lazy(() =>
  z.strictObject({
    prometheus: z
      .strictObject({
        enabled: z.boolean(),
        /** The query API's base: `<url>/api/v1/query_range` is what the puller calls. */
        url: z.url({ protocol: /^https?$/, error: 'an http or https URL' }).check(
          z.maxLength(2_048),
          z.refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), 'no credentials in the URL: use auth and the PROMETHEUS_CREDENTIAL secret'),
        ),
        auth: PrometheusAuth,
        timeout_seconds: z.int().check(z.gte(1), z.lte(LIMITS.timeoutSeconds)),
        /** Resolution of the pulled samples: one evaluation per step, on a grid aligned to the epoch. */
        step_seconds: z.int().check(z.gte(10), z.lte(LIMITS.stepSeconds)),
        /** The newest steps are left until Prometheus has scraped them: pulls stop this far behind now. */
        settle_seconds: z.int().check(z.gte(0), z.lte(3_600)),
        /** The first pull of a metric (no watermark yet) reaches back this far. */
        backfill_days: z.int().check(z.gte(1), z.lte(LIMITS.backfillDays)),
        /** Series × steps per query_range request; larger windows are split, which bounds memory. */
        max_points_per_request: z.int().check(z.gte(1_000), z.lte(LIMITS.pointsPerRequest)),
      })
      // A token or password never crosses the network in clear text: plain http only with no credential, or to this machine.
      // (sigv4 too, but only for versions written from now on: MetricSourcesToWrite.)
      .check(
        z.refine((p) => p.auth.type === 'none' || p.auth.type === 'sigv4' || isSecureUrl(p.url), {
          message: 'bearer and basic auth need an https URL (plain http only to localhost)',
          path: ['url'],
        }),
      ),
    cluster: z.strictObject({
      /** The label that names the cluster on every series the queries yield. */
      label: labelName(),
      /** `id`: the label holds the cluster id; `name`: the cluster name, mapped through the inventory. */
      match: z.enum(['id', 'name']),
    }),
    metrics: z.array(MetricQuery).check(
      z.maxLength(METRIC_KEY_COUNT),
      z.refine((ms) => new Set(ms.map((m) => m.metric_key)).size === ms.length, 'each metric_key at most once'),
    ),
    // Optional, as the shipped file says: a set without it (no inventory) was refused for the section's absence.
    inventory: z.optional(
      z.strictObject({
        enabled: z.boolean(),
        /** An info-style series (value 1) per cluster whose labels describe it; its `cluster.label` holds the cluster id. */
        query: z.string().check(z.trim(), z.minLength(1), z.maxLength(2_000)),
        labels: InventoryLabels,
        /** Values for a new cluster's fields no label supplies (an existing cluster keeps its own). */
        defaults: z.strictObject({
          customer_name: z.string().check(z.minLength(1), z.maxLength(128)),
          account_id: z.string().check(z.minLength(1), z.maxLength(64)),
          account_name: z.string().check(z.minLength(1), z.maxLength(128)),
          email: z.emailAddress(),
          customer_tier: z.enum(['S', 'A', 'B']),
          cluster_type: z.string().check(z.minLength(1), z.maxLength(32)),
          region: z.string().check(z.minLength(1), z.maxLength(64)),
          engine_version: z.string().check(z.minLength(1), z.maxLength(64)),
          resource_state: z.string().check(z.minLength(1), z.maxLength(32)),
        }),
      }),
    ),
  }),
);
export type MetricSources = z.infer<typeof MetricSources>;

/**
 * A link-local host (169.254.0.0/16, fe80::/10, also as an IPv4-mapped IPv6 address) or AWS's IPv6
 * metadata address: the cloud's metadata service answers there, with the machine's role credentials.
 * `hostname` as the URL parser writes it (0xA9FEA9FE and 2852039166 are 169.254.169.254 by then).
 * Private addresses stay allowed: Prometheus usually lives on one.
 */
const isLinkLocalHost = (hostname: string): boolean =>
  /^169\.254\.\d+\.\d+$/.test(hostname) || /^\[(fe[89ab][0-9a-f]:|::ffff:a9fe:[0-9a-f]{1,4}\]$|fd00:ec2::254\]$)/.test(hostname);

/**
 * What a metric source must not be, and why; undefined when it may be used. Refused when a version is
 * written (MetricSourcesToWrite) and, for a version stored before, by the client before it sends
 * anything (shared/prometheus/client.ts), so a stored version still loads and the pull status says why.
 */
export function sourceRefusal(source: { url: string; auth: PrometheusAuth }): { field: 'url' | 'auth.username'; message: string } | undefined {
  // As serviceUrl(…, 'refused') refuses one for the other services; a bare `?` or `#` too (the client would append to it).
  if (/[?#]/.test(source.url))
    return {
      field: 'url',
      message:
        'no query or fragment in the URL: the puller appends /api/v1/… to it, and a token there is readable by every role (use auth and the PROMETHEUS_CREDENTIAL secret)',
    };
  if (URL.canParse(source.url) && isLinkLocalHost(new URL(source.url).hostname))
    return { field: 'url', message: "not a link-local address (169.254.0.0/16, fe80::/10): the cloud's metadata service answers there" };
  // RFC 7617: the first ':' of user-pass ends the user-id, and neither may hold a control character.
  if (source.auth.type === 'basic' && /[:\p{Cc}]/u.test(source.auth.username))
    return { field: 'auth.username', message: "a basic username holds no ':' or control character (RFC 7617: the first ':' ends it)" };
  return undefined;
}

/**
 * The metric sources as a new version must be: sigv4 needs https too, since a signed request carries
 * the role's session token in a header; and nothing sourceRefusal refuses. Checked where versions are
 * written, not where stored ones are read: a stored version still loads, and the puller refuses to
 * call or sign for it, saying why (shared/prometheus/client.ts), rather than every status read failing.
 */
export const MetricSourcesToWrite = z.lazy(() =>
  MetricSources.check(
    z.refine((m) => m.prometheus.auth.type !== 'sigv4' || isSecureUrl(m.prometheus.url), {
      message: "sigv4 auth needs an https URL (plain http only to localhost): a signed request carries the role's session token",
      path: ['prometheus', 'url'],
    }),
    z.superRefine((m, ctx) => {
      const refusal = sourceRefusal(m.prometheus);
      if (refusal) ctx.addIssue({ code: 'custom', message: refusal.message, path: ['prometheus', ...refusal.field.split('.')], input: m.prometheus });
    }),
    // No metric is negative (isMetricValue): a negative scale would turn every point negative, and the puller refuse
    // them all; a tiny one would erase every value. Only on writes, as above: a stored version keeps loading, and its pull says why each point is refused.
    z.superRefine((m, ctx) => {
      m.metrics.forEach((metric, index) => {
        if (metric.scale < 0) {
          const message = 'scale must be above 0: no metric is negative, so a pull would refuse every point it scaled';
          ctx.addIssue({ code: 'custom', message, path: ['metrics', index, 'scale'], input: metric.scale });
        } else if (metric.scale < 1 / LIMITS.scale) {
          // 5e-324 passed the "not 0" check and turned every value into 0 or next to it, as 0 would.
          const message = `scale must be at least ${1 / LIMITS.scale}: a smaller one would turn every value into 0, as scale 0 would`;
          ctx.addIssue({ code: 'custom', message, path: ['metrics', index, 'scale'], input: metric.scale });
        }
      });
    }),
    // A new cluster is checked as POST /api/ingest/clusters checks it: a default it would refuse (engine_version
    // 'unknown', say) refused every new cluster at each pull. Only on writes: a stored rule set keeps loading.
    z.superRefine((m, ctx) => {
      const fields = z.unlazy(ClusterInput).shape;
      for (const [field, value] of Object.entries(m.inventory?.defaults ?? {})) {
        const checked = z.safeParse(fields[field as keyof typeof fields], value);
        if (!checked.success) {
          ctx.addIssue({ code: 'custom', message: checked.error.issues[0]?.message ?? 'invalid', path: ['inventory', 'defaults', field], input: value });
        }
      }
    }),
  ),
);
