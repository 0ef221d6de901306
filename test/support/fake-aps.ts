// A local stand-in for Amazon Managed Service for Prometheus (AMP): the workspace
// query API at /workspaces/<id>/api/v1/{query,query_range}, each request checked
// for AWS Signature Version 4 and, when valid, answered by a real Prometheus.
//
// The verifier is written from AWS's documentation ("Create a signed AWS API
// request", Signature Version 4) with node:crypto only, never with an AWS
// package: the puller signs with @smithy/signature-v4, and a check built on the
// same library would share its mistakes. test/metric-pull/fake-aps.test.ts
// proves it against AWS's published vectors.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** When set, requests must carry it as a signed X-Amz-Security-Token; when not, they must not carry one. */
  sessionToken?: string;
}

export interface SigV4Expectation extends SigV4Credentials {
  region: string;
  service: string;
  /** The clock the freshness check uses (ms since the epoch); Date.now by default. */
  now?: () => number;
  /** How far X-Amz-Date may be from now (default 5 minutes, as AWS allows). */
  maxSkewMs?: number;
}

/** A request as it came over the wire. */
export interface WireRequest {
  method: string;
  /** The request target as sent: path and query, still percent-encoded. */
  target: string;
  /** Header names and values in the order received (Node's req.rawHeaders shape: name, value, name, value…). */
  rawHeaders: string[];
  body: Buffer;
}

export type SigV4Verdict =
  | { ok: true; canonicalRequest: string; stringToSign: string }
  | {
      ok: false;
      /** What is wrong, for test assertions and failure messages. */
      reason: string;
      /** The message AWS answers in the 403 body. */
      message: string;
      canonicalRequest?: string;
      stringToSign?: string;
    };

const ALGORITHM = 'AWS4-HMAC-SHA256';
const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 percent-encoding: every byte except A–Z a–z 0–9 - _ . ~, hex in upper case. */
export function uriEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Decodes %XX escapes; `+` stays a plus (RFC 3986 gives it no meaning), a stray % stays as is. */
function percentDecode(value: string): string {
  const bytes: Buffer[] = [];
  for (const part of value.split(/(%[0-9A-Fa-f]{2})/)) {
    if (/^%[0-9A-Fa-f]{2}$/.test(part)) bytes.push(Buffer.from([Number.parseInt(part.slice(1), 16)]));
    else if (part) bytes.push(Buffer.from(part, 'utf8'));
  }
  return Buffer.concat(bytes).toString('utf8');
}

/**
 * The canonical URI for services other than S3: the path normalized (empty, `.` and `..`
 * segments removed) and each segment URI-encoded once more than it was on the wire ("each
 * path segment must be URI-encoded twice": the client encoded it once to send it).
 */
export function canonicalUri(wirePath: string): string {
  const segments: string[] = [];
  for (const segment of wirePath.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  if (segments.length === 0) return '/';
  const trailing = /\/\.{0,2}$/.test(wirePath) ? '/' : '';
  return `/${segments.map(uriEncode).join('/')}${trailing}`;
}

/** Every parameter decoded then RFC 3986-encoded, sorted by name then value, `name=value` joined by `&`. */
export function canonicalQueryString(wireQuery: string): string {
  if (!wireQuery) return '';
  return wireQuery
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      const value = eq < 0 ? '' : pair.slice(eq + 1);
      return [uriEncode(percentDecode(name)), uriEncode(percentDecode(value))] as const;
    })
    .sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** Header values by lowercase name; repeated headers joined by commas; values trimmed and inner runs of spaces collapsed. */
function canonicalHeaderValues(rawHeaders: string[]): Map<string, string> {
  const values = new Map<string, string[]>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const value = rawHeaders[i + 1]!.trim().replace(/ +/g, ' ');
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  return new Map([...values].map(([name, list]) => [name, list.join(',')]));
}

/** The signing key: HMAC chain over "AWS4" + secret, the date, region, service and "aws4_request". */
export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), service), 'aws4_request');
}

function parseAmzDate(value: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
  return Number.isNaN(ms) ? undefined : ms;
}

function formatAmzDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/**
 * Verifies a request's AWS Signature Version 4 (Authorization header form) as AWS does:
 * rebuilds the canonical request and string to sign from the request as received, derives the
 * signing key from the expected secret and compares signatures; and checks the credential's
 * access key, date, region and service, the freshness of X-Amz-Date, that host (and the
 * session token, when one is expected) is signed, and that x-amz-content-sha256, when sent,
 * is the body's hash.
 */
