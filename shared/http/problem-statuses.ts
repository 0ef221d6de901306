// The problem statuses a route can answer: those its declaration implies, plus those it declares
// (`problems`). The OpenAPI document lists them; outside production an answer of any other status
// is turned into an error naming the route (shared/http/middleware.ts), so the list stays exact.
import { ROLES } from '../auth/roles.js';
import { refusesIfMatch } from './if-match.js';
import type { ProblemStatus, RouteDeclaration } from './route.js';

export function problemStatuses(route: RouteDeclaration): ProblemStatus[] {
  const statuses = new Set<ProblemStatus>(route.problems ?? []);
  if (route.auth !== 'public') statuses.add(401);
  if (route.auth === 'ingest' || route.auth === 'scrape' || (route.auth === 'user' && route.roles.length < ROLES.length)) statuses.add(403);
  if (route.params) statuses.add(404);
  if (route.params || route.query || route.headers || route.body) statuses.add(422);
  // A body that is not JSON (400), is over the route's limit (413), or is not declared JSON (415).
  if (route.body) statuses.add(400).add(413).add(415);
  // A write with no version to match: an If-Match it is sent cannot hold (if-match.ts).
  if (refusesIfMatch(route)) statuses.add(412);
  // Any route: a setting it needs does not validate, or AWS throttled it past the retries (shared/http/middleware.ts).
  statuses.add(503);
  return [...statuses].sort((a, b) => a - b);
}
