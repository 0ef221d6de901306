// The middleware stack every route-group Lambda shares (assembled in
// group-handler.ts). Each middleware does one thing; they share the request's
// route state through `routeState`, keyed by the API Gateway event.
import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareObj, Request } from '@middy/core';
import httpCors from '@middy/http-cors';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type * as z from '../zod.js';
import { verifyAccessToken } from '../auth/jwt.js';
import { resolvePrincipal, type Principal } from '../auth/principal.js';
import { coreSettings } from '../config/core.js';
import { ConfigError } from '../config/env.js';
import { freshSecret, secret, shortStaticToken, STATIC_TOKEN_MIN_CHARS, type SecretName } from '../config/secrets.js';
import { createLogger, errorFields, logContext, validCorrelationId, type Logger } from '../log.js';
import { isThrottling, isTransient } from '../aws/json-call.js';
import { ConditionFailed, Throttled, WriteConflict } from '../db/client.js';
import {
  BadRequest,
  Conflict,
  Forbidden,
  HttpError,
  NotFound,
  PayloadTooLarge,
  UnsupportedMediaType,
  ServiceUnavailable,
  Unauthorized,
  ValidationFailed,
  type FieldError,
} from './errors.js';
import { checkNoPrecondition } from './if-match.js';
import { escapedBytes, LAMBDA_EVENT_BODY_BYTES, mayEscapeOver } from './lambda-payload.js';
import { matchPath, type PathMatch } from './path-match.js';
import { problemResponse } from './problem.js';
import { problemStatuses } from './problem-statuses.js';
import { checkResponses } from './response-check.js';
import type { ProblemStatus, RouteAuth, RouteDeclaration, RouteHandler, RequestToken } from './route.js';
import { parseJsonText } from '../text.js';

export type Event = APIGatewayProxyEventV2;
export type Result = APIGatewayProxyStructuredResultV2;
type Middleware = MiddlewareObj<Event, Result>;
type MiddyRequest = Request<Event, Result>;

/** The body limit of every route that declares none. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface BoundRoute {
  readonly id: string;
  readonly route: RouteDeclaration;
  readonly handler: RouteHandler;
}

export interface RouteState {
  bound: BoundRoute;
  params: Record<string, string>;
  principal: Principal | null;
  token: RequestToken | null;
  rawBody: unknown;
  input: { params: unknown; query: unknown; headers: unknown; body: unknown };
}

/** State the middlewares build up for one request; read by the dispatcher. */
export const routeState = new WeakMap<Event, RouteState>();

function stateOf(request: MiddyRequest): RouteState {
  const state = routeState.get(request.event);
  if (!state) throw new Error('route state missing: resolveRoute must run first');
  return state;
}

export function requestIdOf(event: Event): string {
  return event.requestContext?.requestId ?? 'unknown';
}

/** The caller's `x-correlation-id` when well formed (≤ 128 of `A-Za-z0-9._:-`); otherwise the request id stands in. */
export function correlationIdOf(event: Event): string | undefined {
  return validCorrelationId(event.headers?.['x-correlation-id']);
}

/**
 * One log line per request (never headers or bodies; its request and
 * correlation ids come from the log context group-handler.ts opens), and the
 * X-Request-Id and X-Correlation-Id headers.
 */
export function requestLog(log: Logger): Middleware {
  const started = new WeakMap<Event, number>();
  const finish = (request: MiddyRequest) => {
    const response = request.response;
    if (!response) return;
    const requestId = requestIdOf(request.event);
    const correlationId = logContext()?.correlation_id ?? correlationIdOf(request.event) ?? requestId;
    response.headers = { ...response.headers, 'X-Request-Id': requestId, 'X-Correlation-Id': correlationId };
    log.info('request', {
      method: request.event.requestContext?.http?.method,
      route: request.event.routeKey,
      status: response.statusCode,
      duration_ms: Date.now() - (started.get(request.event) ?? Date.now()),
    });
  };
  return {
    before: (request) => {
      started.set(request.event, Date.now());
    },
    after: finish,
    onError: finish,
  };
}

