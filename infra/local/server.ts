// The local stand-in for API Gateway + CloudFront: each /api request becomes an
// API Gateway HTTP API (payload 2.0) event for the same group handler that
// serves it on AWS; any other GET gets the SPA (a file from infra/web, else
// index.html). Route precedence follows API Gateway (literal > {param} > {proxy+}).
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { extname, join, normalize, resolve, sep } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { acceptsGzip } from '../../shared/http/group-handler.js';
import { matchPath, sortBySpecificity } from '../../shared/http/path-match.js';
import { embedSettings } from '../../shared/config/embed.js';
import { routeKey } from '../../shared/http/route.js';
import { allRoutes, ROUTE_GROUPS } from '../../shared/routes/all-groups.js';
import { API_POLICY, deploymentPolicy, SECURITY_HEADERS } from '../web/csp.js';
import { lambdaContext, loadHandler } from './functions.js';

export type GroupHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2 | string>;

/** API Gateway HTTP API's own payload limit. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** Imports every route group's Lambda entry (after the environment is set up). */
export async function loadGroupHandlers(): Promise<Map<string, GroupHandler>> {
  const handlers = new Map<string, GroupHandler>();
  for (const group of ROUTE_GROUPS) handlers.set(group.name, (await loadHandler(group.name)) as GroupHandler);
  return handlers;
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * The media types an HTTP API passes to Lambda as text; every other body, a form or one with no
 * Content-Type included, arrives base64-encoded (a third larger against Lambda's 6 MB event).
 */
const TEXT_MEDIA_TYPES = new Set(['application/json', 'application/xml', 'application/javascript']);
const isTextBody = (contentType: string) => {
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType.startsWith('text/') || TEXT_MEDIA_TYPES.has(mediaType);
};

/** Whether the request's Content-Length is over API Gateway's limit (a body sent in chunks declares none). */
const declaredTooLarge = (req: IncomingMessage) => Number(req.headers['content-length'] ?? 0) > MAX_REQUEST_BYTES;

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolveBody(size > MAX_REQUEST_BYTES ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function joinHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'cookie') continue;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
}

export function toApiGatewayEvent(
  req: IncomingMessage,
  url: URL,
  body: Buffer,
  route: { routeKey: string; params: Record<string, string> },
): APIGatewayProxyEventV2 {
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;
  const contentType = req.headers['content-type'] ?? '';
  const asText = body.length === 0 || isTextBody(contentType);
  const now = new Date();
  return {
    version: '2.0',
    routeKey: route.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: req.headers.cookie?.split(/;\s*/),
    headers: joinHeaders(req),
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: Object.keys(route.params).length ? route.params : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: req.headers.host ?? 'localhost',
      domainPrefix: (req.headers.host ?? 'localhost').split('.')[0]!,
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
        userAgent: req.headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: route.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length ? body.toString(asText ? 'utf8' : 'base64') : undefined,
    isBase64Encoded: !asText,
  };
}

function sendProblem(res: ServerResponse, status: number, title: string, detail: string): void {
  // The status line's reason is the body's title (Node 20 still calls 413 "Payload Too Large"); an answer of the
  // server's own is no more cacheable than a handler's problem.
  res.writeHead(status, title, { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify({ type: 'about:blank', title, status, detail }));
}

function sendResult(res: ServerResponse, result: APIGatewayProxyStructuredResultV2 | string, head: boolean): void {
  // A bare string or object result is what API Gateway turns into a 200 JSON reply.
  const structured: APIGatewayProxyStructuredResultV2 =
    typeof result === 'string' ? { statusCode: 200, body: result, headers: { 'Content-Type': 'application/json' } } : result;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {})) headers[name] = String(value);
  if (structured.cookies?.length) headers['Set-Cookie'] = structured.cookies;
  const body = structured.body === undefined ? undefined : Buffer.from(structured.body, structured.isBase64Encoded ? 'base64' : 'utf8');
  res.writeHead(structured.statusCode ?? 200, headers);
  res.end(head ? undefined : body);
}

/**
 * A `.` or `..` segment (also as `%2e`). URL parsing would resolve it into another route
 * (`/api/clusters/../metrics` into `/api/metrics`), where API Gateway routes the path as
 * sent; browsers and HTTP clients resolve dot segments before sending, so an API path that
 * still has one is hand-made, and is refused rather than resolved (infra/local/README.md).
 */
function hasDotSegment(target: string): boolean {
  const path = target.split('?', 1)[0]!.replace(/%2e/gi, '.');
  return /(^|\/)\.{1,2}(\/|$)/.test(path);
}

