// What fleet data looks like when it arrives (DESIGN §9): cluster inventory,
// metric samples, Alertmanager webhook alerts and log events. Each record is
// validated on its own, so a batch keeps its good records and names the bad.
// The record schemas are built on first use (z.lazy): most functions only read
// the metric keys, and building them all was ≈ 120 zod schemas in every cold start.
import { cutText } from '../text.js';
import * as z from '../zod.js';

/** The metric keys the rule sets score; other keys are refused rather than stored unread. */
export const METRIC_KEYS = [
  'compaction_score',
  'disk_used_pct',
  'query_errors_7d',
  'query_error_pct',
  'qps',
  'node_count',
  'memory_pct',
  'peak_jvm_heap_gb',
  'error_rate_pct',
  'slow_queries_7d',
  'p99_latency_ms',
  'avg_latency_ms',
  'max_latency_ms',
] as const;
export const MetricKey = z.enum(METRIC_KEYS);
export type MetricKey = z.infer<typeof MetricKey>;

export const Tier = z.enum(['S', 'A', 'B']);

/**
 * A cluster id as it is stored and looked up: a UUID in lower case. UUIDs are case-insensitive (RFC 9562 §4),
 * and one sent in upper case was stored as a second cluster beside the first (counted twice in the fleet, its
 * alerts and samples split between them), or refused as unknown.
 */
export const clusterIdOf = (id: string): string => id.toLowerCase();
export const ClusterId = () => z.uuid().check(z.overwrite(clusterIdOf));

export const ClusterInput = z.lazy(() =>
  z.strictObject({
    cluster_id: ClusterId(),
    cluster_name: z.shownName(128),
    customer_name: z.shownName(128),
    // Shown too (the console, the cluster_info series' labels): no control or invisible character, as in the names.
    account_id: z.shownName(64),
    account_name: z.shownName(128),
    email: z.emailAddress(),
    customer_tier: Tier,
    cluster_type: z.shownName(32),
    region: z.shownName(64),
    // At most 64 characters like every other name here, each number at most 9 digits (an integer the
    // upgrade analysis compares exactly).
    engine_version: z.string().check(z.trim(), z.maxLength(64), z.regex(/^\d{1,9}\.\d{1,9}(\.\d{1,9})?([-.+][\w.-]+)?$/, 'must be a version such as 3.2.1')),
    resource_state: z.shownName(32),
    node_count: z.int().check(z.gte(0), z.lte(10_000)),
  }),
);
export type ClusterInput = z.infer<typeof ClusterInput>;

/**
 * Resource states of a cluster that no longer exists (resource-state.ts). The inventory keeps it (it only grows),
 * and the fleet's views leave it out: a decommissioned cluster would otherwise stay in the scores, KPIs and
 * critical clusters (Critical on its last days' data, then healthy and stale for good) and be investigated.
 */
export { isGone } from './resource-state.js';

let clusterFieldNames: readonly (keyof ClusterInput)[] | undefined;
/** ClusterInput's field names, in its order. */
export const clusterFields = (): readonly (keyof ClusterInput)[] => (clusterFieldNames ??= z.keyof(z.unlazy(ClusterInput)).options);

const IsoTime = z.iso.datetime({ offset: true });

/**
 * The largest magnitude a metric sample may have. Every metric the rules score
 * is far below it (percentages, milliseconds, counts), and with it a day's sum
 * stays finite: |sum| ≤ count × 1e15, nowhere near 1.8e308. Past 2^53 it is
 * rounded, so a mean is held within its min and max (rollup.ts meanWithin).
 * A 1.5e308 sample sent twice overflowed the day's sum to Infinity (stored as
 * null, read back as 0) before this bound.
 */
export const METRIC_VALUE_MAX = 1e15;

/** What a metric value must be, as a refusal says it (ingest per record, a pull per point). */
export const METRIC_VALUE_RULE = 'must be a finite number from 0 to 1e15';