/**
 * CORS on every answer (errors included) and preflight answered here. Under
 * the production allowlist an answer depends on the caller's Origin (echoed,
 * or left out), so it says `Vary: Origin` and no shared cache hands it to
 * another origin; middy adds that only for several allowlisted origins, and
 * never when the answer already varies (gzip), so it is ensured here.
 */
export function cors(): Middleware {
  const inner = corsHeaders();
  const byOrigin = !coreSettings().corsOrigins.includes('*');
  const varyByOrigin = async (request: MiddyRequest) => {
    if (!byOrigin || !request.response) return;
    const headers = (request.response.headers ??= {});
    const vary = String(headers.Vary ?? '');
    if (!/(^|,)\s*origin\s*(,|$)/i.test(vary)) headers.Vary = vary ? `${vary}, Origin` : 'Origin';
  };
  return {
    // A preflight is answered here and skips every `after`.
    before: async (request) => {
      const preflight = await inner.before?.(request);
      if (preflight !== undefined) await varyByOrigin(request);
      return preflight;
    },
    after: async (request) => {
      await inner.after?.(request);
      await varyByOrigin(request);
    },
    onError: async (request) => {
      await inner.onError?.(request);
      await varyByOrigin(request);
    },
  };
}

/** The request headers a browser may send from another origin: every route-declared one but Origin, which browsers set themselves, and If-None-Match (revalidating reads). */
export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, If-Match, If-None-Match, X-Session-Duration, X-Request-Id, X-Correlation-Id';

function corsHeaders(): Middleware {
  return httpCors({
    origins: coreSettings().corsOrigins,
    disableBeforePreflightResponse: false,
    headers: CORS_ALLOWED_HEADERS,
    methods: 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
    // ETag: a rule editor sends it back as If-Match, so a concurrent edit is a 409, not a silent overwrite.
    exposeHeaders: 'ETag, X-Request-Id, X-Correlation-Id, Retry-After, WWW-Authenticate',
    maxAge: 600,
  }) as Middleware;
}

/** What a throttled request's 503 asks the client to wait: DynamoDB adds capacity within seconds. */
const THROTTLED_RETRY_AFTER_SECONDS = 5;

/**
 * The one place where losing to a concurrent writer becomes an answer: a
 * conditional write or transaction conflict that escapes a handler (after its
 * own retries) is a 409 the client can act on, never a 500. A setting the
 * request needed that does not validate is the deployment's fault, not the
 * caller's: a 503 whose detail names the variable (ConfigError never echoes a value). AWS
 * throttling, or an AWS failure (5xx, timeout, lost connection), that outlasts the retries is a
 * 503 with Retry-After, never a 500.
 */
function asHttpError(error: unknown): unknown {
  if (error instanceof ConditionFailed || error instanceof WriteConflict) {
    return new Conflict('The resource was changed by a concurrent request; reload it and try again.');
  }
  if (error instanceof ConfigError) return new ServiceUnavailable(error.message);
  // DynamoDB (or another AWS service) still throttling after the retries: nothing was applied, and a moment later it may be.
  if (error instanceof Throttled || isThrottling(error)) {
    return new ServiceUnavailable(
      'The service is over its capacity for the moment (AWS throttled the request); retry in a few seconds.',
      THROTTLED_RETRY_AFTER_SECONDS,
    );
  }
  // DynamoDB (or another AWS service) failing or out of reach past the retries: the outage is AWS's, not a defect
  // of ours. A write may or may not have been applied (a 500 can come after it was), so the detail says to look first.
  // The invocation's time ran out first (middy answers just before Lambda would end it): a busy moment, or a slow
  // dependency, whose request may have gone part of the way. Was a 500, as if our code had failed.
  if (error instanceof Error && error.name === 'TimeoutError' && (error.cause as { package?: unknown } | undefined)?.package === '@middy/core') {
    return new ServiceUnavailable(
      'This request ran out of time before it finished (the service was busy, or a service it needs was slow); it may have completed in part. Check what is stored, then retry in a few seconds.',
      THROTTLED_RETRY_AFTER_SECONDS,
    );
  }
  if (isTransient(error)) {
    return new ServiceUnavailable(
      'A service this request needs (AWS) failed or could not be reached, also when tried again; the request may not have completed. Check what is stored, then retry in a few seconds.',
      THROTTLED_RETRY_AFTER_SECONDS,
    );
  }
  return error;
}