export function verifySigV4(request: WireRequest, expected: SigV4Expectation): SigV4Verdict {
  const fail = (reason: string, message = SIGNATURE_MISMATCH, extra: { canonicalRequest?: string; stringToSign?: string } = {}): SigV4Verdict => ({
    ok: false,
    reason,
    message,
    ...extra,
  });
  const headers = canonicalHeaderValues(request.rawHeaders);
  const authorization = headers.get('authorization');
  if (!authorization) return fail('no Authorization header', 'Missing Authentication Token');
  const auth = new RegExp(`^${ALGORITHM} +Credential=([^,\\s]+), *SignedHeaders=([^,\\s]+), *Signature=([0-9a-f]{64})$`).exec(authorization);
  if (!auth)
    return fail(
      `malformed Authorization header: ${authorization}`,
      `Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' with ${ALGORITHM}.`,
    );
  const [, credential, signedHeaderList, signature] = auth as unknown as [string, string, string, string];

  const scope = credential.split('/');
  if (scope.length !== 5 || scope[4] !== 'aws4_request') return fail(`malformed credential ${credential}`, 'Credential should be scoped to a valid region.');
  const [accessKeyId, date, region, service] = scope as [string, string, string, string];
  if (accessKeyId !== expected.accessKeyId) return fail(`unknown access key ${accessKeyId}`, 'The security token included in the request is invalid.');
  if (region !== expected.region)
    return fail(`credential scoped to region ${region}, not ${expected.region}`, 'Credential should be scoped to a valid region.');
  if (service !== expected.service)
    return fail(`credential scoped to service ${service}, not ${expected.service}`, `Credential should be scoped to correct service: '${expected.service}'.`);

  const amzDate = headers.get('x-amz-date');
  if (!amzDate) return fail('no X-Amz-Date header', "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  const signedAt = parseAmzDate(amzDate);
  if (signedAt === undefined) return fail(`malformed X-Amz-Date ${amzDate}`, `Date must be in ISO-8601 'basic format'. Got '${amzDate}'.`);
  if (date !== amzDate.slice(0, 8))
    return fail(`credential date ${date} is not X-Amz-Date's ${amzDate.slice(0, 8)}`, 'Credential should be scoped to a valid date.');
  const now = (expected.now ?? Date.now)();
  const skew = expected.maxSkewMs ?? 5 * 60_000;
  if (signedAt < now - skew)
    return fail(
      `X-Amz-Date ${amzDate} is more than ${skew} ms before now`,
      `Signature expired: ${amzDate} is now earlier than ${formatAmzDate(now - skew)} (${formatAmzDate(now)} - 5 min.)`,
    );
  if (signedAt > now + skew)
    return fail(
      `X-Amz-Date ${amzDate} is more than ${skew} ms after now`,
      `Signature not yet current: ${amzDate} is still later than ${formatAmzDate(now + skew)} (${formatAmzDate(now)} + 5 min.)`,
    );

  const signedHeaders = signedHeaderList.split(';');
  if (signedHeaders.some((h, i) => h !== h.toLowerCase() || (i > 0 && signedHeaders[i - 1]! >= h)))
    return fail(`SignedHeaders not lowercase and sorted: ${signedHeaderList}`);
  if (!signedHeaders.includes('host')) return fail('host is not signed', "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  const missing = signedHeaders.filter((h) => !headers.has(h));
  if (missing.length) return fail(`signed headers not sent: ${missing.join(', ')}`);

  const token = headers.get('x-amz-security-token');
  if (expected.sessionToken !== undefined) {
    if (token === undefined)
      return fail('no X-Amz-Security-Token although the credentials are temporary', 'The security token included in the request is invalid.');
    if (token !== expected.sessionToken) return fail('X-Amz-Security-Token is not the session token', 'The security token included in the request is invalid.');
    if (!signedHeaders.includes('x-amz-security-token')) return fail('X-Amz-Security-Token is not signed');
  } else if (token !== undefined) {
    return fail('X-Amz-Security-Token sent with long-term credentials', 'The security token included in the request is invalid.');
  }

  const bodyHash = sha256Hex(request.body);
  const declaredHash = headers.get('x-amz-content-sha256');
  if (declaredHash !== undefined && declaredHash !== bodyHash)
    return fail(
      `x-amz-content-sha256 ${declaredHash} is not the body's hash ${bodyHash}`,
      'The provided x-amz-content-sha256 header does not match what was computed.',
    );
  const payloadHash = declaredHash ?? bodyHash;

  const q = request.target.indexOf('?');
  const wirePath = q < 0 ? request.target : request.target.slice(0, q);
  const wireQuery = q < 0 ? '' : request.target.slice(q + 1);
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalUri(wirePath),
    canonicalQueryString(wireQuery),
    signedHeaders.map((h) => `${h}:${headers.get(h)}\n`).join(''),
    signedHeaderList,
    payloadHash,
  ].join('\n');
  const credentialScope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, credentialScope, sha256Hex(canonicalRequest)].join('\n');
  const computed = createHmac('sha256', signingKey(expected.secretAccessKey, date, region, service))
    .update(stringToSign, 'utf8')
    .digest();
  if (!timingSafeEqual(computed, Buffer.from(signature, 'hex'))) return fail('signature mismatch', SIGNATURE_MISMATCH, { canonicalRequest, stringToSign });
  return { ok: true, canonicalRequest, stringToSign };
}

