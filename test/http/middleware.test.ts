import { beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from '../../shared/zod.js';
import { ADMIN_UP, ANY_ROLE } from '../../shared/auth/roles.js';
import { forgetSecrets } from '../../shared/config/secrets.js';
import { resetSettings } from '../../shared/config/env.js';
import { ConditionFailed, WriteConflict } from '../../shared/db/client.js';
import { Conflict } from '../../shared/http/errors.js';
import { checkBindings, createGroupHandler } from '../../shared/http/group-handler.js';
import { responseDrift } from '../../shared/http/response-check.js';
import { MAX_BODY_BYTES } from '../../shared/http/middleware.js';
import { gunzipSync } from 'node:zlib';
import { defineGroup, PreparedJson, Reply } from '../../shared/http/route.js';
import { apiEvent, call, lambdaContext, type Handler } from '../support/events.js';
import { useTestTables } from '../support/dynamo.js';
import { startFakeSecretsManager } from '../support/fake-secrets-manager.js';
import { captureLogLines } from '../support/log-lines.js';
import { signedToken, userToken, useTestJwtSecret } from '../support/tokens.js';

// A small route group exercising every part of the shared middleware stack.
const demoGroup = defineGroup({
  name: 'demo',
  tables: { users: 'read' }, // every authenticated request reads the caller's account (enforced as IAM would: shared/db/access.ts)
  routes: {
    open: { method: 'GET', path: '/api/demo/open', summary: 'public', auth: 'public', roles: [] },
    echo: {
      method: 'POST',
      path: '/api/demo/items/{item_id}',
      summary: 'echo',
      auth: 'user',
      roles: ANY_ROLE,
      params: z.object({ item_id: z.string().check(z.regex(/^i-\d+$/)) }),
      query: z.object({ page: z._default(z.coerce.number().check(z.int(), z.gte(1)), 1) }),
      body: z.strictObject({ name: z.string().check(z.minLength(2)), count: z.int().check(z.lte(10)) }),
    },
    adminOnly: { method: 'DELETE', path: '/api/demo/items/{item_id}', summary: 'admin', auth: 'user', roles: ADMIN_UP },
    ingest: { method: 'POST', path: '/api/demo/ingest', summary: 'ingest', auth: 'ingest', roles: ADMIN_UP, body: z.object({}) },
    crash: { method: 'GET', path: '/api/demo/crash', summary: 'crash', auth: 'public', roles: [] },
    conflict: { method: 'GET', path: '/api/demo/conflict', summary: 'conflict', auth: 'public', roles: [], problems: [409] },
    undeclared: { method: 'GET', path: '/api/demo/undeclared', summary: 'a 409 it does not declare', auth: 'public', roles: [] },
    bulk: {
      method: 'POST',
      path: '/api/demo/bulk',
      summary: 'bulk',
      auth: 'public',
      roles: [],
      maxBodyBytes: 2 * MAX_BODY_BYTES,
      body: z.object({ data: z.string() }),
    },
    // No 409 declared: a lost write race escaping as one can meet any route that writes (the check leaves it be).
    lostRace: { method: 'GET', path: '/api/demo/lost-race', summary: 'lost race', auth: 'public', roles: [] },
    busyItem: { method: 'GET', path: '/api/demo/busy-item', summary: 'busy item', auth: 'public', roles: [] },
    slow: { method: 'GET', path: '/api/demo/slow', summary: 'outlasts its invocation', auth: 'public', roles: [] },
    created: { method: 'POST', path: '/api/demo/created', summary: 'created', auth: 'public', roles: [] },
    big: { method: 'GET', path: '/api/demo/big', summary: 'big', auth: 'public', roles: [], headers: z.object({ 'x-prepared': z.optional(z.string()) }) },
    huge: {
      method: 'GET',
      path: '/api/demo/huge',
      summary: 'over what Lambda may answer',
      auth: 'public',
      roles: [],
      headers: z.object({ 'x-prepared': z.optional(z.string()), 'x-which': z.optional(z.enum(['huge', 'quoted', 'under'])) }),
      problems: [406],
    },
    drift: {
      method: 'GET',
      path: '/api/demo/drift',
      summary: 'drift',
      auth: 'public',
      headers: z.object({ 'x-extra': z.optional(z.string()), 'x-wrong': z.optional(z.string()) }),
      roles: [],
      response: z.object({ a: z.number(), nested: z.array(z.object({ b: z.string() })) }),
    },
  },
});

const BIG = { rows: Array.from({ length: 2000 }, (_, i) => ({ i, name: `row-${i}` })) };
const PREPARED = new PreparedJson(BIG);
/** ≈ 7.6 MB of JSON: over the 6 MB a Lambda function may answer. */
const HUGE = { rows: Array.from({ length: 70_000 }, (_, i) => ({ i, name: `row-${i}`, note: 'x'.repeat(80) })) };
/** 3.2 MB of JSON, but 6.4 MB as a Lambda result's body: every `\"` in it is escaped again. */
const QUOTED = { q: '"'.repeat(1_600_000) };
/** 5 MB of JSON that escaping hardly grows: under the limit. */
const UNDER = { s: 'x'.repeat(5_000_000) };
const HUGE_PREPARED = new PreparedJson(HUGE);

function demoHandler(): Handler {
  return createGroupHandler(demoGroup, {
    open: async () => ({ ok: true }),
    echo: async (req) => ({ params: req.params, query: req.query, body: req.body, user: req.principal?.username }),
    adminOnly: async () => undefined,
    ingest: async (req) => ({ principal: req.principal?.username ?? null }),
    crash: async () => {
      throw new Error('database password is hunter2');
    },
    conflict: async () => {
      throw new Conflict('Ticket exists already.', { ticket_key: 'OPS-1' });
    },
    undeclared: async () => {
      throw new Conflict('Taken meanwhile.');
    },
    bulk: async (req) => ({ length: req.body.data.length }),
    lostRace: async () => {
      throw new ConditionFailed([0]);
    },
    busyItem: async () => {
      throw new WriteConflict();
    },
    slow: () => new Promise((resolve) => setTimeout(() => resolve({ ok: true }), 500)),
    created: async () => new Reply(202, { status: 'running' }, { Location: '/api/demo/x' }),
    big: async (req) => (req.headers['x-prepared'] ? PREPARED : BIG),
    huge: async (req) => ({ huge: req.headers['x-prepared'] ? HUGE_PREPARED : HUGE, quoted: QUOTED, under: UNDER })[req.headers['x-which'] ?? 'huge'],
    // Drifts on purpose (the type checker would refuse it): the run-time check must catch what a cast let through.
    drift: async (req) =>
      ({ a: 1, nested: [{ b: 'x', ...(req.headers['x-extra'] ? { c: 2 } : {}) }], ...(req.headers['x-wrong'] ? { a: 'one' } : {}) }) as {
        a: number;
        nested: { b: string }[];
      },
  }) as Handler;
}

let handler: Handler;
let viewer: string;
let admin: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  handler = demoHandler();
  viewer = await userToken('viewer');
  admin = await userToken('admin');
});