/** Turns every failure into problem+json; an unexpected one is logged with its stack, never returned. */
export function problemErrors(log: Logger): Middleware {
  return {
    onError: (request) => {
      const error = asHttpError(request.error);
      const requestId = requestIdOf(request.event);
      if (!(error instanceof HttpError)) {
        log.error('unhandled error', { route: request.event.routeKey, ...errorFields(error) });
      } else if (error.status >= 500) {
        // What AWS answered, when that is what the 503 maps (the detail names no service or error).
        const cause = error === request.error ? {} : { cause: errorFields(request.error) };
        log.warn('request failed', { route: request.event.routeKey, status: error.status, detail: error.message, ...cause });
      }
      const route = routeState.get(request.event)?.bound.route;
      // Outside production, a problem its route does not declare is a defect of the route table (the OpenAPI
      // document would not list it): answered as one, naming the route, so a test meeting it fails. Only what
      // code threw as an HttpError: the mapping above of what escaped (a lost write race's 409, a throttle's 503)
      // can meet any route that writes, and is not a declaration's to list.
      const thrown = request.error;
      if (
        route &&
        thrown instanceof HttpError &&
        (thrown.status < 500 || thrown.status === 502) &&
        checkResponses() &&
        !problemStatuses(route).includes(thrown.status as ProblemStatus)
      ) {
        log.error('undeclared problem status', { route: request.event.routeKey, status: thrown.status, detail: thrown.message });
        request.response = problemResponse(
          new HttpError(
            500,
            'Internal Server Error',
            `${route.method} ${route.path} answered ${thrown.status} (${thrown.message}), a status it does not declare (shared/routes).`,
          ),
          requestId,
        );
        return;
      }
      request.response = problemResponse(error, requestId);
    },
  };
}

/**
 * Finds the declared route: API Gateway's route key first, the path as a fallback. A HEAD is its GET (the stack
 * routes both; the answer goes without its body, headFor), as RFC 9110 asks of a general-purpose server and uptime
 * probes expect.
 */
export function resolveRoute(sorted: readonly BoundRoute[]): Middleware {
  const byKey = new Map(sorted.map((b) => [`${b.route.method} ${b.route.path}`, b]));
  const templates = sorted.map((b) => ({ method: b.route.method, path: b.route.path, bound: b }));
  return {
    before: (request) => {
      const event = request.event;
      const method = event.requestContext.http.method === 'HEAD' ? 'GET' : event.requestContext.http.method;
      let match: PathMatch<(typeof templates)[number]> | null = null;
      const keyed = byKey.get(event.routeKey.startsWith('HEAD ') ? `GET ${event.routeKey.slice(5)}` : event.routeKey);
      if (keyed) {
        match = { route: { method: keyed.route.method, path: keyed.route.path, bound: keyed }, params: cleanParams(event.pathParameters) };
      } else {
        match = matchPath(templates, method, event.rawPath);
      }
      if (!match) throw new NotFound(`No route for ${method} ${event.rawPath}.`);
      routeState.set(event, {
        bound: match.route.bound,
        params: match.params,
        principal: null,
        token: null,
        rawBody: undefined,
        input: { params: undefined, query: undefined, headers: undefined, body: undefined },
      });
    },
  };
}