/** An origin-form target whose path URL parsing keeps as sent: one leading `/`, no `\` (read as `/`). */
function plainTarget(target: string): boolean {
  const path = target.split('?', 1)[0]!;
  return path.startsWith('/') && !path.startsWith('//') && !path.includes('\\');
}

/** `/%ff` and the like: no route or file can match, and decoding them would throw. */
function decodablePath(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

/** EMBED_HOST as the embed routes read it; none while embedding is not (or not fully) configured. */
function configuredEmbedHost(): string | undefined {
  try {
    return embedSettings()?.host;
  } catch {
    return undefined;
  }
}

/**
 * Vite names every file under assets/ by its content's hash (a changed file is a new name): a browser may keep one
 * for a year, as CloudFront's are (infra/fleet-health-stack.ts SiteAssets). With `no-cache` and no validator, each
 * reload downloaded the whole console again (366 KB of entry script; 875 KB on /rules).
 */
const HASHED_ASSETS = '/assets/';
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Text the console is made of, gzipped when the browser accepts it, as CloudFront compresses it. */
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.svg']);
/** Each file gzipped once per version of it (its modification time): the console's files change only with a build. */
const gzipped = new Map<string, { mtimeMs: number; body: Buffer }>();

async function gzippedFile(file: string, mtimeMs: number, content: Buffer): Promise<Buffer> {
  const kept = gzipped.get(file);
  if (kept?.mtimeMs === mtimeMs) return kept.body;
  const { gzip } = await import('node:zlib');
  const body = await new Promise<Buffer>((done, fail) => gzip(content, (error, out) => (error ? fail(error) : done(out))));
  gzipped.set(file, { mtimeMs, body });
  return body;
}

async function serveSpa(res: ServerResponse, webRoot: string, pathname: string, head: boolean, acceptEncoding: string | undefined): Promise<void> {
  const root = resolve(webRoot);
  // An extension-less path that is no valid percent-encoding (`/clusters/%E0%A4%A`) names no file: the app, as any route.
  let file = decodablePath(pathname) ? join(root, normalize(decodeURIComponent(pathname))) : join(root, 'index.html');
  if (!file.startsWith(root + sep)) file = join(root, 'index.html');
  let found = await stat(file).then(
    (s) => (s.isFile() ? s : undefined),
    () => undefined,
  );
  if (!found) {
    // As CloudFront does (infra/fleet-health-stack.ts SpaRewrite): only a path without an extension is a client-side
    // route. A missing file is a 404, not the entry document: a tab open across a rebuild asking for an old chunk
    // would get HTML for a module script (a MIME error) instead of an answer it can tell is missing.
    if (/\.[^/]+$/.test(pathname))
      return sendProblem(res, 404, 'Not Found', 'The console has no file at this path (rebuilt since this page loaded? reload it).');
    file = join(root, 'index.html');
    found = await stat(file);
  }
  const content = await readFile(file);
  const type = extname(file);
  const headers: Record<string, string> = {
    'Content-Type': MIME[type] ?? 'application/octet-stream',
    'Cache-Control': file !== join(root, 'index.html') && pathname.startsWith(HASHED_ASSETS) ? IMMUTABLE : 'no-cache',
  };
  let body: Buffer = content;
  if (COMPRESSIBLE.has(type)) {
    headers.Vary = 'Accept-Encoding';
    if (acceptsGzip(acceptEncoding)) {
      body = await gzippedFile(file, found.mtimeMs, content);
      headers['Content-Encoding'] = 'gzip';
    }
  }
  res.writeHead(200, headers);
  res.end(head ? undefined : body);
}

export interface LocalServerOptions {
  handlers: Map<string, GroupHandler>;
  webRoot: string;
}

export function createLocalServer(options: LocalServerOptions): Server {
  return answerClientErrors(createServer(localRequestListener(options)));
}

/**
 * A request Node's parser refuses before any listener sees it (headers over its 16 KB: 431; a malformed one, such
 * as `Content-Length: abc`: 400; one too slow: 408) is answered as every other error is, problem+json with the
 * API's headers, where Node wrote a bare status line. On AWS, API Gateway and CloudFront answer these.
 */
export function answerClientErrors(server: Server): Server {
  // Expect: 100-continue (curl's, for a body over 1 KB): Node said "continue" to every one, and a client then sent a
  // body over API Gateway's limit into the 413's closing socket. Too large, it gets the 413 and no "continue".
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!declaredTooLarge(req)) res.writeContinue();
    server.emit('request', req, res);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: unknown }) => {
    // No answer on a socket gone, or while an answer to an earlier request on it is pending (keep-alive, pipelined):
    // the client would read ours as that one's.
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage) return void socket.destroy();
    const [status, detail] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request’s headers are over 16 KB.']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'The request did not arrive in time.']
          : [400, 'The request is not valid HTTP/1.1.'];
    const title = STATUS_CODES[status] ?? 'Bad Request';
    const body = JSON.stringify({ type: 'about:blank', title, status, detail });
    const headers = { ...SECURITY_HEADERS, 'Content-Security-Policy': API_POLICY, 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' };
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    // Closed once written, as Node's own handler does: the server's sockets are half-open, so end() alone waits on the client.
    socket.end(`HTTP/1.1 ${status} ${title}\r\n${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`, () => socket.destroy());
  });
  return server;
}

