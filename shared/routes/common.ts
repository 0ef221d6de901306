// Query and body schema pieces shared by several route groups.
// Query values arrive as strings; numbers are coerced, then bounded.
import * as z from 'zod';

export const Page = z.coerce.number().int().min(1).default(1);
export const PageSize = z.coerce.number().int().min(1).max(100).default(20);

/** An empty query value (`?days=`) counts as absent, so it takes the default instead of coercing to 0. */
const blankAsAbsent = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** Whole days in 1..365 with a default (patrol, investigations, llm-usage). */
export const DaysInRange = (defaultDays: number) => z.preprocess(blankAsAbsent, z.coerce.number().int().min(1).max(365).default(defaultDays));

/** The issues window: float days, 0 means today, 0.25 means six hours. */
export const DaysWindow = z.preprocess(blankAsAbsent, z.coerce.number().min(0).max(365).default(7));

export const Text = (max: number) => z.string().max(max);

/** `value` in the case `values` spell it (`critical` → `Critical`), or unchanged when none matches. */
const inCaseOf = (values: readonly string[], value: string) => values.find((c) => c.toLowerCase() === value.trim().toLowerCase()) ?? value;

/** One of `values` matched case-insensitively, answered in the contract's case. */
export const AnyCase = <T extends string>(values: readonly [T, ...T[]]) =>
  z.preprocess((v) => (typeof v === 'string' ? inCaseOf(values, v) : v), z.enum(values));

/** Shared by /api/issues and /api/ai-issues (spec §4, list query parameters). */
export const IssueListQuery = z.lazy(() =>
  z.object({
    search: Text(200).default(''),
    days: DaysWindow,
    severities: z
      .string()
      .default('')
      .transform((s) =>
        s
          .split(',')
          .map((v) => inCaseOf(['Critical', 'Warning'], v))
          .filter(Boolean),
      )
      .pipe(z.array(z.enum(['Critical', 'Warning']))),
    status: z.enum(['', 'Ongoing', 'Resolved']).default(''),
    customer: Text(200).default(''),
    cluster: Text(200).default(''),
    triage: Text(64).default(''),
    disposition: Text(64).default(''),
    page: Page,
    page_size: PageSize,
  }),
);
export type IssueListQuery = z.infer<typeof IssueListQuery>;

export const IssueKpisQuery = z.lazy(() => z.object({ days: DaysWindow }));

export const IssueIdParams = z.object({ issue_id: z.string().min(1).max(128) });

/** One alert in an issue's detail answer (rule issues and AI issues alike). */
export const TimelineEntry = z.lazy(() =>
  z.object({
    time: z.string(),
    status: z.string(),
    alert_name: z.string(),
    detail: z.string(),
    dashboard_url: z.string(),
    starts_at: z.string(),
    ends_at: z.string().nullable(),
  }),
);