/**
 * Whether `value` may be a sample of a catalogue metric: finite, at most METRIC_VALUE_MAX, and not
 * negative, since every metric of METRIC_KEYS is a size, share, count, rate or latency. A negative
 * sample is a collector's or a query's bug (a `delta()` of a gauge, a sign flipped in a unit
 * conversion); scored, it read as the healthiest value a dimension can have.
 */
export const isMetricValue = (value: number): boolean => Number.isFinite(value) && value >= 0 && value <= METRIC_VALUE_MAX;

/** The metrics that are a share in percent of a whole (disk, memory, errors of all queries or requests). */
export const PERCENT_METRIC_KEYS: ReadonlySet<MetricKey> = new Set(['disk_used_pct', 'query_error_pct', 'memory_pct', 'error_rate_pct']);

/**
 * The most a percentage may read: 100, and a hair over it, since a share worked out in floating point
 * (1 − free / size, × 100) can come out at 100.00000000000001 for a full disk.
 */
export const PERCENT_MAX = 100 + 1e-9;

/** What a percentage must be, as a refusal says it. */
export const PERCENT_RULE = 'a percentage must be from 0 to 100';

/**
 * Why `value` may not be a sample of `key`, or undefined when it may: isMetricValue, and a share at most
 * 100%. A disk at 700% or memory at 219.98% is a ratio converted twice or never normalised; stored, it
 * read as the fleet's worst cluster ("memory_pct max 159.98 >= critical 95").
 */
export const metricValueRefusal = (key: MetricKey, value: number): string | undefined =>
  !isMetricValue(value) ? METRIC_VALUE_RULE : value > PERCENT_MAX && PERCENT_METRIC_KEYS.has(key) ? PERCENT_RULE : undefined;

/** isMetricValue as a schema (zod's number is finite already); as bounds, so the OpenAPI document shows them. */
export const MetricValue = z
  .number({ error: 'must be a finite number' })
  .check(z.gte(0, { error: METRIC_VALUE_RULE }), z.lte(METRIC_VALUE_MAX, { error: METRIC_VALUE_RULE }));

export const MetricSample = z.lazy(() =>
  z
    .strictObject({
      cluster_id: ClusterId(),
      metric_key: MetricKey,
      value: MetricValue,
      at: IsoTime,
    })
    // metricValueRefusal's percentage rule alone: the value's bounds are MetricValue's (shown in the OpenAPI document),
    // and this check runs after a failed one too, so it must not repeat their refusal.
    .check(z.refine((s) => !(s.value > PERCENT_MAX && PERCENT_METRIC_KEYS.has(s.metric_key)), { message: PERCENT_RULE, path: ['value'] })),
);
export type MetricSample = z.infer<typeof MetricSample>;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'] as const;
export const LogEventInput = z.lazy(() =>
  z.strictObject({
    cluster_id: ClusterId(),
    at: IsoTime,
    level: z.pipe(z.string().check(z.toLowerCase()), z.enum(LOG_LEVELS)),
    message: z.string().check(z.minLength(1), z.maxLength(8192)),
    source: z._default(z.string().check(z.maxLength(128)), ''),
  }),
);
export type LogEventInput = z.infer<typeof LogEventInput>;

/**
 * An alert's labels and annotations together, as UTF-8 JSON: far more than any rule writes, and far
 * below the 400 KB a DynamoDB item may hold (the alert's item also copies the summary and description).
 * Bytes, not characters: 64 K characters of CJK text are 192 KB.
 */
export const ALERT_TEXT_MAX = 64 * 1024;
/**
 * One label's value. Label values name things (alertname, cluster, service); they are copied into
 * the issue an alert joins (its group key and name), so a value the size of a description would
 * make an issue DynamoDB refuses. Long text belongs in annotations.
 */
export const LABEL_VALUE_MAX = 1024;

/**
 * A label or annotation name. Not empty: both maps are stored as DynamoDB maps, whose keys must not
 * be empty ('Empty attribute name'), and one such alert failed its whole notification with a 500.
 */
