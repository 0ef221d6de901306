// Calls to the API: one typed `endpoint` per route (its path checked against the
// route table by the compiler), the session's bearer token, and problem+json
// errors turned into ApiProblem with the server's `detail`.
import type { Accepted, Answer, BodyOf, GroupName, HeadersOf, MethodOf, ParamsOf, PathOf, QueryOf, RouteName } from './types';

export interface Endpoint<G extends GroupName, R extends RouteName<G>> {
  readonly method: MethodOf<G, R>;
  readonly path: PathOf<G, R>;
  /** Phantom: carries the route's types. */
  readonly route?: [G, R];
}

/** Declares the console's use of a route; `method` and `path` must be the route table's, or the typecheck fails. */
export const endpoint = <G extends GroupName, R extends RouteName<G>>(method: MethodOf<G, R>, path: PathOf<G, R>): Endpoint<G, R> => ({ method, path });

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(headers: Headers | undefined, now = Date.now()): number | null {
  const value = headers?.get('Retry-After')?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** A problem+json answer (or a network failure, status 0). */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly body: Record<string, unknown> = {},
    readonly headers?: Headers,
  ) {
    super(detail || title);
    this.name = 'ApiProblem';
  }

  /**
   * The seconds a passing refusal asks to wait (its Retry-After: a 429, or a 503 for throttling or a secret that
   * could not be read), or undefined: a 503 without it is a service not set up, which waiting does not mend.
   */
  get retryAfter(): number | undefined {
    return retryAfterSeconds(this.headers) ?? undefined;
  }

  /** The live issue a write to a regrouped issue should go to instead (the 409's `superseded_by`), or ''. */
  get supersededBy(): string {
    const id = this.body.superseded_by;
    return typeof id === 'string' ? id : '';
  }
}

type Request<G extends GroupName, R extends RouteName<G>> = {
  params?: ParamsOf<G, R>;
  query?: QueryOf<G, R>;
  body?: BodyOf<G, R>;
  headers?: HeadersOf<G, R>;
  signal?: AbortSignal;
};

let tokenSource: () => string | null = () => null;
let onUnauthorized: (problem: ApiProblem) => void = () => undefined;

let onForbidden: () => void = () => undefined;

/**
 * The session registers where the token comes from, what a 401 does (back to sign-in) and what a 403 does (the
 * account's role may have changed since it was read: the session reads it again).
 */
export function configureClient(options: { token: () => string | null; unauthorized: (problem: ApiProblem) => void; forbidden?: () => void }): void {
  tokenSource = options.token;
  onUnauthorized = options.unauthorized;
  onForbidden = options.forbidden ?? (() => undefined);
}

/** `/api/issues/{issue_id}` with `{issue_id: 'a b'}` → `/api/issues/a%20b`, plus the query string (arrays repeat the key). */
export function urlOf(path: string, params?: object, query?: object): string {
  const filled = path.replace(/\{([^}+]+)\+?\}/g, (_, name: string) => encodeURIComponent(String((params as Record<string, unknown>)?.[name] ?? '')));
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null || value === '') continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(key, String(v));
  }
  const qs = search.toString();
  return qs ? `${filled}?${qs}` : filled;
}

/** Titles for errors that come without one (a gateway's or a CDN's answer). */
const STATUS_TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export interface Sent<T> {
  status: number;
  data: T;
  headers: Headers;
}

/** Sends the request; resolves with the status and JSON for 2xx, rejects with ApiProblem otherwise. */
export async function send<G extends GroupName, R extends RouteName<G>>(
  ep: Endpoint<G, R>,
  request: Request<G, R> = {},
): Promise<Sent<Answer<G, R> | Accepted<G, R>>> {
  const token = tokenSource();
  const headers: Record<string, string> = { Accept: 'application/json' };
  for (const [name, value] of Object.entries(request.headers ?? {})) if (typeof value === 'string') headers[name] = value;
  if (token) headers.Authorization = `Bearer ${token}`;
  if (request.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(urlOf(ep.path, request.params as object | undefined, request.query as object | undefined), {
      method: ep.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: request.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiProblem(0, 'Network error', 'The service did not answer. Check your connection and try again.');
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (response.ok) return { status: response.status, data: body as Answer<G, R>, headers: response.headers };
  const problem = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  // Not every error is our problem+json: API Gateway answers {"message": "…"}, CloudFront an HTML page,
  // and over HTTP/2 and 3 (CloudFront's) statusText is always empty.
  const error = new ApiProblem(
    response.status,
    typeof problem.title === 'string' ? problem.title : response.statusText || STATUS_TITLES[response.status] || 'Request failed',
    typeof problem.detail === 'string' ? problem.detail : typeof problem.message === 'string' ? problem.message : `The service answered ${response.status}.`,
    problem,
    response.headers,
  );
  if (response.status === 401 && token) onUnauthorized(error);
  if (response.status === 403 && token) onForbidden();
  throw error;
}

/** GET and the like: the 200 answer. */
export async function call<G extends GroupName, R extends RouteName<G>>(ep: Endpoint<G, R>, request: Request<G, R> = {}): Promise<Answer<G, R>> {
  return (await send(ep, request)).data as Answer<G, R>;
}