/**
 * What the port answers while `npm start` is still starting (DynamoDB Local, the tables, the demo
 * fleet): the 503 a load balancer gives before its targets are healthy, with a time to retry.
 */
export function answerStarting(_req: IncomingMessage, res: ServerResponse): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  res.setHeader('Retry-After', '5');
  sendProblem(res, 503, 'Service Unavailable', 'The service is starting; retry in a few seconds.');
}

/** The API routes (as API Gateway passes them to the group Lambdas) and the console, as CloudFront serves it. */
export function localRequestListener({ handlers, webRoot }: LocalServerOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const routes = sortBySpecificity(allRoutes().map((r) => ({ method: r.route.method, path: r.route.path, group: r.group.name, key: routeKey(r.route) })));

  return async (req, res) => {
    try {
      const method = req.method ?? 'GET';
      // As CloudFront's response headers policies add them: the console's policy (frame-src narrowed to the BI
      // server this process is configured for), or the API's under /api/.
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
      // A target URL parsing would rewrite (`\` read as `/`, `//host/…` read as another origin) is refused: API Gateway routes the path as sent.
      if (!plainTarget(req.url ?? '/')) {
        res.setHeader('Content-Security-Policy', API_POLICY);
        return sendProblem(res, 400, 'Bad Request', 'The request target is not a plain path: it must start with one "/" and hold no "\\".');
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      // An API path as sent: one whose dot segments climb out of /api/ is still CloudFront's /api/* behaviour's, not the console's.
      const api = url.pathname.startsWith('/api/') || (req.url ?? '/').startsWith('/api/');
      res.setHeader('Content-Security-Policy', api ? API_POLICY : deploymentPolicy(configuredEmbedHost()));
      // A console path is CloudFront's SpaRewrite's (below): an extension-less one is the app, decodable or not.
      if ((api || /\.[^/]+$/.test(url.pathname)) && !decodablePath(url.pathname))
        return sendProblem(res, 400, 'Bad Request', 'The request path is not a valid percent-encoded URI.');
      if (api && hasDotSegment(req.url ?? '/'))
        return sendProblem(res, 400, 'Bad Request', 'The request path has a "." or ".." segment; send the path it means.');
      if (!api) {
        if (method !== 'GET' && method !== 'HEAD') {
          res.setHeader('Allow', 'GET, HEAD'); // a 405 says what is allowed (RFC 9110 §15.5.6)
          return sendProblem(res, 405, 'Method Not Allowed', 'Only GET reaches the single-page app.');
        }
        return await serveSpa(res, webRoot, url.pathname, method === 'HEAD', req.headers['accept-encoding']);
      }
      // The stack routes a HEAD beside each GET, to the same function (shared/http/middleware.ts, resolveRoute).
      const head = method === 'HEAD';
      const match = matchPath(routes, head ? 'GET' : method, url.pathname);
      if (!match) return sendProblem(res, 404, 'Not Found', 'No API route matches this path.');
      // A body declared too large is refused unread (a client awaiting 100 Continue is not told to send it:
      // answerClientErrors); one sent in chunks is read to its end, keeping nothing past the limit, then refused.
      const body = declaredTooLarge(req) ? null : await readBody(req);
      if (body === null) res.setHeader('Connection', 'close');
      if (body === null) return sendProblem(res, 413, 'Content Too Large', 'The request is over API Gateway’s 10 MB limit.');
      const routeKey = head ? `HEAD ${match.route.path}` : match.route.key;
      const event = toApiGatewayEvent(req, url, body, { routeKey, params: match.params });
      const handler = handlers.get(match.route.group)!;
      const result = await handler(event, lambdaContext(match.route.group, event.requestContext.requestId));
      sendResult(res, result, head);
    } catch (error) {
      // What API Gateway answers when the Lambda itself fails.
      console.error(JSON.stringify({ level: 'error', service: 'local-server', message: 'handler crashed', error: String(error) }));
      if (!res.headersSent) sendProblem(res, 502, 'Bad Gateway', 'The function failed.');
      else res.end();
    }
  };
}