const mapKey = () => z.string().check(z.minLength(1, 'a key must not be empty'), z.maxLength(256, 'a key must be at most 256 characters'));
/**
 * A string map with mapKey keys; a refused key is named by the key's own message, not zod's "Invalid key in record".
 * `__proto__` (an own key of parsed JSON) is refused: the record parser drops it unchecked, so the alert went in
 * without it and with a fingerprint other than its sender's.
 */
/**
 * The most entries one label or annotation map may have: more than 64 KB of them cannot fit (ALERT_TEXT_MAX; the
 * smallest entry, `"a":"",`, is 7 bytes). Counted before any value is checked: zod checks every entry of a record and
 * gathers its refusals in one call's arguments, and some 125,000 bad values overflowed the stack, a 500 for the whole
 * notification where that one alert should have been refused.
 */
export const ALERT_MAP_ENTRIES_MAX = 10_000;

const stringMap = <V extends z.ZodMiniType<string>>(value: V) =>
  z.pipe(
    z.pipe(
      z.custom<unknown>((input) => !(input !== null && typeof input === 'object' && Object.hasOwn(input, '__proto__')), {
        error: 'the key __proto__ is not allowed',
      }),
      z.custom<unknown>((input) => !(input !== null && typeof input === 'object' && Object.keys(input).length > ALERT_MAP_ENTRIES_MAX), {
        error: `at most ${ALERT_MAP_ENTRIES_MAX.toLocaleString('en-US')} entries`,
      }),
    ),
    z.record(mapKey(), value, { error: (issue) => (issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined) }),
  );

const isPlainMap = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** What one code point takes inside a JSON string as JSON.stringify writes it, in UTF-8 bytes. */
function jsonCost(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2;
  if (cp < 0x20) return cp === 8 || cp === 9 || cp === 10 || cp === 12 || cp === 13 ? 2 : 6;
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp >= 0xd800 && cp <= 0xdfff) return 6; // a lone surrogate, written escaped
  return cp < 0x10000 ? 3 : 4;
}

/** The longest start of `text` that takes at most `maxBytes` inside a JSON string, an ellipsis marking the cut ('' below 3). */
function cutToJsonBytes(text: string, maxBytes: number): string {
  if (maxBytes < 3) return '';
  const budget = maxBytes - 3; // the ellipsis
  let used = 0;
  let end = 0;
  for (const char of text) {
    used += jsonCost(char.codePointAt(0)!);
    if (used > budget) break;
    end += char.length;
  }
  return end === text.length ? text : `${text.slice(0, end)}…`;
}

/**
 * An alert's text cut to its bounds rather than refused: Alertmanager reads no body, so a refused alert (a Critical
 * whose description holds a stack trace, a label holding a long value) and its resolution were lost for good, with
 * only a warn line to say so. Label values over LABEL_VALUE_MAX are cut (the alert's identity stays Alertmanager's
 * fingerprint, or the hash of its labels as cut, the same at every resend); then the longest annotations are cut,
 * each marked with an ellipsis, until labels and annotations fit ALERT_TEXT_MAX. Anything else (not an object, labels
 * alone over the bound, too many entries) is left for AlertmanagerAlert to refuse.
 */
export function fitAlertText(raw: unknown): unknown {
  if (!isPlainMap(raw) || !isPlainMap(raw.labels)) return raw;
  const annotations = raw.annotations === undefined ? {} : raw.annotations;
  if (!isPlainMap(annotations)) return raw;
  const maps = [raw.labels, annotations];
  if (maps.some((m) => Object.keys(m).length > ALERT_MAP_ENTRIES_MAX || Object.values(m).some((v) => typeof v !== 'string'))) return raw;
  const labels = Object.fromEntries(Object.entries(raw.labels as Record<string, string>).map(([k, v]) => [k, cutText(v, LABEL_VALUE_MAX)]));
  const fitted: Record<string, string> = { ...(annotations as Record<string, string>) };
  let over = jsonBytes(labels) + jsonBytes(fitted) - ALERT_TEXT_MAX;
  // Longest first, each cut by what its characters take as JSON (1 to 6 bytes each): a cut in proportion to the
  // average undershot when wide or escaped characters came first, and the alert was refused all the same.
  const longest = Object.keys(fitted).sort((a, b) => fitted[b]!.length - fitted[a]!.length);
  for (const key of longest) {
    if (over <= 0) break;
    const value = fitted[key]!;
    const bytes = jsonBytes(value);
    fitted[key] = cutToJsonBytes(value, bytes - 2 - over);
    over -= bytes - jsonBytes(fitted[key]);
  }
  return { ...raw, labels, annotations: fitted };
}

