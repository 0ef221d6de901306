// What the weak ETags of the watch pages' reads stand for (`revalidate`, shared/http/route.ts): text for the
// OpenAPI document, in a module of its own so a route group's declarations load nothing more for it.

/**
 * What the weak ETag of a watch page's read from the fleet view stands for (`revalidate`, shared/http/route.ts): the
 * fleet view's generation and a digest of the answer but its `generated_at` (shared/http/README.md, "Conditional reads").
 */
export const VIEW_VALIDATOR = 'The fleet view generation and a digest of the answer without generated_at; send it as If-None-Match: 304 while it holds.';

/** The same for an issue list or KPIs: a digest of the answer and of the query as validated. */
export const LIST_VALIDATOR = 'A digest of the answer and of the query as validated; send it as If-None-Match: 304 while it holds.';
