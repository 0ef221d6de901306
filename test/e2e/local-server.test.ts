import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_POLICY } from '../../infra/web/csp.js';
import { linkSettings } from '../../shared/config/links.js';
import { routeKey } from '../../shared/http/route.js';
import { allRoutes } from '../../shared/routes/all-groups.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

let service: LocalService;
let superadmin: string;

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'e2e-admin-password' });
  superadmin = await userToken('superadmin');
});

afterAll(async () => {
  await service?.stop();
});

const api = (path: string, init: RequestInit = {}) => fetch(`${service.url}${path}`, init);
const FALLBACK_DETAIL = 'No API route matches this path.';

describe('local server', () => {
  it('answers the health check without authentication', async () => {
    const res = await api('/api/health-check');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', service: 'fleet-health' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a HEAD of an API route as its GET without the body, authentication included; a HEAD of no GET is a 404', async () => {
    const get = await api('/api/health-check');
    const head = await api('/api/health-check', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
    expect((await api('/api/fleet/kpis', { method: 'HEAD' })).status).toBe(401);
    expect((await api('/api/fleet/kpis', { method: 'HEAD', headers: { authorization: `Bearer ${superadmin}` } })).status).toBe(200);
    expect((await api('/api/auth/login', { method: 'HEAD' })).status).toBe(404);
  });

  it('names itself in links (mail, tickets, the embed origin check) when APP_URL is not set: its own port, not 3000', async () => {
    expect(service.url).not.toBe('http://localhost:3000');
    expect(linkSettings().appUrl).toBe(service.url);
  });

  it('serves the OpenAPI document', async () => {
    const res = await api('/api/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/api/fleet/scores']).toBeDefined();
  });

  it('answers 404 problem+json for an unknown /api path, any method', async () => {
    for (const [method, path] of [
      ['GET', '/api/nope'],
      ['POST', '/api/fleet/scores/extra'],
      ['DELETE', '/api/issues'],
    ]) {
      const res = await api(path!, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 404, title: 'Not Found', detail: FALLBACK_DETAIL });
    }
  });

  it('serves the SPA entry document for any other GET without an extension (client-side routing), as CloudFront does', async () => {
    for (const path of ['/', '/clusters/abc/history', '/index.html']) {
      const res = await api(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('<title>Fleet Health');
    }
    expect((await api('/settings', { method: 'POST' })).status).toBe(405);
    // A missing file is a 404, not the entry document: a tab open across a rebuild asking for an old chunk gets an
    // answer it can tell is missing, not HTML for a module script. Nothing outside the console's folder is served.
    for (const path of ['/assets/index-gone.js', '/assets/page.css', '/../../package.json']) {
      const res = await api(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('application/problem+json');
      expect(await res.text(), path).not.toContain('fleet-health');
    }
  });

  it("lets a browser keep the console's hashed files and sends them gzipped, as CloudFront does; the entry is revalidated", async () => {
    const entry = await api('/');
    expect(entry.headers.get('cache-control')).toBe('no-cache');
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(await entry.text())?.[1];
    expect(script).toBeDefined();
    const zipped = await api(script!, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(zipped.status).toBe(200);
    expect(zipped.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toBe('Accept-Encoding');
    const plain = await api(script!, { headers: { 'Accept-Encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    // fetch unzips what it is sent: the same script either way.
    expect(await zipped.text()).toBe(await plain.text());
  });

  it('sends the console its CSP, framing only the configured BI server', async () => {
    const policy = async () => (await api('/fleet')).headers.get('content-security-policy');
    expect(await policy()).toBe(`${BUILT_POLICY.replace('frame-src *', "frame-src 'none'")}; frame-ancestors 'none'`);
    const before = { ...process.env };
    Object.assign(process.env, { EMBED_HOST: 'http://127.0.0.1:19999/', EMBED_CLIENT_ID: 'fleet', EMBED_CLIENT_SECRET: 'secret' });
    try {
      expect(await policy()).toBe(`${BUILT_POLICY.replace('frame-src *', 'frame-src http://127.0.0.1:19999')}; frame-ancestors 'none'`);
      // A host with a path is refused (the embed pages are at the origin's root): no frame is allowed.
      process.env.EMBED_HOST = 'http://127.0.0.1:19999/bi/';
      expect(await policy()).toContain("frame-src 'none'");
    } finally {
      for (const name of ['EMBED_HOST', 'EMBED_CLIENT_ID', 'EMBED_CLIENT_SECRET']) if (before[name] === undefined) delete process.env[name];
    }
    expect(await policy()).toContain("frame-src 'none'");
  });

  it('answers 400 problem+json for an API or file path that is not valid percent-encoding', async () => {
    for (const path of ['/api/issues/%ff', '/api/%zz', '/assets/%ff.js']) {
      const res = await api(path);
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 400, title: 'Bad Request' });
    }
  });

  it('serves the app for a console path that is not valid percent-encoding, as CloudFront rewrites any path without an extension', async () => {
    for (const path of ['/%ff', '/clusters/%E0%A4%A']) {
      const res = await api(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('<div id="root">');
    }
  });

  // fetch() resolves dot segments and backslashes before sending; node:http sends the path as written.
  const send = (path: string) =>
    new Promise<{ status: number; type: string | undefined; body: string }>((done, fail) => {
      const { hostname, port } = new URL(service.url);
      const req = request({ hostname, port, path, headers: { Authorization: `Bearer ${superadmin}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => done({ status: res.statusCode!, type: res.headers['content-type'], body }));
      });
      req.on('error', fail);
      req.end();
    });

  it('refuses an API path with dot segments instead of resolving it into another route', async () => {
    // Those that climb out of /api/ too: not the console's page.
    for (const path of [
      '/api/clusters/../metrics',
      '/api/issues/./kpis',
      '/api/issues/%2E%2e/fleet/kpis',
      '/api/fleet/kpis/..',
      '/api/fleet/kpis/.?days=1',
      '/api/../index.html',
      '/api/%2e%2e/settings',
      '/api/./../x',
    ]) {
      const res = await send(path);
      expect(res.status, path).toBe(400);
      expect(res.type).toBe('application/problem+json');
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, detail: expect.stringContaining('".."') });
    }
    // Dots inside a segment are a value, not a dot segment.
    expect((await send('/api/fleet/kpis?x=..')).status).toBe(200);
    expect((await send('/api/issues/..x')).status).toBe(404);
  });

  it('routes the path as sent, as API Gateway does: no backslash read as a slash, no second origin, no trailing slash dropped', async () => {
    for (const path of ['/api/clusters/x\\..\\..\\metrics', '//evil/api/metrics', '//[/api/x']) {
      const res = await send(path);
      expect(res.status, path).toBe(400);
      expect(res.type, path).toBe('application/problem+json');
      expect(JSON.parse(res.body), path).toMatchObject({ status: 400, detail: expect.stringContaining('not a plain path') });
    }
    for (const path of ['/api/issues/', '/api/metrics/', '/api/issues//evidence']) {
      const res = await send(path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body), path).toMatchObject({ detail: FALLBACK_DETAIL });
    }
  });

  it('passes a body to the function as an HTTP API does: as text only for text and JSON types, else base64 (a third larger)', async () => {
    // Just under Lambda's 6 MB event as JSON text; the same body as a form is base64, over it: 413 before any parsing.
    const body = JSON.stringify({ alerts: [], padding: 'x'.repeat(4_800_000) });
    const post = (contentType: string) =>
      api('/api/ingest/alerts', { method: 'POST', headers: { Authorization: `Bearer ${service.ingestToken}`, 'Content-Type': contentType }, body });
    expect((await post('application/json; charset=utf-8')).status).not.toBe(413);
    for (const contentType of ['application/x-www-form-urlencoded', 'application/vnd.alertmanager+json']) {
      const res = await post(contentType);
      expect(res.status, contentType).toBe(413);
      expect(await res.json(), contentType).toMatchObject({ detail: expect.stringContaining('base64') });
    }
  });

  it("the server's own answers say what is allowed and are not cached; a body declared over 10 MB is refused before it is sent", async () => {
    const post = await api('/', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(post.headers.get('cache-control')).toBe('no-store');
    // Only the headers go out: were the server to wait for the body declared, no answer would come. With
    // Expect: 100-continue (curl's, for a large body), a body too large is not asked for; one within the limit is.
    const declare = (bytes: number, expect: boolean, body?: string) =>
      new Promise<{ status: number; reason: string; connection: string | undefined; body: string; continued: boolean }>((done, fail) => {
        const { hostname, port } = new URL(service.url);
        const headers = {
          'Content-Type': 'application/json',
          'Content-Length': String(bytes),
          Authorization: `Bearer ${service.ingestToken}`,
          ...(expect ? { Expect: '100-continue' } : {}),
        };
        let continued = false;
        const req = request({ hostname, port, path: '/api/ingest/alerts', method: 'POST', headers }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            done({ status: res.statusCode!, reason: res.statusMessage!, connection: res.headers.connection, body: text, continued });
            req.destroy();
          });
        });
        req.on('continue', () => {
          continued = true;
          req.end(body);
        });
        req.on('error', fail);
        req.flushHeaders();
      });
    for (const expect100 of [false, true]) {
      const answer = await declare(20 * 1024 * 1024, expect100);
      // The status line says what the body's title says (RFC 9110's name; Node's own is "Payload Too Large").
      expect(answer, `Expect: 100-continue ${expect100}`).toMatchObject({ status: 413, reason: 'Content Too Large', connection: 'close', continued: false });
      expect(JSON.parse(answer.body)).toMatchObject({ status: 413, title: 'Content Too Large' });
    }
    const small = '{"version":"4","alerts":[]}';
    expect(await declare(small.length, true, small)).toMatchObject({ status: 200, continued: true });
  });

  it('answers a CORS preflight on any API path', async () => {
    const res = await api('/api/issues/abc', {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'PATCH', 'Access-Control-Request-Headers': 'authorization' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('PATCH');
  });

  it('answers 401 with WWW-Authenticate on a protected route without a token', async () => {
    const res = await api('/api/fleet/scores', { headers: { Origin: 'http://localhost:5173' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('a query parameter sent twice, or a number not in decimal, is refused saying so, not as a number it never was; a list takes repeats', async () => {
    const get = (query: string) => api(`/api/issues?${query}`, { headers: { authorization: `Bearer ${superadmin}` } });
    for (const query of ['days=1&days=2', 'page=1&page=2', 'status=Ongoing&status=Resolved']) {
      const res = await get(query);
      expect(res.status, query).toBe(422);
      const body = (await res.json()) as { detail: string };
      expect(body.detail, query).toMatch(/^(days|page|status): sent 2 times, which reads as one comma-separated value \(.+\): send it once$/);
    }
    // a text filter sent twice filtered by the joined text ("A,B"), an empty page: refused too
    for (const query of ['customer=A&customer=B', 'search=x&search=y&search=z']) {
      const res = await get(query);
      expect(res.status, query).toBe(422);
      expect(((await res.json()) as { detail: string }).detail, query).toMatch(
        /^(customer|search): sent [23] times, which reads as one text \(".+"\): send it once$/,
      );
    }
    expect((await get('customer=A%2CB')).status).toBe(200);
    // a number in another base is not what the client meant: refused, where 0x10 read as 16
    for (const query of ['page_size=0x10', 'days=0b11', 'page=10abc']) {
      const res = await get(query);
      expect(res.status, query).toBe(422);
      expect(((await res.json()) as { detail: string }).detail, query).toMatch(/^(page_size|days|page): must be a decimal number$/);
    }
    expect((await get('page_size=1e1&days=0.25')).status).toBe(200);
    // once each, and a list's values repeated: as before
    expect((await get('days=1&page=1')).status).toBe(200);
    expect((await get('severities=Critical&severities=Warning')).status).toBe(200);
  });

  it('answers 400 for a malformed JSON body through the server', async () => {
    const res = await api('/api/chat/message', {
      method: 'POST',
      headers: { Authorization: `Bearer ${superadmin}`, 'Content-Type': 'application/json' },
      body: '{"message":',
    });
    expect(res.status).toBe(400);
  });

  it('reaches every declared route through the server', async () => {
    const sample: Record<string, string> = { email: 'someone@example.com' };
    for (const { group, route } of allRoutes()) {
      if (route.method === 'ANY') continue;
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => sample[name] ?? 'sample-id');
      const res = await api(path, {
        method: route.method,
        // a fresh token each time: the walk includes logout, which revokes the token it is sent with
        headers: { Authorization: `Bearer ${await userToken('superadmin')}`, 'Content-Type': 'application/json' },
        body: route.body ? '{}' : undefined,
      });
      const label = `${routeKey(route)} (${group.name})`;
      // GET /api/metrics answers Prometheus text; every other answer (and every problem) is JSON.
      const body = (route.contentType && res.status === 200 ? {} : await res.json()) as { detail?: string; status?: number };
      expect(body.detail, label).not.toBe(FALLBACK_DETAIL);
      expect([401, 403], label).not.toContain(res.status);
      expect(res.headers.get('x-request-id'), label).toBeTruthy();
      if (res.status >= 400) expect(res.headers.get('content-type'), label).toBe('application/problem+json');
    }
  });
});
