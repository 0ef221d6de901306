// Route declarations: the single route table. Declarations import no handler;
// functions/<group>.ts binds handlers to its group's declarations. The router,
// the CDK stack, the OpenAPI document and the route-walking tests read these.
import type * as z from '../zod.js';
import type { Principal } from '../auth/principal.js';
import type { Role } from '../auth/roles.js';
import type { ConfigConcern } from '../config/concerns.js';
import type { Lease, TableName } from '../db/tables.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ANY';

/**
 * Who may call a route:
 * - `public`: no token (health check, login, activate, OpenAPI document);
 * - `user`: a valid JWT whose role is in `roles`;
 * - `ingest`: the static INGEST_TOKEN, or a JWT whose role is in `roles`;
 * - `scrape`: the static SCRAPE_TOKEN (a Prometheus scraper), or a JWT whose role is in `roles`.
 */
export type RouteAuth = 'public' | 'user' | 'ingest' | 'scrape';

export type ProblemStatus = 400 | 401 | 403 | 404 | 406 | 409 | 412 | 413 | 415 | 422 | 429 | 502 | 503;

export interface RouteDeclaration {
  readonly method: HttpMethod;
  /** API Gateway path template, e.g. `/api/issues/{issue_id}`. */
  readonly path: string;
  readonly summary: string;
  readonly auth: RouteAuth;
  readonly roles: readonly Role[];
  readonly params?: z.ZodMiniType;
  readonly query?: z.ZodMiniType;
  /**
   * The request headers its handler reads, as an object keyed by their lower-case names (how the HTTP API
   * delivers them; group-handler.ts lowers a direct invoke's on arrival): validated like the query and listed in the
   * OpenAPI document. What a value means is checked where it is read (a malformed If-Match is a 400 there).
   */
  readonly headers?: z.ZodMiniType;
  readonly body?: z.ZodMiniType;
  readonly response?: z.ZodMiniType;
  /** The 202 answer when the work goes on in the background (patrol trigger). */
  readonly accepted?: z.ZodMiniType;
  /**
   * What the ETag of its 200 answer stands for, when it answers one (a write sends it back as If-Match:
   * shared/http/if-match.ts). The OpenAPI document lists the header from this, and outside production an
   * answer carrying an ETag its route does not declare is an internal error (group-handler.ts).
   */
  readonly etag?: string;
  /**
   * A read a watch page asks again every minute (GET only): what the weak ETag of its 200 stands for. Such a route
   * answers `Cache-Control: private, no-cache` and that ETag, and an If-None-Match naming it 304 with no body
   * (shared/http/if-none-match.ts; the OpenAPI document lists both); every other answer is `no-store`.
   */
  readonly revalidate?: string;
  /**
   * Problem statuses this route answers beyond those its declaration implies
   * (shared/http/problem-statuses.ts: 401/403 from `auth` and `roles`, 404 from path
   * parameters, 400 and 413 from a body, 422 from any input, 503 always): e.g. 406 for
   * an answer that may pass 6 MB, 409 for a conflicting write, 429, 502.
   */
  readonly problems?: readonly ProblemStatus[];
  /**
   * The 200 answer's media type when it is not JSON (`text/plain; version=0.0.4` for Prometheus): the handler
   * returns the body as a string, `response` is then a string schema, and the OpenAPI document declares this type.
   */
  readonly contentType?: string;
  /** Largest request body accepted (413 above it); 1 MB unless a route needs more (ingest). */
  readonly maxBodyBytes?: number;
}

/** How a function may use a table; the operations each allows: `ACCESS_OPERATIONS` in shared/db/access.ts. */
export type TableAccess = 'read' | 'append' | 'readappend' | 'readupdate' | 'readputupdate' | 'readwrite';

export interface RouteGroup<R extends Record<string, RouteDeclaration> = Record<string, RouteDeclaration>> {
  /** One name per concept: the file name, construct id, log service and URL prefix. */
  readonly name: string;
  /** DynamoDB tables this group's Lambda may touch, and how (least privilege). */
  readonly tables: Partial<Record<TableName, TableAccess>>;
  /** With table `locks`: the lease locks it may touch (shared/db/tables.ts LEASES); none otherwise. */
  readonly leases?: readonly Lease[];
  /** Extra grants beyond tables (SES, invoking a worker). */
  readonly grants?: readonly GroupGrant[];
  /** Configuration concerns this group reads beyond `core` and `tokens` (shared/config/concerns.ts): the stack sets their variables and grants their secrets. */
  readonly config?: readonly ConfigConcern[];
  /** Lambda memory in MB, chosen from a measured peak with headroom; the stack's default (512) when absent. */
  readonly memoryMb?: number;
  /**
   * How long one of its requests may run by design (the chat's deadline), when that is past the 90% of its timeout
   * at which a duration alarm fires otherwise: its alarm fires only beyond it (infra/constructs/monitoring.ts).
   */
  readonly runsUpToMs?: number;
  readonly routes: R;
}

export type GroupGrant =
  | 'ses:send'
  | 'invoke:patrol-worker'
  | 'invoke:agent-worker'
  | 'invoke:metrics-puller'
  | 'invoke:recompute'
  | 'bedrock:invoke'
  | 'aps:query';

/** Declares a group while keeping each route's literal type for handler binding. */
export function defineGroup<const R extends Record<string, RouteDeclaration>>(group: RouteGroup<R>): RouteGroup<R> {
  return group;
}