export interface FakeApsOptions extends SigV4Credentials {
  /** The real Prometheus that answers signed requests, e.g. RunningPrometheus.url. */
  upstream: string;
  region: string;
  /** The signing name (default `aps`, Amazon Managed Service for Prometheus'). */
  service?: string;
  /** The workspace id in the URL (default `ws-test`). */
  workspaceId?: string;
  /** The clock for the freshness check (ms since the epoch); Date.now by default. */
  now?: () => number;
}

export interface FakeApsRequest {
  method: string;
  /** The path as received, without the query. */
  path: string;
  /** The query string as received, without `?`. */
  query: string;
  authorized: boolean;
  /** Why it was refused. */
  reason?: string;
  /** The status answered. */
  status: number;
}

export interface FakeAps {
  /** The workspace's query URL, as AMP gives it: http://127.0.0.1:PORT/workspaces/ws-test (append /api/v1/query_range). */
  url: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** Every request, refused ones included. */
  requests: FakeApsRequest[];
  stop(): Promise<void>;
}

const PROXIED = new Set(['/api/v1/query', '/api/v1/query_range']);

export async function startFakeAps(options: FakeApsOptions): Promise<FakeAps> {
  const workspace = `/workspaces/${options.workspaceId ?? 'ws-test'}`;
  const expected: SigV4Expectation = {
    accessKeyId: options.accessKeyId,
    secretAccessKey: options.secretAccessKey,
    sessionToken: options.sessionToken,
    region: options.region,
    service: options.service ?? 'aps',
    now: options.now,
  };
  const requests: FakeApsRequest[] = [];
  const upstream = options.upstream.replace(/\/+$/, '');

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    const query = q < 0 ? '' : target.slice(q + 1);
    const method = req.method ?? 'GET';
    const record = (entry: Omit<FakeApsRequest, 'method' | 'path' | 'query'>) => requests.push({ method, path, query, ...entry });

    const verdict = verifySigV4({ method, target, rawHeaders: req.rawHeaders, body }, expected);
    if (!verdict.ok) {
      record({ authorized: false, reason: verdict.reason, status: 403 });
      return json(res, 403, { message: verdict.message }, verdict.message === SIGNATURE_MISMATCH ? 'InvalidSignatureException' : 'UnrecognizedClientException');
    }
    const api = path.startsWith(`${workspace}/`) ? path.slice(workspace.length) : undefined;
    if (api === undefined || !PROXIED.has(api)) {
      record({ authorized: true, reason: 'no such resource', status: 404 });
      return json(res, 404, { message: `No workspace query API at ${path}` }, 'ResourceNotFoundException');
    }
    if (method !== 'GET' && method !== 'POST') {
      record({ authorized: true, reason: `method ${method}`, status: 405 });
      return json(res, 405, { message: `${method} is not allowed` }, 'ValidationException');
    }
    const headers: Record<string, string> = {};
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    const answer = await fetch(`${upstream}${api}${q < 0 ? '' : `?${query}`}`, {
      method,
      headers,
      ...(method === 'POST' ? { body } : {}),
    });
    const text = Buffer.from(await answer.arrayBuffer());
    record({ authorized: true, status: answer.status });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(text);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) json(res, 502, { message: `upstream Prometheus: ${error.message}` }, 'InternalServerException');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}${workspace}`,
    origin,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown, errorType: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': errorType });
  res.end(JSON.stringify(body));
}
