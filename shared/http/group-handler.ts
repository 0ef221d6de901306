// Builds a route group's Lambda handler: the shared middleware stack around a
// dispatcher that calls the handler bound to the matched route.
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { withTableAccess } from '../db/access.js';
import { createLogger, withInvocation } from '../log.js';
import {
  authenticate,
  correlationIdOf,
  cors,
  jsonBody,
  lowerCased,
  problemErrors,
  requestIdOf,
  requestLog,
  resolveRoute,
  routeState,
  validate,
  type BoundRoute,
  type Event,
  type Result,
} from './middleware.js';
import { NotAcceptable } from './errors.js';
import { notModified, REVALIDATE_CACHE_CONTROL, validatorDigest, weakEtag } from './if-none-match.js';
import { escapedBytes, gzipAnswer, LAMBDA_ANSWER_BYTES, mayEscapeOver } from './lambda-payload.js';
import { sortBySpecificity } from './path-match.js';
import { checkResponses, responseDrift } from './response-check.js';
import { PreparedJson, Reply, routeKey, type ApiRequest, type GroupBindings, type RouteDeclaration, type RouteGroup, type RouteHandler } from './route.js';

/** Throws unless every declared route has exactly one handler and nothing else is bound. */
export function checkBindings(group: RouteGroup, bindings: Record<string, unknown>): void {
  const declared = Object.keys(group.routes);
  const missing = declared.filter((id) => typeof bindings[id] !== 'function');
  const extra = Object.keys(bindings).filter((id) => !declared.includes(id));
  if (missing.length || extra.length) {
    throw new Error(`route group ${group.name}: missing handlers [${missing.join(', ')}], unknown bindings [${extra.join(', ')}]`);
  }
}

/**
 * Answers over this size are gzipped when the client accepts it: API Gateway
 * HTTP APIs do not compress, and a Lambda answer may not exceed 6 MB.
 */
const GZIP_MIN_BYTES = 8 * 1024;

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * Whether Accept-Encoding admits gzip (RFC 9110 §12.5.3): `gzip` (or `x-gzip`) with a weight
 * above 0, or `*` above 0 when gzip is not named. `gzip;q=0` refuses it; so does an absent header.
 */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  let star = false;
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [coding = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => /^q\s*=/.test(p));
    const weighted = q === undefined || Number(q.slice(q.indexOf('=') + 1).trim()) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') return weighted;
    if (coding === '*') star = weighted;
  }
  return star;
}

