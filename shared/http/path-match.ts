// Matches a request path against API Gateway path templates with API Gateway's
// precedence: literal segments beat `{param}`, which beats a greedy `{proxy+}`.
// Used by the group router (when no route key is given) and the local runtime.

export interface PathTemplate {
  readonly method: string;
  readonly path: string;
}

export interface PathMatch<T extends PathTemplate> {
  route: T;
  params: Record<string, string>;
}

/**
 * Empty segments are kept, as API Gateway keeps them: `/api/issues/` is not `/api/issues` (an HTTP
 * API routes a trailing slash to no route without it: storacha/w3infra#166), and `/api/issues//evidence`
 * fills no `{issue_id}` (an empty parameter matches nothing: aws/chalice#588). Both fall to a greedy route.
 */
function segments(path: string): string[] {
  return path.split('/').slice(1);
}

/** Lower is more specific: 0 literal, 1 parameter, 2 greedy, per segment, left to right. */
function specificity(template: string): number[] {
  return segments(template).map((s) => (s.endsWith('+}') ? 2 : s.startsWith('{') ? 1 : 0));
}

function compareSpecificity(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 3) - (b[i] ?? 3);
    if (d !== 0) return d;
  }
  return 0;
}

function matchTemplate(template: string, path: string): Record<string, string> | null {
  const want = segments(template);
  const got = segments(path);
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (w.endsWith('+}')) {
      if (got.length <= i) return null;
      params[w.slice(1, -2)] = got.slice(i).map(decodeSegment).join('/');
      return params;
    }
    const g = got[i];
    if (g === undefined) return null;
    if (w.startsWith('{')) {
      if (g === '') return null;
      params[w.slice(1, -1)] = decodeSegment(g);
    } else if (w !== g) return null;
  }
  return got.length === want.length ? params : null;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Routes sorted most specific first, so the first match wins. Each path's rank is computed once, not per
 * comparison: a group handler sorts its routes at cold start, where settings' 26 spent 75 KB on re-splitting paths.
 */
export function sortBySpecificity<T extends PathTemplate>(routes: readonly T[]): T[] {
  return routes
    .map((route) => ({ route, rank: specificity(route.path) }))
    .sort((a, b) => compareSpecificity(a.rank, b.rank))
    .map(({ route }) => route);
}

/** Find the route for a method and path among routes already sorted by specificity. */
export function matchPath<T extends PathTemplate>(sorted: readonly T[], method: string, path: string): PathMatch<T> | null {
  for (const route of sorted) {
    if (route.method !== method && route.method !== 'ANY') continue;
    const params = matchTemplate(route.path, path);
    if (params) return { route, params };
  }
  return null;
}
