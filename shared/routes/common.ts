// Query and body schema pieces shared by several route groups.
// Query values arrive as strings; numbers must be written in decimal (days.ts queryNumber), then are coerced and bounded.
import * as z from '../zod.js';
import { queryNumber } from './days.js';
import { CanonicalUsername, canonicalUsername, USERNAME_MAX } from '../auth/username.js';

/**
 * A whole number of at least 1 (and at most `max`), `fallback` when absent or blank (`?page=`, as an HTML
 * form sends an empty field; a blank `days` takes its default too). A prefault outermost: a client's types
 * keep the parameter optional, and OpenAPI keeps its default (it drops a default over a transform).
 */
// Pure (esbuild drops `Page` and `PageSize` from a bundle that uses neither: infra/pure-schemas.ts).
const QueryCount = /* @__NO_SIDE_EFFECTS__ */ (fallback: number, max?: number) =>
  z.prefault(
    z.pipe(
      z.transform((v: unknown, ctx): unknown => queryNumber(v, ctx) ?? fallback),
      // z.int() is a safe integer already: no second bound (and no second refusal) without a `max`.
      max === undefined ? z.coerce.number().check(z.int(), z.gte(1)) : z.coerce.number().check(z.int(), z.gte(1), z.lte(max)),
    ),
    fallback,
  );

export const Page = QueryCount(1);
/** A page size of 1..`max`, `defaultSize` when absent or blank. */
export const PageSizeOf = /* @__NO_SIDE_EFFECTS__ */ (defaultSize: number, max: number) => QueryCount(defaultSize, max);
export const PageSize = PageSizeOf(20, 100);

/** The issues window: float days, 0 means today, 0.25 means six hours. */
export const DaysWindow = z.preprocess(queryNumber, z._default(z.coerce.number().check(z.gte(0), z.lte(365)), 7));

export const Text = (max: number) => z.string().check(z.maxLength(max));

/** A cluster id as a filter: in any case, as ingest and the cluster page take it (a UUID, stored lower-case: fleet/records.ts clusterIdOf). */
export const ClusterIdFilter = () => z._default(z.string().check(z.maxLength(128), z.toLowerCase()), '');

/**
 * Beyond the contract: `?cluster_id=` narrows a whole-fleet answer of the fleet view (fleet and health scores, risk
 * snapshots) to that cluster's items, none for an id it does not hold: the console's cluster page, which read the
 * whole fleet's (megabytes at 10,000 clusters) to show one.
 */
export const OneClusterQuery = z.lazy(() => z.object({ cluster_id: ClusterIdFilter() }));

/** The writes that take a precondition: If-Match, the ETag their GET answered (`"t3"`; shared/http/if-match.ts reads it, 400 when malformed). */
export { IfMatchHeader } from '../http/if-match.js';

/**
 * A link the app shows or follows (a ticket's URL, a webhook's, an alert's dashboard): an absolute
 * http(s) URL of at most 2,048 characters, so no `javascript:` or `data:` link reaches a page, and with
 * no username or password in it: `https://jira.example.com@evil.example/` reads as one host and opens another.
 */
const noUserPart = ({ username, password }: URL) => username === '' && password === '';
export const HttpLink = () =>
  z
    .url({
      protocol: /^https?$/,
      // A link too long is said as such: zod's URL check fails it first, with the address's message.
      error: (issue) =>
        typeof issue.input === 'string' && issue.input.length > 2048 ? 'must be at most 2,048 characters' : 'must be an absolute http(s) address',
    })
    .check(
      z.maxLength(2048, 'must be at most 2,048 characters'),
      z.refine((u) => !URL.canParse(u) || noUserPart(new URL(u)), 'must not carry a username or password'),
    );

/**
 * A ticket's key as an issue keeps it, set by hand (PATCH) or by a tracker (the ticket webhook's answer): a label
 * people read (trimmed, at most 64 characters, no control or invisible character; empty clears it), and one key:
 * `OPS-1 OPS-2` (two run together, or a sentence) linked neither.
 */
export const TicketKey = () => z.shownLabel(64).check(z.regex(/^\S*$/, 'must be one ticket key, with no spaces (such as OPS-123)'));

