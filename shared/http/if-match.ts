// If-Match as the service's writes read it: one strong ETag of the form GET answers, a letter and a
// number (`"v5"` a rule set's version, `"t3"` an issue's triage, `"r2"` the general settings' revision),
// or `*` (no precondition). One parser, so every write refuses a malformed one the same way.
import { BadRequest } from './errors.js';

/**
 * The number an If-Match names for `prefix`; undefined without one (or with `*`). Anything else is a 400
 * saying what GET answers for `what` (e.g. "this issue").
 */
export function ifMatchNumber(ifMatch: string | undefined, prefix: string, what: string): number | undefined {
  const header = ifMatch?.trim();
  if (header === undefined || header === '*') return undefined;
  const match = new RegExp(`^"${prefix}(\\d{1,9})"$`).exec(header);
  if (!match) throw new BadRequest(`If-Match must be the ETag GET answered for ${what}, such as "${prefix}3" (got ${JSON.stringify(header.slice(0, 40))}).`);
  return Number(match[1]);
}
