// If-Match as the service's writes read it: one strong ETag of the form GET answers, a letter and a
// number (etags.ts: `"v5"` a rule set's version, `"t3"` an issue's triage, `"r2"` the general settings'
// revision, `"u4"` an account's version), or `*` (no precondition). One parser, so every write refuses a malformed one the same way.
import * as z from '../zod.js';
import { BadRequest, PreconditionFailed } from './errors.js';
import type { RouteDeclaration } from './route.js';

/** The writes that take a precondition declare this as their headers: If-Match, the ETag their GET answered. */
export const IfMatchHeader = z.lazy(() => z.object({ 'if-match': z.optional(z.string()) }));

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whether `route` is a write that has no version to match, so an If-Match it is sent cannot hold (RFC 9110 §13.1.1:
 * the condition is false when no current ETag matches; 412). Such a header was ignored, and the write done: a client
 * guarding a user change against a concurrent one lost the other's change without a word.
 */
export const refusesIfMatch = (route: RouteDeclaration): boolean => WRITES.has(route.method) && route.headers !== IfMatchHeader;

/** The 412 for an If-Match sent to a route that refusesIfMatch; `*` (any current representation) holds. */
export function checkNoPrecondition(route: RouteDeclaration, ifMatch: string | undefined): void {
  if (ifMatch === undefined || ifMatch.trim() === '*' || !refusesIfMatch(route)) return;
  throw new PreconditionFailed(
    `${route.method} ${route.path} keeps no version an If-Match could name, so the condition cannot hold: nothing was changed. Send it without If-Match.`,
  );
}

/**
 * The number an If-Match names for `prefix`; undefined without one (or with `*`). Anything else is a 400
 * saying what GET answers for `what` (e.g. "this issue").
 */
export function ifMatchNumber(ifMatch: string | undefined, prefix: string, what: string): number | undefined {
  const header = ifMatch?.trim();
  if (header === undefined || header === '*') return undefined;
  // The number as GET writes it: `"t03"` is not `"t3"` (an ETag is compared as a string, RFC 9110 §8.8.3.2).
  const match = new RegExp(`^"${prefix}(0|[1-9]\\d{0,8})"$`).exec(header);
  if (!match) throw new BadRequest(`If-Match must be the ETag GET answered for ${what}, such as "${prefix}3" (got ${JSON.stringify(header.slice(0, 40))}).`);
  return Number(match[1]);
}
