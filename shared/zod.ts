// Zod for every schema in the service: zod/mini, with zod's English messages.
// The classic API hangs every method on every schema, so each bundle carried all
// of zod (≈ 84 KB of a route group's ≈ 220) and each schema built ~40 closures;
// mini's functions are tree-shaken to what a bundle uses (issue 21 §4, shared/README.md).
// Import it as `import * as z from '../zod.js'`, never 'zod' itself: the messages
// an API answer or a config error quotes are configured here, once.
import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { _coercedNumber, _isoDate, _isoDateTime } from 'zod/v4/core';
import { spoofsAnotherName } from './text.js';

z.config(en());

export * from 'zod/mini';

/**
 * `z.iso` and `z.coerce` with what the service uses, built as zod/mini builds them. zod's are namespace
 * objects: a bundle that reads one keeps every kind of schema it holds (times, durations, big integers, dates)
 * and defines each at import, which is code to compile and a few KB of allocation per kind (issue 21 §4).
 */
export const iso = {
  datetime: ((params) => _isoDateTime(z.ZodMiniISODateTime, params)) as typeof z.iso.datetime,
  date: ((params) => _isoDate(z.ZodMiniISODate, params)) as typeof z.iso.date,
};
export const coerce = {
  number: ((params) => _coercedNumber(z.ZodMiniNumber, params)) as typeof z.coerce.number,
};

/** `fn` applied to the raw input, then `schema`: classic zod's `z.preprocess` (mini has none), built the same way. */
export const preprocess = <S extends z.core.$ZodType>(
  fn: (value: unknown, ctx: z.core.ParsePayload) => unknown,
  schema: S,
): z.ZodMiniPipe<z.ZodMiniTransform<unknown, unknown>, S> => z.pipe(z.transform(fn), schema);

/**
 * A count (clusters, alerts, tokens, runs, pages of a list): an integer never below 0. Its JSON Schema says
 * `minimum: 0`, where `z.int()` alone says zod's safe-integer bound, −9007199254740991, in the OpenAPI document.
 * Not for an integer that may be negative (a difference, an offset) nor for one that is not a count (a version, a page).
 */
export const count = () => z.int().check(z.nonnegative());

/** The schema a `z.lazy` builds on first use: for `z.extend`, `z.omit` and `z.keyof` of it. */
export const unlazy = <T extends z.core.SomeType>(schema: z.ZodMiniLazy<T>): T => schema._zod.innerType;

/**
 * `schema` refusing an object with no field (`message`), and saying so in its JSON Schema (`minProperties: 1`): a
 * refine alone is left out of the OpenAPI document, where a PATCH body would then read as taking `{}`.
 */
export function withSomeField<S extends z.ZodMiniObject>(schema: S, message = 'at least one field is required'): S {
  // Only when the fields are otherwise valid: an unknown field alone is said as such, not also as "no field".
  const checked = schema.check(z.refine((fields) => Object.keys(fields as object).length > 0, { message, when: (payload) => payload.issues.length === 0 }));
  z.globalRegistry.add(checked, { minProperties: 1 });
  return checked;
}

/**
 * zod's email pattern, but a top-level domain may also be an IDNA one as DNS spells it (`xn--p1ai`, .рф), which
 * real addresses have and zod's letters-only one refused. At most 254 characters (RFC 5321's path limit).
 */
const EMAIL_PATTERN = /^(?:[A-Za-z0-9_'+-]+\.)*[A-Za-z0-9_'+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+(?:[A-Za-z]{2,}|xn--[A-Za-z0-9-]{2,})$/;
export const emailAddress = () => z.email({ pattern: EMAIL_PATTERN }).check(z.maxLength(254));

/** The check every shown text makes: no character that makes it read as another (shared/text.ts). */
const notSpoofing = () => z.refine<string>((text) => !spoofsAnotherName(text), 'must hold no control, bidirectional, zero-width or invisible characters');

/** A name people read to tell things apart (a cluster, a customer, a person): trimmed, 1 to `max` characters, none that spoof another. */
export const shownName = (max: number) => z.string().check(z.trim(), z.minLength(1), z.maxLength(max), notSpoofing());

/**
 * A label people set, read in lists and filter by (an issue's triage or disposition status, its ticket key):
 * trimmed, at most `max` characters, empty to clear it, none that spoof another. Kept as sent, `"  Investigating\u202E "`
 * (a right-to-left override) showed as a blank and matched no filter.
 */
export const shownLabel = (max: number) => z.string().check(z.trim(), z.maxLength(max), notSpoofing());