function toResult(value: unknown, acceptEncoding: string | undefined, contentType?: string): Result {
  const reply = value instanceof Reply ? value : new Reply(value === undefined ? 204 : 200, value);
  const headers: Record<string, string> = { 'Cache-Control': 'no-store', ...reply.headers };
  if (reply.body === undefined) return { statusCode: reply.status, headers };
  const prepared = reply.body instanceof PreparedJson ? reply.body : null;
  // A route declaring another media type (Prometheus text) answers its string body as is.
  const raw = contentType !== undefined && reply.status === 200 && typeof reply.body === 'string';
  const text = raw ? (reply.body as string) : prepared ? prepared.text : JSON.stringify(reply.body);
  headers['Content-Type'] = raw ? contentType : 'application/json';
  if (text.length >= GZIP_MIN_BYTES && acceptsGzip(acceptEncoding)) {
    const body = (prepared ? prepared.gzipped(gzipAnswer) : gzipAnswer(text)).toString('base64');
    if (body.length > LAMBDA_ANSWER_BYTES) throw new Error(`the answer is ${megabytes(body.length)} even gzipped, more than a Lambda function may return`);
    return {
      statusCode: reply.status,
      headers: { ...headers, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' },
      body,
      isBase64Encoded: true,
    };
  }
  if (mayEscapeOver(text, LAMBDA_ANSWER_BYTES)) {
    const bytes = prepared ? prepared.escapedBytes(escapedBytes) : escapedBytes(text);
    if (bytes > LAMBDA_ANSWER_BYTES)
      throw new NotAcceptable(
        `This answer is ${megabytes(bytes)} uncompressed, more than a Lambda function may return (6 MB). Ask for it gzipped: send Accept-Encoding: gzip (curl --compressed).`,
      );
  }
  return { statusCode: reply.status, headers, body: text };
}

/** Prepared answers are shared by many requests: each is checked once. */
const checkedPrepared = new WeakSet<PreparedJson>();

/** A 200 (or declared 202) answer that does not match its route's schema is an internal error (outside production). */
function checkAnswer(bound: BoundRoute, value: unknown): void {
  const reply = value instanceof Reply ? value : null;
  const status = reply ? reply.status : value === undefined ? 204 : 200;
  const schema = status === 200 ? bound.route.response : status === 202 ? bound.route.accepted : undefined;
  // The ETag is contract too (the OpenAPI document lists it from the declaration): none undeclared, and a declared GET's always.
  const sendsEtag = reply !== null && Object.keys(reply.headers).some((name) => name.toLowerCase() === 'etag');
  if (sendsEtag && !bound.route.etag) throw new Error(`the answer of ${routeKey(bound.route)} carries an ETag its route does not declare`);
  if (!sendsEtag && status === 200 && bound.route.etag && bound.route.method === 'GET')
    throw new Error(`the answer of ${routeKey(bound.route)} has no ETag, which its route declares`);
  if (!schema) return;
  let body = reply ? reply.body : value;
  if (body instanceof PreparedJson) {
    if (checkedPrepared.has(body)) return;
    checkedPrepared.add(body);
    body = JSON.parse(body.text);
  }
  const drift = responseDrift(schema, body);
  if (drift) throw new Error(`the answer of ${routeKey(bound.route)} does not match its response schema: ${drift}`);
}

/** API Gateway's time of arrival; now when a direct invoke carries none (or one from the future). */
function receivedAtOf(event: Event): number {
  const at = event.requestContext.timeEpoch;
  return typeof at === 'number' && Number.isFinite(at) ? Math.min(at, Date.now()) : Date.now();
}

export function createGroupHandler<G extends RouteGroup>(group: G, bindings: NoInfer<GroupBindings<G>>) {
  checkBindings(group, bindings as Record<string, unknown>);
  const checking = checkResponses();
  const log = createLogger('http');
  const bound: BoundRoute[] = Object.entries(group.routes).map(([id, route]) => ({
    id,
    route,
    handler: (bindings as Record<string, RouteHandler>)[id]!,
  }));
  const sorted = sortBySpecificity(bound.map((b) => ({ ...b, method: b.route.method, path: b.route.path })));

  const dispatch = async (event: Event): Promise<Result> => {
    const state = routeState.get(event)!;
    const headers = event.headers ?? {};
    const request: ApiRequest = {
      params: state.input.params,
      query: state.input.query,
      body: state.input.body,
      principal: state.principal,
      token: state.token,
      requestId: requestIdOf(event),
      receivedAt: receivedAtOf(event),
      headers: state.input.headers,
      rawHeaders: headers,
      sourceIp: event.requestContext.http.sourceIp,
      userAgent: event.requestContext.http.userAgent ?? headers['user-agent'] ?? '',
    } as ApiRequest;
    const value = await state.bound.handler(request);
    if (checking) checkAnswer(state.bound, value);
    if (state.bound.route.revalidate && !(value instanceof Reply) && value !== undefined) return revalidated(state.bound.route, value, request.query, headers);
    return toResult(value, headers['accept-encoding'], state.bound.route.contentType);
  };

  // Order matters: onError runs in reverse, so problemErrors renders the error
  // first and cors then adds its headers to that response.
  const pipeline = middy<Event, Result>()
    .use(requestLog(log))
    .use(cors())
    .use(problemErrors(log))
    .use(resolveRoute(sorted))
    .use(authenticate())
    .use(jsonBody())
    .use(validate())
    .handler(dispatch);

  // The whole request runs as one invocation of the group: every line logged
  // during it, by any module, carries its request and correlation ids.
  // Its DynamoDB requests may reach only the group's declared tables, as on AWS (shared/db/access.ts).
  return (received: Event, context?: Context): Promise<Result> => {
    // Every header read below (auth, CORS, correlation id, declared headers, the caller's address) by its lower-case
    // name, as the HTTP API delivers them: a direct invoke may spell them otherwise.
    const event: Event = { ...received, headers: lowerCased(received.headers) };
    const answer = withTableAccess(group.name, group, () =>
      withInvocation({ service: group.name, context, requestId: requestIdOf(event), correlationId: correlationIdOf(event) }, () =>
        pipeline(event, context as Context),
      ),
    );
    return event.requestContext?.http?.method === 'HEAD' ? answer.then(headFor) : answer;
  };
}

/**
 * A revalidating route's 200 (`revalidate`): its weak ETag and `private, no-cache`; or, when If-None-Match names
 * that ETag (or is `*`), a 304 with the same headers and no body, nothing serialized or gzipped for it. A
 * prepared answer (a fleet view's) digests its text once; a plain one (an issue list) is serialized once for
 * both. A route with a query digests the validated query too (defaults applied: `?days=7` and `?days=7&page=1`
 * are one answer), so two queries never share a validator. Decision: shared/http/README.md.
 */
function revalidated(route: RouteDeclaration, value: unknown, query: unknown, headers: Readonly<Record<string, string | undefined>>): Result {
  const answer = value instanceof PreparedJson ? value : new PreparedJson(value);
  // Made once per prepared answer (which requests of any query may share), then the query's part per request.
  const own = answer.etag(validatorDigest, weakEtag);
  const etag = route.query === undefined ? own : weakEtag(validatorDigest(own, JSON.stringify(query ?? null)));
  // The headers a 200 would carry that a cache needs (RFC 9110 §15.4.5): ETag, Cache-Control, Vary.
  const conditional = { 'Cache-Control': REVALIDATE_CACHE_CONTROL, ETag: etag, Vary: 'Accept-Encoding' };
  if (notModified(headers['if-none-match'], etag)) return { statusCode: 304, headers: conditional };
  const result = toResult(answer, headers['accept-encoding'], route.contentType);
  return { ...result, headers: { ...result.headers, ...conditional } };
}

/** A HEAD's answer: its GET's status and headers, no body (resolveRoute answers a HEAD as its GET). */
function headFor(result: Result): Result {
  const { body: _body, isBase64Encoded: _encoded, ...head } = result;
  return head;
}