function cleanParams(params: Record<string, string | undefined> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

function bearerToken(event: Event): string | null {
  const header = event.headers?.authorization;
  const match = header?.match(/^Bearer\s+(\S+)$/i);
  return match?.[1] ?? null;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The static bearer token each non-JWT kind of route also accepts (senders and scrapers are not users). */
const STATIC_TOKENS: Partial<Record<RouteAuth, SecretName>> = { ingest: 'INGEST_TOKEN', scrape: 'SCRAPE_TOKEN' };
/** How old a held static token may be when a bearer does not match it, before the secret is read again (at most one read per 5 s). */
const STATIC_TOKEN_RECHECK_MS = 5_000;
/** The static tokens found too short in this container, each logged once. */
const shortTokensLogged = new Set<SecretName>();

/**
 * The static token as configured, unless it is shorter than STATIC_TOKEN_MIN_CHARS: then no sender is let in by
 * it (a token anyone could guess), and the log says why once per container. `npm start` refuses such a value before
 * serving; on AWS it can only come from a secret put by hand.
 */
function usableStaticToken(name: SecretName, value: string | undefined): string | undefined {
  if (!value || value.length >= STATIC_TOKEN_MIN_CHARS) return value;
  if (!shortTokensLogged.has(name)) {
    shortTokensLogged.add(name);
    createLogger('http/authenticate').error(`${shortStaticToken(name)}: no sender is let in by it until it is set anew`, { secret: name });
  }
  return undefined;
}

/**
 * Checks the bearer token (401 with WWW-Authenticate) and the caller's role
 * against the route's roles (403): the one place where roles are enforced.
 */
export function authenticate(): Middleware {
  return {
    before: async (request) => {
      const state = stateOf(request);
      const { route } = state.bound;
      if (route.auth === 'public') return;
      const token = bearerToken(request.event);
      if (!token) throw new Unauthorized();
      const staticName = STATIC_TOKENS[route.auth];
      if (staticName) {
        // Trimmed: a token rotated from a file (`--secret-string file://t`) ends in a newline senders never send.
        const staticToken = usableStaticToken(staticName, (await secret(staticName))?.trim());
        if (staticToken && sameSecret(token, staticToken)) return;
        // A token that does not match, and is no access token (three dot-separated parts), reads the secret again
        // when the value held is a few seconds old: a sender already moved to a rotated token is let in at once.
        if (token.split('.').length !== 3) {
          const fresh = usableStaticToken(staticName, (await freshSecret(staticName, STATIC_TOKEN_RECHECK_MS))?.trim());
          if (fresh && sameSecret(token, fresh)) return;
        }
      }
      const verified = await verifyAccessToken(token);
      if (!verified) throw new Unauthorized('The bearer token is invalid or expired.');
      // The account decides: deleted, deactivated or revoked means 401 now, and the role is the current one.
      const principal = await resolvePrincipal(verified);
      if (!principal) throw new Unauthorized('The bearer token is no longer valid.');
      state.principal = principal;
      state.token = {
        id: verified.tokenId,
        expiresAt: verified.expiresAt,
        authTime: verified.authTime,
        ...(verified.credential === undefined ? {} : { credential: verified.credential }),
      };
      if (!route.roles.includes(principal.role)) throw new Forbidden();
    },
  };
}

/** application/json, or a JSON-based type (application/vnd.…+json), whatever its parameters. */
const isJsonMediaType = (value: string | undefined): boolean =>
  /^application\/(?:json|[\w.+-]+\+json)$/.test((value ?? '').split(';')[0]!.trim().toLowerCase());

/** Parses a JSON body for routes that declare one: 413 over the route's limit (1 MB by default) or over what a Lambda event may carry, 415 when not declared JSON, 400 when not JSON. */
export function jsonBody(): Middleware {
  return {
    before: (request) => {
      const state = stateOf(request);
      const { event } = request;
      const { route } = state.bound;
      if (!route.body || event.body === undefined || event.body === '') return;
      const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
      const limit = route.maxBodyBytes ?? MAX_BODY_BYTES;
      if (raw.byteLength > limit) throw new PayloadTooLarge(`The request body is over ${limit} bytes.`);
      // A body under the route's limit can still make an event Lambda would not take (ingest's 6 MB, escaped).
      if (mayEscapeOver(event.body, LAMBDA_EVENT_BODY_BYTES) && escapedBytes(event.body) > LAMBDA_EVENT_BODY_BYTES)
        throw new PayloadTooLarge(
          `The request body is ${escapedBytes(event.body)} bytes inside its Lambda event (escaped${event.isBase64Encoded ? ', base64' : ''}), over the ${LAMBDA_EVENT_BODY_BYTES} a Lambda function can be given. Send it in smaller requests.`,
        );
      // Declared JSON, or refused before any handler runs: a form or a text/plain post is a "simple" request another
      // site's page can send from a browser without a CORS preflight (a login attempt in the operator's own network's
      // lockout window, say); a JSON one is not.
      if (!isJsonMediaType(event.headers?.['content-type']))
        throw new UnsupportedMediaType('The request body must be sent with Content-Type: application/json.');
      try {
        // Bytes that are not UTF-8 become U+FFFD here, and an escaped lone surrogate in the parse: only Unicode text enters.
        state.rawBody = parseJsonText(raw.toString('utf8'));
      } catch {
        throw new BadRequest('The request body is not valid JSON.');
      }
    },
  };
}

function issuesOf(where: string, error: z.core.$ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    loc: [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    msg: issue.message,
    type: issue.code,
  }));
}

