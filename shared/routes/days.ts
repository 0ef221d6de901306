// A query's `days`, shared by route groups. Its own module, builds nothing at import: the
// clusters group reads it without common.ts's schemas (issue 21 §4, cold start).
import * as z from '../zod.js';

/** An empty query value (`?days=`) counts as absent, so it takes the default instead of coercing to 0. */
export const blankAsAbsent = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** Whole days in 1..`maxDays` (365 unless given) with a default (patrol, investigations, llm-usage, a cluster's metrics). */
export const DaysInRange = (defaultDays: number, maxDays = 365) =>
  z.preprocess(blankAsAbsent, z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(maxDays)), defaultDays));