/** `value` in the case `values` spell it (`critical` → `Critical`), or unchanged when none matches. */
const inCaseOf = (values: readonly string[], value: string) => values.find((c) => c.toLowerCase() === value.trim().toLowerCase()) ?? value;

/** One of `values` matched case-insensitively, answered in the contract's case. */
export const AnyCase = <T extends string>(values: readonly [T, ...T[]]) =>
  z.pipe(
    z.transform((v: unknown) => (typeof v === 'string' ? inCaseOf(values, v) : v)),
    z.enum(values),
  );

/** Shared by /api/issues and /api/ai-issues (spec §4, list query parameters). */
/** The `assignee` filter's word for issues nobody can act on: in parentheses, which no username holds (CanonicalUsername). */
export const UNASSIGNED = '(none)';

/** `me` and UNASSIGNED in any case, else a username in its canonical form (`Carol` finds carol's issues). */
function assigneeWord(raw: string): string {
  const word = raw.trim();
  const lower = word.toLowerCase();
  if (lower === 'me' || lower === UNASSIGNED) return lower;
  return canonicalUsername(word) ?? word;
}

/**
 * An issue list's `assignee`: blank for anyone, `me` for the caller (as a PATCH's `me`), UNASSIGNED for the
 * issues the KPIs count unassigned, else a username. Anything else is refused: no account could match it.
 */
const AssigneeFilter = () =>
  z._default(
    z.string().check(
      z.maxLength(USERNAME_MAX),
      z.overwrite(assigneeWord),
      z.refine((w) => w === '' || w === 'me' || w === UNASSIGNED || CanonicalUsername.safeParse(w).success, {
        error: `must be a username, "me" or "${UNASSIGNED}"`,
      }),
    ),
    '',
  );

/** What an issue list may be ordered by: the fields its answer holds of each issue, `duration_minutes` as of the request. */
export const ISSUE_SORT_KEYS = ['last_seen', 'first_seen', 'severity', 'status', 'issue_name', 'cluster_name', 'alert_count', 'duration_minutes'] as const;
export type IssueSortKey = (typeof ISSUE_SORT_KEYS)[number];
/** Beyond the contract: `key` ascending, `-key` descending (severity: Critical last; status: Ongoing last); newest activity first by default. */
const IssueSort = () => z._default(z.enum(ISSUE_SORT_KEYS.flatMap((k) => [k, `-${k}`] as const)), '-last_seen');

export const IssueListQuery = z.lazy(() =>
  z.object({
    search: z._default(Text(200), ''),
    days: DaysWindow,
    severities: z.pipe(
      z.pipe(
        z._default(z.string(), ''),
        z.transform((s: string) =>
          s
            .split(',')
            .map((v) => inCaseOf(['Critical', 'Warning'], v))
            .filter(Boolean),
        ),
      ),
      z.array(z.enum(['Critical', 'Warning'])),
    ),
    status: z._default(AnyCase(['', 'Ongoing', 'Resolved']), ''),
    customer: z._default(Text(200), ''),
    cluster: z._default(Text(200), ''),
    /** Beyond the contract: one cluster's issues by its id, whatever names they were stored under (the console's cluster page). */
    cluster_id: ClusterIdFilter(),
    triage: z._default(Text(64), ''),
    disposition: z._default(Text(64), ''),
    /** Beyond the contract: whose issues (shared/issues/README.md, "Assigned to"). */
    assignee: AssigneeFilter(),
    /** Beyond the contract: the order (shared/issues/README.md, "Order"). */
    sort: IssueSort(),
    page: Page,
    page_size: PageSize,
  }),
);
export type IssueListQuery = z.infer<typeof IssueListQuery>;

export const IssueKpisQuery = z.lazy(() => z.object({ days: DaysWindow }));

export const IssueIdParams = z.object({ issue_id: z.string().check(z.minLength(1), z.maxLength(128)) });

/** One alert in an issue's detail answer (rule issues and AI issues alike); `alert_id` tells apart alerts of one evaluation, which share the rest. */
export const TimelineEntry = z.lazy(() =>
  z.object({
    alert_id: z.string(),
    time: z.string(),
    status: z.string(),
    alert_name: z.string(),
    detail: z.string(),
    dashboard_url: z.string(),
    starts_at: z.string(),
    ends_at: z.nullable(z.string()),
  }),
);