/** Header names in lower case: the HTTP API delivers them so, a direct invoke (or a test) may not; group-handler.ts lowers them on arrival. */
export function lowerCased(headers: Record<string, string | undefined> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}

/**
 * A query parameter sent more than once. API Gateway (and the local server) join a repeated one with commas, so
 * `?days=1&days=2` read as the one value "1,2": refused as "expected number, received NaN", a message about
 * numbers to a client that sent two, and `?customer=A&customer=B` filtered silently by a customer named "A,B"
 * (an empty page). A refusal of a repeated one says so, and a repeated one read as text is refused; a list
 * (`severities`, an array once read) takes its values either way.
 */
function refuseRepeated(errors: FieldError[], rawQueryString: string | undefined, query: unknown): void {
  if (!rawQueryString) return;
  const counts = new Map<string, number>();
  for (const name of new URLSearchParams(rawQueryString).keys()) counts.set(name, (counts.get(name) ?? 0) + 1);
  const timesOf = (name: unknown) => counts.get(String(name)) ?? 0;
  for (const error of errors) {
    if (error.loc[0] === 'query' && timesOf(error.loc[1]) > 1)
      error.msg = `sent ${timesOf(error.loc[1])} times, which reads as one comma-separated value (${error.msg}): send it once`;
  }
  for (const [name, value] of Object.entries(query ?? {})) {
    if (typeof value === 'string' && timesOf(name) > 1)
      errors.push({
        loc: ['query', name],
        msg: `sent ${timesOf(name)} times, which reads as one text ("${value.slice(0, 40)}"): send it once`,
        type: 'repeated',
      });
  }
}

/** Validates path parameters, query, declared headers and body against the route's zod schemas (422). */
export function validate(): Middleware {
  return {
    before: (request) => {
      const state = stateOf(request);
      const { route } = state.bound;
      const errors: FieldError[] = [];
      const check = (where: 'path' | 'query' | 'header' | 'body', schema: z.ZodMiniType | undefined, value: unknown) => {
        if (!schema) return undefined;
        const parsed = schema.safeParse(value);
        if (parsed.success) return parsed.data;
        errors.push(...issuesOf(where, parsed.error));
        return undefined;
      };
      state.input = {
        params: check('path', route.params, state.params),
        query: check('query', route.query, request.event.queryStringParameters ?? {}),
        headers: check('header', route.headers, route.headers && (request.event.headers ?? {})),
        body: check('body', route.body, state.rawBody),
      };
      refuseRepeated(errors, request.event.rawQueryString, state.input.query);
      if (errors.length > 0) {
        const first = errors[0]!;
        const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
        throw new ValidationFailed(`${first.loc.slice(1).join('.') || first.loc[0]}: ${first.msg}${more}`, errors);
      }
      checkNoPrecondition(route, request.event.headers?.['if-match']);
    },
  };
}