/** The API Gateway route key of a declaration: `GET /api/issues/{issue_id}`. */
export function routeKey(route: Pick<RouteDeclaration, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

type Infer<S> = S extends z.ZodMiniType ? z.output<S> : undefined;

/** The access token a request came with: its session (what a logout revokes and a renewal continues). */
export interface RequestToken {
  /** `jti`: the session's id, the same in every renewal of it. */
  readonly id: string;
  /** Epoch seconds. */
  readonly expiresAt: number;
  /** The session's sign-in, epoch seconds. */
  readonly authTime: number;
  /** The password stamp it was signed with, checked against the account's own (shared/auth/principal.ts). */
  readonly credential?: string;
}

/** What a bound handler receives: validated input plus the caller. */
export interface ApiRequest<D extends RouteDeclaration = RouteDeclaration> {
  readonly params: Infer<D['params']>;
  readonly query: Infer<D['query']>;
  readonly body: Infer<D['body']>;
  /** The authenticated caller: always there on `auth: 'user'` routes (the middleware answered 401 otherwise); null on public routes and for the static ingest and scrape tokens. */
  readonly principal: D['auth'] extends 'user' ? Principal : Principal | null;
  /** The access token when the caller sent one. */
  readonly token: RequestToken | null;
  readonly requestId: string;
  /** When the request arrived (epoch ms: API Gateway's `timeEpoch`, never later than now): a route's 29 s count from here. */
  readonly receivedAt: number;
  /** The headers the route declares (only those), validated. */
  readonly headers: Infer<D['headers']>;
  /** Every header as received: for where the request came from (shared/auth/caller.ts), not for a handler's input. */
  readonly rawHeaders: Readonly<Record<string, string | undefined>>;
  readonly sourceIp: string;
  readonly userAgent: string;
}

/**
 * A JSON answer serialized once and reused while its data is (a cached
 * dashboard view), with its gzip made once on first demand. `T` is the type of
 * the body it was made from, so a handler's prepared answer is checked against
 * its route's response like a plain one.
 */
export class PreparedJson<T = unknown> {
  readonly text: string;
  /** Never set: carries the body's type (covariant) for the compiler. */
  declare readonly body?: T;
  private gzip?: Buffer;
  private escaped?: number;
  /** Where the text's stamp (`generated_at`) begins: what comes before is what the ETag digests. */
  private readonly stampAt: number;
  /** What goes into the ETag as is (the fleet view's generation). */
  private readonly version?: string | number;
  /** The weak ETag of a revalidating route's answer, made once. */
  private tag?: string;
  /**
   * `stamp`, when given, is appended as the answer's last members and is no part of its validator: the ETag
   * digests the rest, so a recomputation that changed nothing else answers the same one (shared/http/README.md,
   * "Conditional reads"). `body` is then the answer without the stamp.
   */
  constructor(body: T, { stamp, version }: { stamp?: Record<string, unknown>; version?: string | number } = {}) {
    const text = JSON.stringify(body);
    const head = text.slice(0, -1);
    const tail = stamp ? JSON.stringify(stamp).slice(1) : '';
    this.text = stamp ? `${head}${head.length > 1 && tail.length > 1 ? ',' : ''}${tail}` : text;
    this.stampAt = stamp ? head.length : text.length;
    this.version = version;
  }

  /** The weak ETag of this answer: `tag` of the digest of its text before the stamp, with its version; made once. */
  etag(digest: (text: string) => string, tag: (digest: string, version?: string | number) => string): string {
    this.tag ??= tag(digest(this.text.slice(0, this.stampAt)), this.version);
    return this.tag;
  }
  gzipped(compress: (text: string) => Buffer): Buffer {
    this.gzip ??= compress(this.text);
    return this.gzip;
  }
  /** `measure(text)`, measured once: what the text weighs as a Lambda result's body (group-handler.ts). */
  escapedBytes(measure: (text: string) => number): number {
    this.escaped ??= measure(this.text);
    return this.escaped;
  }
}

/** A reply with a status or headers other than 200 JSON; `T` is its body's type. */
export class Reply<T = unknown> {
  constructor(
    readonly status: number,
    readonly body: T,
    readonly headers: Record<string, string> = {},
  ) {}
}

type Schema<D, K extends 'response' | 'accepted'> = D extends { readonly [k in K]: infer S extends z.ZodMiniType } ? z.output<S> : never;

/**
 * What a handler of the route `D` may return, so that `npm run typecheck`
 * fails when it answers another shape than its route declares:
 * - a route with a `response`: that schema's output, plain, prepared, or in a
 *   Reply (headers such as an ETag), and its `accepted` one in a Reply (202);
 * - a route without one (204, or an answer the route does not describe): anything.
 */
export type RouteAnswer<D extends RouteDeclaration> = D extends { readonly response: z.ZodMiniType }
  ? Schema<D, 'response'> | PreparedJson<Schema<D, 'response'>> | Reply<Schema<D, 'response'> | Schema<D, 'accepted'>>
  : unknown;

export type RouteHandler<D extends RouteDeclaration = RouteDeclaration> = (request: ApiRequest<D>) => Promise<RouteAnswer<D>>;

export type GroupBindings<G extends RouteGroup> = {
  readonly [K in keyof G['routes']]: RouteHandler<G['routes'][K]>;
};