const echo = (over: Partial<Parameters<typeof call>[1]> = {}) =>
  call(handler, {
    method: 'POST',
    path: '/api/demo/items/i-7',
    routeKey: 'POST /api/demo/items/{item_id}',
    params: { item_id: 'i-7' },
    headers: { authorization: `Bearer ${viewer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'disk', count: 3 }),
    ...over,
  });

function expectProblem(res: Awaited<ReturnType<typeof call>>, status: number) {
  expect(res.statusCode).toBe(status);
  expect(res.headers?.['Content-Type']).toBe('application/problem+json');
  expect(res.json).toMatchObject({ type: 'about:blank', status, title: expect.any(String), detail: expect.any(String) });
  expect(res.json?.request_id).toBeTruthy();
}

describe('group handler and middleware stack', () => {
  it('serves a public route as JSON with a request id and CORS', async () => {
    const res = await call(handler, { method: 'GET', path: '/api/demo/open', routeKey: 'GET /api/demo/open', headers: { origin: 'https://app.test' } });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({ ok: true });
    expect(res.headers?.['Content-Type']).toBe('application/json');
    expect(res.headers?.['X-Request-Id']).toBeTruthy();
    expect(res.headers?.['Access-Control-Allow-Origin']).toBe('*');
  });

  it('answers a HEAD as its GET without the body (the stack routes a HEAD beside each GET); a HEAD of no GET is a 404', async () => {
    const get = await call(handler, { method: 'GET', path: '/api/demo/open', routeKey: 'GET /api/demo/open' });
    const head = await handler(apiEvent({ method: 'HEAD', path: '/api/demo/open', routeKey: 'HEAD /api/demo/open' }), lambdaContext);
    expect(head.statusCode).toBe(200);
    expect(head.body).toBeUndefined();
    expect(head.headers?.['Content-Type']).toBe(get.headers?.['Content-Type']);
    // By the path too (a direct invoke's `$default`), and refused as its GET is.
    expect((await handler(apiEvent({ method: 'HEAD', path: '/api/demo/open', routeKey: '$default' }), lambdaContext)).statusCode).toBe(200);
    const crashed = await handler(apiEvent({ method: 'HEAD', path: '/api/demo/crash', routeKey: 'HEAD /api/demo/crash' }), lambdaContext);
    expect([crashed.statusCode, crashed.body]).toEqual([500, undefined]);
    expect((await handler(apiEvent({ method: 'HEAD', path: '/api/demo/created', routeKey: '$default' }), lambdaContext)).statusCode).toBe(404);
  });

  it('passes validated, coerced input and the caller to the handler', async () => {
    const res = await echo({ query: { page: '3' } });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({ params: { item_id: 'i-7' }, query: { page: 3 }, body: { name: 'disk', count: 3 }, user: 'viewer-user' });
  });

  it('finds the route from the path when the route key is not a declared one', async () => {
    const res = await echo({ routeKey: '$default', params: undefined });
    expect(res.statusCode).toBe(200);
    expect(res.json?.params).toEqual({ item_id: 'i-7' });
  });

  it('accepts a base64-encoded JSON body', async () => {
    const res = await echo({ body: Buffer.from(JSON.stringify({ name: 'xy', count: 1 })).toString('base64'), isBase64Encoded: true });
    expect(res.statusCode).toBe(200);
  });

  it('401 with WWW-Authenticate when the token is missing, malformed or forged', async () => {
    for (const authorization of [undefined, 'Basic abc', 'Bearer not-a-jwt', `Bearer ${viewer.slice(0, -4)}AAAA`]) {
      const res = await echo({ headers: authorization ? { authorization } : {} });
      expectProblem(res, 401);
      expect(res.headers?.['WWW-Authenticate']).toBe('Bearer');
      expect(res.headers?.['Access-Control-Allow-Origin']).toBe('*');
    }
  });

  it('401 for a well-signed token whose account does not exist', async () => {
    expectProblem(await echo({ headers: { authorization: `Bearer ${await signedToken('superadmin', 'ghost')}` } }), 401);
  });

  it('403 when the role is not allowed, before the handler runs', async () => {
    const res = await call(handler, {
      method: 'DELETE',
      path: '/api/demo/items/i-1',
      routeKey: 'DELETE /api/demo/items/{item_id}',
      headers: { authorization: `Bearer ${viewer}` },
    });
    expectProblem(res, 403);
    const ok = await call(handler, {
      method: 'DELETE',
      path: '/api/demo/items/i-1',
      routeKey: 'DELETE /api/demo/items/{item_id}',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(ok.statusCode).toBe(204);
    expect(ok.body).toBeUndefined();
  });

  it('415 for a body not declared JSON (a form, text/plain, none): what a page of another site can post without a preflight', async () => {
    // '' stands for no type at all (a Blob posted without one): the event helper adds application/json to a body otherwise.
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '']) {
      const res = await echo({ headers: { authorization: `Bearer ${viewer}`, 'content-type': type } });
      expectProblem(res, 415);
      expect(res.json?.detail, type).toBe('The request body must be sent with Content-Type: application/json.');
    }
    for (const type of ['application/json', 'Application/JSON; charset=utf-8', 'application/vnd.alertmanager+json']) {
      expect((await echo({ headers: { authorization: `Bearer ${viewer}`, 'content-type': type } })).statusCode, type).toBe(200);
    }
  });

  it('400 for a body that is not JSON', async () => {
    const res = await echo({ body: '{"name": "disk",' });
    expectProblem(res, 400);
    expect(res.json?.detail).toMatch(/not valid JSON/);
  });

  it('takes a lone surrogate escape as U+FFFD, as bytes that are not UTF-8; a pair or an escaped backslash is text', async () => {
    for (const [text, name] of [
      ['\\ud800 disk', '\uFFFD disk'],
      ['tail \\uDC00', 'tail \uFFFD'],
      ['\\uDBFF\\u0041b', '\uFFFDAb'],
      ['\\\\uD800\\uDC00', '\\uD800\uFFFD'],
      ['rocket \\ud83d\\ude80', 'rocket 🚀'],
      ['\\\\ud800', '\\ud800'],
    ]) {
      const res = await echo({ body: `{"name": "${text}", "count": 3}` });
      expect(res.statusCode, `${text}: ${res.body}`).toBe(200);
      expect(res.json?.body, text).toMatchObject({ name });
    }
    const bytes = Buffer.concat([Buffer.from('{"name": "bytes '), Buffer.from([0xff]), Buffer.from('", "count": 3}')]);
    const res = await echo({ body: bytes.toString('base64'), isBase64Encoded: true });
    expect(res.json?.body).toMatchObject({ name: 'bytes \uFFFD' });
  });

  it('413 for a body over 1 MB', async () => {
    const res = await echo({ body: JSON.stringify({ name: 'x'.repeat(MAX_BODY_BYTES), count: 1 }) });
    expectProblem(res, 413);
  });

  it('a route may declare a larger body limit (ingest: 6 MB), and 413 above it', async () => {
    const bulk = (length: number) =>
      call(handler, { method: 'POST', path: '/api/demo/bulk', routeKey: 'POST /api/demo/bulk', body: JSON.stringify({ data: 'x'.repeat(length) }) });
    const within = await bulk(MAX_BODY_BYTES + 100);
    expect(within.statusCode).toBe(200);
    expect(within.json).toEqual({ length: MAX_BODY_BYTES + 100 });
    expectProblem(await bulk(2 * MAX_BODY_BYTES), 413);
  });

  it('422 lists every invalid field with its location', async () => {
    const res = await echo({
      params: { item_id: 'nope' },
      query: { page: '0' },
      body: JSON.stringify({ name: 'x', count: 11, extra: true }),
    });
    expectProblem(res, 422);
    const locs = ((res.json?.errors ?? []) as { loc: unknown[] }[]).map((e) => e.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['path.item_id', 'query.page', 'body.name', 'body.count', 'body']));
    expect(res.json?.errors[0]).toMatchObject({ msg: expect.any(String), type: expect.any(String) });
    expect(res.json?.detail).toMatch(/^item_id: .+ \(and \d+ more\)$/);
  });

  it('passes a handler the headers its route declares, whatever their case, and refuses one that fails its schema (422 at header.<name>)', async () => {
    const huge = (headers: Record<string, string>) => call(handler, { method: 'GET', path: '/api/demo/huge', routeKey: 'GET /api/demo/huge', headers });
    expect((await huge({ 'X-Which': 'under' })).statusCode).toBe(200); // as a direct invoke may send it
    expectProblem(await huge({}), 406); // x-which absent: the huge answer
    const refused = await huge({ 'x-which': 'all' });
    expectProblem(refused, 422);
    expect(refused.json?.errors).toEqual([expect.objectContaining({ loc: ['header', 'x-which'] })]);
  });

  it('422 when a required body is missing', async () => {
    const res = await echo({ body: undefined });
    expectProblem(res, 422);
    expect(res.json?.errors[0].loc).toEqual(['body']);
  });

  it('a 500 says "Internal error" and the request id, never the exception text', async () => {
    const res = await call(handler, { method: 'GET', path: '/api/demo/crash', routeKey: 'GET /api/demo/crash' });
    expectProblem(res, 500);
    expect(res.body).not.toMatch(/hunter2|stack|at /);
    expect(res.json?.detail).toContain(res.json?.request_id);
  });

  it('typed errors keep their status and extra members', async () => {
    const res = await call(handler, { method: 'GET', path: '/api/demo/conflict', routeKey: 'GET /api/demo/conflict' });
    expectProblem(res, 409);
    expect(res.json?.ticket_key).toBe('OPS-1');
  });

  it('outside production a problem status the route does not declare is a 500 naming it, so the OpenAPI document stays exact', async () => {
    const undeclared = () => call(handler, { method: 'GET', path: '/api/demo/undeclared', routeKey: 'GET /api/demo/undeclared' });
    const res = await undeclared();
    expectProblem(res, 500);
    expect(res.json?.detail).toBe('GET /api/demo/undeclared answered 409 (Taken meanwhile.), a status it does not declare (shared/routes).');
    // Implied statuses need no declaration: a body that is not JSON (400), or fails validation (422).
    const notJson = await call(handler, { method: 'POST', path: '/api/demo/bulk', routeKey: 'POST /api/demo/bulk', body: '{not json' });
    expectProblem(notJson, 400);
    process.env.STAGE = 'prod';
    try {
      const event = apiEvent({ method: 'GET', path: '/api/demo/undeclared', routeKey: 'GET /api/demo/undeclared' });
      expect((await demoHandler()(event, lambdaContext)).statusCode).toBe(409); // production answers what was thrown
    } finally {
      process.env.STAGE = 'dev';
    }
  });

  it('a write that lost to a concurrent one is a 409, never a 500', async () => {
    for (const path of ['/api/demo/lost-race', '/api/demo/busy-item']) {
      const res = await call(handler, { method: 'GET', path, routeKey: `GET ${path}` });
      expectProblem(res, 409);
      expect(res.json?.detail).toMatch(/changed by a concurrent request/);
    }
  });

  it('a request that outlasts its invocation (middy answers before Lambda ends it) is a 503 with Retry-After, never a 500', async () => {
    const event = apiEvent({ method: 'GET', path: '/api/demo/slow', routeKey: 'GET /api/demo/slow' });
    const res = await handler(event, { ...lambdaContext, getRemainingTimeInMillis: () => 60 } as typeof lambdaContext);
    expect(res.statusCode).toBe(503);
    expect(res.headers?.['Retry-After']).toMatch(/^\d+$/);
    expect(JSON.parse(res.body!).detail).toMatch(/ran out of time/);
  });

  it('outside production an answer that drifts from its response schema is a 500 naming the paths (undeclared fields too)', async () => {
    const drift = (headers: Record<string, string> = {}) => call(handler, { method: 'GET', path: '/api/demo/drift', routeKey: 'GET /api/demo/drift', headers });
    expect((await drift()).statusCode).toBe(200);
    expect((await drift({ 'x-extra': '1' })).statusCode).toBe(500);
    expect((await drift({ 'x-wrong': '1' })).statusCode).toBe(500);
    process.env.STAGE = 'prod';
    try {
      const event = apiEvent({ method: 'GET', path: '/api/demo/drift', routeKey: 'GET /api/demo/drift', headers: { 'x-extra': '1' } });
      expect((await demoHandler()(event, lambdaContext)).statusCode).toBe(200);
    } finally {
      process.env.STAGE = 'dev';
    }
  });

  it('names the drift: the failing path, or the undeclared fields', () => {
    const schema = z.object({ a: z.number(), list: z.array(z.object({ b: z.string() })), map: z.record(z.string(), z.number()) });
    expect(responseDrift(schema, { a: 1, list: [{ b: 'x' }], map: { k: 1 } })).toBeNull();
    expect(responseDrift(schema, { a: 1, list: [{ b: 'x', c: 1 }], map: {}, d: 2 })).toBe('undeclared fields list[0].c, d');
    expect(responseDrift(schema, { a: 'x', list: [], map: {} })).toMatch(/^a: /);
  });

  it('a Reply sets status and headers', async () => {
    const res = await call(handler, { method: 'POST', path: '/api/demo/created', routeKey: 'POST /api/demo/created' });
    expect(res.statusCode).toBe(202);
    expect(res.headers?.Location).toBe('/api/demo/x');
  });

  it('404 for a path the group does not declare', async () => {
    const res = await call(handler, { method: 'GET', path: '/api/demo/missing' });
    expectProblem(res, 404);
  });

  /** The demo ingest route as a sender calls it, with `token` as its bearer. */
  const sendIngest = (token: string) =>
    call(handler, { method: 'POST', path: '/api/demo/ingest', routeKey: 'POST /api/demo/ingest', headers: { authorization: `Bearer ${token}` }, body: '{}' });

  /** INGEST_TOKEN_ARN names `arn` on the fake Secrets Manager at `endpoint` (with `extra` settings); returns what puts the environment back. */
  function useIngestSecret(endpoint: string, arn: string, extra: Record<string, string> = {}): () => void {
    const settings = {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint,
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      INGEST_TOKEN_ARN: arn,
      ...extra,
    };
    const before = Object.fromEntries(Object.keys(settings).map((v) => [v, process.env[v]]));
    Object.assign(process.env, settings);
    return () => {
      for (const [v, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[v];
        else process.env[v] = value;
      }
    };
  }

  it('ingest routes take the static INGEST_TOKEN or an admin JWT', async () => {
    process.env.INGEST_TOKEN = 'ingest-secret-token-0123456789ab';
    forgetSecrets();
    try {
      const send = (token: string) =>
        call(handler, {
          method: 'POST',
          path: '/api/demo/ingest',
          routeKey: 'POST /api/demo/ingest',
          headers: { authorization: `Bearer ${token}` },
          body: '{}',
        });
      expect((await send('ingest-secret-token-0123456789ab')).json).toEqual({ principal: null });
      expect((await send(admin)).json).toEqual({ principal: 'admin-user' });
      expectProblem(await send(viewer), 403);
      expectProblem(await send('ingest-secret-token-wrong'), 401);
    } finally {
      delete process.env.INGEST_TOKEN;
      forgetSecrets();
    }
  });

  it('a rotated INGEST_TOKEN: a sender of the new one is let in at once (a mismatch reads the secret again, at most every 5 s), the old one is refused; a stored newline is no part of it', async () => {
    const arn = 'arn:aws:secretsmanager:local:000000000000:secret:ingest-rotated';
    const secrets = { [arn]: 'first-ingest-token-0123456789abc' };
    const manager = await startFakeSecretsManager(secrets);
    // Set before the clock stops: a change of the environment forgets what is held (test/support/settings-reset.ts).
    const restore = useIngestSecret(manager.endpoint, arn);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await sendIngest('first-ingest-token-0123456789abc')).json).toEqual({ principal: null });
      // Put anew from a file, as the README's rotation does (`--secret-string file://t`): with its newline, which senders do not send.
      secrets[arn] = 'second-ingest-token-0123456789ab\n';
      expectProblem(await sendIngest('second-ingest-token-0123456789ab'), 401); // the value held was read just now
      expect((await sendIngest('first-ingest-token-0123456789abc')).json).toEqual({ principal: null });
      vi.setSystemTime(Date.now() + 6_000);
      expect((await sendIngest('second-ingest-token-0123456789ab')).json).toEqual({ principal: null });
      expectProblem(await sendIngest('first-ingest-token-0123456789abc'), 401);
      expect(manager.calls).toHaveLength(2);
    } finally {
      vi.useRealTimers();
      restore();
      await manager.close();
    }
  });

  it('a static token shorter than 32 characters (a secret put by hand on AWS) lets no sender in, and the log says why once', async () => {
    const arn = 'arn:aws:secretsmanager:local:000000000000:secret:ingest-short';
    const manager = await startFakeSecretsManager({ [arn]: 'guessable-token' });
    const restore = useIngestSecret(manager.endpoint, arn, { LOG_LEVEL: 'error' });
    try {
      const logs = captureLogLines();
      expectProblem(await sendIngest('guessable-token'), 401);
      expectProblem(await sendIngest('guessable-token'), 401);
      expect((await sendIngest(admin)).json).toEqual({ principal: 'admin-user' });
      const said = logs.stop().filter((line) => line.secret === 'INGEST_TOKEN');
      expect(said.map((line) => line.message)).toEqual(['INGEST_TOKEN must be at least 32 characters: no sender is let in by it until it is set anew']);
      expect(JSON.stringify(said)).not.toContain('guessable-token');
    } finally {
      restore();
      await manager.close();
    }
  });

  it('answers CORS preflight without authentication', async () => {
    const res = await call(handler, {
      method: 'OPTIONS',
      path: '/api/demo/items/i-1',
      headers: { origin: 'https://app.test', 'access-control-request-method': 'DELETE' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers?.['Access-Control-Allow-Methods']).toContain('DELETE');
    expect(res.headers?.['Access-Control-Allow-Headers']).toContain('Authorization');
    expect(res.headers?.['Access-Control-Allow-Headers']).toContain('If-Match');
    expect(res.headers?.['Access-Control-Expose-Headers']).toContain('ETag');
  });
});

