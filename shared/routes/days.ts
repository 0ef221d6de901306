// A query's `days`, shared by route groups. Its own module, builds nothing at import: the
// clusters group reads it without common.ts's schemas (issue 21 §4, cold start).
import * as z from '../zod.js';

/** An empty query value (`?days=`) counts as absent, so it takes the default instead of coercing to 0. */
export const blankAsAbsent = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** A number as a query spells one: decimal (`7`, `0.25`, `1e2`). */
const DECIMAL = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

/**
 * A query value on its way to a number: blank is absent, a decimal stays, anything else is refused as "must be a
 * decimal number". Number() read `?page_size=0x10` as 16 and `?days=0b11` as 3, where `10abc` was refused as
 * "expected number, received NaN", of a value the client never sent.
 */
export const queryNumber = (v: unknown, ctx: z.core.ParsePayload): unknown => {
  const value = blankAsAbsent(v);
  if (typeof value === 'string' && !DECIMAL.test(value)) ctx.issues.push({ code: 'custom', message: 'must be a decimal number', input: v });
  return value;
};

/** Whole days in 1..`maxDays` (365 unless given) with a default (patrol, investigations, llm-usage, a cluster's metrics). */
export const DaysInRange = (defaultDays: number, maxDays = 365) =>
  z.preprocess(queryNumber, z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(maxDays)), defaultDays));
