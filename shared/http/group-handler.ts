// Builds a route group's Lambda handler: the shared middleware stack around a
// dispatcher that calls the handler bound to the matched route.
import middy from '@middy/core';
import { createLogger } from '../log.js';
import { NotImplemented } from './errors.js';
import {
  authenticate,
  cors,
  jsonBody,
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
import { sortBySpecificity } from './path-match.js';
import { Reply, type ApiRequest, type GroupBindings, type RouteGroup, type RouteHandler } from './route.js';

/** Throws unless every declared route has exactly one handler and nothing else is bound. */
export function checkBindings(group: RouteGroup, bindings: Record<string, unknown>): void {
  const declared = Object.keys(group.routes);
  const missing = declared.filter((id) => typeof bindings[id] !== 'function');
  const extra = Object.keys(bindings).filter((id) => !declared.includes(id));
  if (missing.length || extra.length) {
    throw new Error(`route group ${group.name}: missing handlers [${missing.join(', ')}], unknown bindings [${extra.join(', ')}]`);
  }
}

/** A declared route whose capability a later issue builds: an honest 501. */
export function notImplemented(issue: string): RouteHandler {
  return async () => {
    throw new NotImplemented(`This endpoint is declared but not implemented yet (${issue}).`);
  };
}

function toResult(value: unknown): Result {
  const reply = value instanceof Reply ? value : new Reply(value === undefined ? 204 : 200, value);
  const headers: Record<string, string> = { 'Cache-Control': 'no-store', ...reply.headers };
  if (reply.body === undefined) return { statusCode: reply.status, headers };
  return {
    statusCode: reply.status,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(reply.body),
  };
}

export function createGroupHandler<G extends RouteGroup>(group: G, bindings: GroupBindings<G>) {
  checkBindings(group, bindings as Record<string, unknown>);
  const log = createLogger(group.name);
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
      headers,
      sourceIp: event.requestContext.http.sourceIp,
      userAgent: event.requestContext.http.userAgent ?? headers['user-agent'] ?? '',
    } as ApiRequest;
    return toResult(await state.bound.handler(request));
  };

  // Order matters: onError runs in reverse, so problemErrors renders the error
  // first and cors then adds its headers to that response.
  return middy<Event, Result>()
    .use(requestLog(log))
    .use(cors())
    .use(problemErrors(log))
    .use(resolveRoute(sorted))
    .use(authenticate())
    .use(jsonBody())
    .use(validate())
    .handler(dispatch);
}