describe('compression', () => {
  const get = (headers: Record<string, string>) => call(handler, { method: 'GET', path: '/api/demo/big', routeKey: 'GET /api/demo/big', headers });

  it('gzips a large answer when the client accepts gzip, and only then', async () => {
    const variants: Record<string, string>[] = [{}, { 'x-prepared': '1' }];
    for (const prepared of variants) {
      const event = apiEvent({
        method: 'GET',
        path: '/api/demo/big',
        routeKey: 'GET /api/demo/big',
        headers: { 'accept-encoding': 'gzip, deflate, br', ...prepared },
      });
      const zipped = await handler(event, lambdaContext);
      expect(zipped.isBase64Encoded).toBe(true);
      expect(zipped.headers?.['Content-Encoding']).toBe('gzip');
      expect(zipped.headers?.Vary).toBe('Accept-Encoding');
      const text = gunzipSync(Buffer.from(zipped.body!, 'base64')).toString();
      expect(JSON.parse(text)).toEqual(BIG);
      expect(zipped.body!.length).toBeLessThan(text.length / 3);
    }
    const plain = await get({});
    expect(plain.headers?.['Content-Encoding']).toBeUndefined();
    expect(plain.json).toEqual(BIG);
    const small = await call(handler, { method: 'GET', path: '/api/demo/open', routeKey: 'GET /api/demo/open', headers: { 'accept-encoding': 'gzip' } });
    expect(small.headers?.['Content-Encoding']).toBeUndefined();
  });

  it('reads Accept-Encoding weights: gzip;q=0 refuses gzip, * admits it unless gzip is named', async () => {
    const cases: [string, boolean][] = [
      ['gzip;q=0, identity', false],
      ['identity, gzip; q=0.0', false],
      ['GZIP;Q=1', true],
      ['deflate, gzip;q=0.001', true],
      ['x-gzip', true],
      ['*;q=0.5', true],
      ['*, gzip;q=0', false],
      ['identity, *;q=0', false],
      ['br', false],
      ['gzipped', false],
    ];
    for (const [acceptEncoding, zipped] of cases) {
      const answer = await handler(
        apiEvent({ method: 'GET', path: '/api/demo/big', routeKey: 'GET /api/demo/big', headers: { 'accept-encoding': acceptEncoding } }),
        lambdaContext,
      );
      expect([acceptEncoding, answer.headers?.['Content-Encoding']]).toEqual([acceptEncoding, zipped ? 'gzip' : undefined]);
    }
  });

  it('an answer over what Lambda may return is gzipped when accepted, else refused with a 406 saying how to ask', async () => {
    const huge = (headers: Record<string, string>) => call(handler, { method: 'GET', path: '/api/demo/huge', routeKey: 'GET /api/demo/huge', headers });
    for (const [which, answer] of [
      ['huge', HUGE],
      ['quoted', QUOTED],
    ] as const) {
      for (const prepared of (which === 'huge' ? [{}, { 'x-prepared': '1' }] : [{}]) as Record<string, string>[]) {
        for (const identity of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'deflate, br' }] as Record<string, string>[]) {
          const refused = await huge({ 'x-which': which, ...prepared, ...identity });
          expect(refused.statusCode, which).toBe(406);
          expect(refused.headers?.['Content-Type']).toBe('application/problem+json');
          expect(refused.json).toMatchObject({ status: 406, title: 'Not Acceptable' });
          expect(refused.json?.detail).toMatch(
            /^This answer is \d+\.\d MB uncompressed, more than a Lambda function may return \(6 MB\)\. .*Accept-Encoding: gzip/,
          );
        }
        const zipped = await handler(
          apiEvent({
            method: 'GET',
            path: '/api/demo/huge',
            routeKey: 'GET /api/demo/huge',
            headers: { 'x-which': which, ...prepared, 'accept-encoding': 'gzip' },
          }),
          lambdaContext,
        );
        expect(zipped.statusCode).toBe(200);
        expect(zipped.headers?.['Content-Encoding']).toBe('gzip');
        expect(JSON.parse(gunzipSync(Buffer.from(zipped.body!, 'base64')).toString())).toEqual(answer);
      }
    }
    // What escaping does not push over the limit is answered as it is.
    const under = await huge({ 'x-which': 'under' });
    expect(under.statusCode).toBe(200);
    expect(under.body!.length).toBeGreaterThan(5_000_000);
    // A prepared answer is measured once.
    const answer = new PreparedJson({ a: 1 });
    expect(answer.escapedBytes(() => 1)).toBe(1);
    expect(answer.escapedBytes(() => 2)).toBe(1);
  });

  it('serializes a prepared answer once and reuses its gzip', async () => {
    const gzipOnce = PREPARED.gzipped(() => Buffer.from('first'));
    expect(PREPARED.gzipped(() => Buffer.from('second'))).toBe(gzipOnce);
    expect(PREPARED.text).toBe(JSON.stringify(BIG));
  });
});