/** One alert of an Alertmanager webhook (version 4). */
export const AlertmanagerAlert = z.lazy(() =>
  z
    .looseObject({
      status: z.enum(['firing', 'resolved']),
      labels: stringMap(z.string().check(z.maxLength(LABEL_VALUE_MAX))),
      annotations: z._default(stringMap(z.string()), {}),
      startsAt: IsoTime,
      // Read only for a resolution (endsUnknown), and bounded all the same; a resolution's must be a time (below).
      endsAt: z._default(z.string().check(z.maxLength(64)), '0001-01-01T00:00:00Z'),
      // Bounded as the alert's text is; a link over 2,048 is stored as '' (dashboardUrl), the alert kept: Prometheus
      // writes the rule's expression into it, URL-encoded, and refusing the alert lost it silently (Alertmanager reads no body).
      generatorURL: z._default(z.string().check(z.maxLength(ALERT_TEXT_MAX)), ''),
      fingerprint: z.optional(z.string().check(z.maxLength(128))),
    })
    .check(
      z.refine((a) => Buffer.byteLength(JSON.stringify(a.labels)) + Buffer.byteLength(JSON.stringify(a.annotations)) <= ALERT_TEXT_MAX, {
        error: `labels and annotations together must be at most ${ALERT_TEXT_MAX / 1024} KB`,
        path: ['annotations'],
      }),
      // A resolution's end is a time as startsAt is (Go's zero time included: no end). Text that is none was taken as
      // "no end": sent with "23:59:60", a resolution ended at its receipt, hours after the sender's end. A firing
      // alert's endsAt is never read, and refusing it would lose the alert (Alertmanager sends it no more).
      z.refine((a) => a.status !== 'resolved' || IsoTime.safeParse(a.endsAt).success, {
        error: 'a resolution’s endsAt must be an RFC 3339 time with its offset',
        path: ['endsAt'],
      }),
    ),
);
export type AlertmanagerAlert = z.infer<typeof AlertmanagerAlert>;

/** What every ingest call answers. */
export type { IngestResult } from '../routes/ingest.js';

/** The most of one path segment (a label name, say) a refusal's reason repeats. */
const REASON_KEY_MAX = 64;
/** A refusal's reason names its first few problems, in at most this many characters: it is answered, and logged per request. */
const REASON_ISSUES = 5;
export const REASON_MAX = 500;

/**
 * Why a record was refused, bounded: a record with thousands of bad values (or of unknown keys, which zod lists
 * in one message) made a reason of megabytes, logged whole and answered, past what the answer may hold.
 */
export function reasonOf(error: z.core.$ZodError): string {
  // A map key in a path is the sender's text: an empty one is left out (not "labels.: …"), a long one cut.
  const pathOf = (i: z.core.$ZodIssue) =>
    i.path
      .filter((p) => p !== '')
      .map((p) => cutText(String(p), REASON_KEY_MAX))
      .join('.');
  const named = error.issues.slice(0, REASON_ISSUES).map((i) => `${pathOf(i) || 'record'}: ${i.message}`);
  const more = error.issues.length - named.length;
  return cutText(named.join('; ') + (more > 0 ? `; and ${more.toLocaleString('en-US')} more` : ''), REASON_MAX);
}