describe('CORS in production', () => {
  it('allows only the CORS_ORIGINS allowlist, also on errors and preflight', async () => {
    Object.assign(process.env, { STAGE: 'prod', CORS_ORIGINS: 'https://ops.example.com, https://admin.example.com' });
    resetSettings();
    try {
      const prod = demoHandler();
      const get = (origin: string) => call(prod, { method: 'GET', path: '/api/demo/open', routeKey: 'GET /api/demo/open', headers: { origin } });
      expect((await get('https://ops.example.com')).headers?.['Access-Control-Allow-Origin']).toBe('https://ops.example.com');
      expect((await get('https://admin.example.com')).headers?.['Access-Control-Allow-Origin']).toBe('https://admin.example.com');
      expect((await get('https://evil.example.net')).headers?.['Access-Control-Allow-Origin']).toBeUndefined();
      const error = await call(prod, {
        method: 'GET',
        path: '/api/demo/crash',
        routeKey: 'GET /api/demo/crash',
        headers: { origin: 'https://ops.example.com' },
      });
      expect(error.headers?.['Access-Control-Allow-Origin']).toBe('https://ops.example.com');
      const preflight = await call(prod, { method: 'OPTIONS', path: '/api/demo/open', headers: { origin: 'https://evil.example.net' } });
      expect(preflight.headers?.['Access-Control-Allow-Origin']).toBeUndefined();
    } finally {
      Object.assign(process.env, { STAGE: 'dev', CORS_ORIGINS: '' });
      resetSettings();
    }
  });

  it('an answer under the allowlist varies by Origin: one origin, gzip, errors, preflight, refusals', async () => {
    Object.assign(process.env, { STAGE: 'prod', CORS_ORIGINS: 'https://ops.example.com' });
    resetSettings();
    try {
      const prod = demoHandler();
      const origin = 'https://ops.example.com';
      const open = await call(prod, { method: 'GET', path: '/api/demo/open', routeKey: 'GET /api/demo/open', headers: { origin } });
      expect(open.headers?.['Access-Control-Allow-Origin']).toBe(origin);
      expect(open.headers?.Vary).toBe('Origin');
      const zipped = await prod(
        apiEvent({ method: 'GET', path: '/api/demo/big', routeKey: 'GET /api/demo/big', headers: { origin, 'accept-encoding': 'gzip' } }),
        lambdaContext,
      );
      expect(zipped.headers?.Vary).toBe('Accept-Encoding, Origin');
      const error = await call(prod, { method: 'GET', path: '/api/demo/crash', routeKey: 'GET /api/demo/crash', headers: { origin } });
      expect(error.headers?.Vary).toBe('Origin');
      const preflight = await call(prod, { method: 'OPTIONS', path: '/api/demo/open', headers: { origin } });
      expect(preflight.headers?.['Access-Control-Allow-Origin']).toBe(origin);
      expect(preflight.headers?.Vary).toBe('Origin');
      const refused = await call(prod, {
        method: 'GET',
        path: '/api/demo/open',
        routeKey: 'GET /api/demo/open',
        headers: { origin: 'https://evil.example.net' },
      });
      expect(refused.headers?.['Access-Control-Allow-Origin']).toBeUndefined();
      expect(refused.headers?.Vary).toBe('Origin');
    } finally {
      Object.assign(process.env, { STAGE: 'dev', CORS_ORIGINS: '' });
      resetSettings();
    }
  });

  it('any origin in development: `*`, no Vary by Origin', async () => {
    const open = await call(handler, { method: 'GET', path: '/api/demo/open', routeKey: 'GET /api/demo/open', headers: { origin: 'https://x.example' } });
    expect(open.headers?.['Access-Control-Allow-Origin']).toBe('*');
    expect(open.headers?.Vary).toBeUndefined();
  });
});

describe('handler binding', () => {
  it('refuses a group with a missing or an unknown binding', () => {
    const noop = async () => ({});
    expect(() => checkBindings(demoGroup, { open: noop })).toThrow(/missing handlers \[echo, adminOnly/);
    const all = Object.fromEntries(Object.keys(demoGroup.routes).map((k) => [k, noop]));
    expect(() => checkBindings(demoGroup, { ...all, bogus: noop })).toThrow(/unknown bindings \[bogus\]/);
    expect(() => checkBindings(demoGroup, all)).not.toThrow();
  });
});
