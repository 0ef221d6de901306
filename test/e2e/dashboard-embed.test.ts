// Dashboard embed (issue 11) through the local server: acquire-session and
// generate-tokens against a local BI server speaking the cookieless-embed API
// (test/support/fake-embed.ts), the answers checked against the route's
// response schemas, the reference token absent from every answer and log line.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.LOG_LEVEL = 'debug';
});

import { forgetEmbedLogins } from '../../shared/embed/provider.js';
import { dashboardEmbedGroup } from '../../shared/routes/dashboard-embed.js';
import type { LocalService } from '../../infra/local/service.js';
import { handler as embedHandler } from '../../functions/dashboard-embed.js';
import { call as callHandler } from '../support/events.js';
import { startFakeEmbed, type FakeEmbed } from '../support/fake-embed.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

const CLIENT_ID = 'e2e-embed-client';
const CLIENT_SECRET = 'e2e-embed-S3CRET-fedcba9876543210';
const ORIGIN = 'http://localhost:5173';
const UA = 'Mozilla/5.0 EmbedE2E/2.0';

let service: LocalService;
let fake: FakeEmbed;
let viewer: string;
let admin: string;
const bodies: string[] = [];
const logLines: string[] = [];
const writes: { mockRestore(): void }[] = [];

beforeAll(async () => {
  fake = await startFakeEmbed({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, slowMs: 1_000 });
  service = await startTestService({ adminPassword: 'embed-admin-password', demoClusters: 0 });
  viewer = await userToken('viewer', 'embed-viewer');
  admin = await userToken('admin', 'embed-admin');
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    writes.push(
      vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
        logLines.push(String(chunk));
        return original(chunk, ...rest);
      }) as typeof stream.write),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const w of writes) w.mockRestore();
  for (const name of Object.keys(process.env)) if (name.startsWith('EMBED_')) delete process.env[name];
  await service?.stop();
  await fake?.close();
});

afterEach(() => {
  const text = bodies.join('') + logLines.join('');
  for (const value of [...fake.referenceTokens(), CLIENT_SECRET]) expect(text).not.toContain(value);
});

const configure = () => {
  Object.assign(process.env, { EMBED_HOST: fake.host, EMBED_CLIENT_ID: CLIENT_ID, EMBED_CLIENT_SECRET: CLIENT_SECRET, EMBED_TIMEOUT_MS: '500' });
  forgetEmbedLogins();
};

async function call(token: string, method: string, path: string, options: { body?: unknown; origin?: string | null } = {}) {
  const origin = options.origin === undefined ? ORIGIN : options.origin;
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      'User-Agent': UA,
      ...(origin ? { Origin: origin } : {}),
      ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, body: JSON.parse(text) as any, contentType: res.headers.get('content-type') };
}

const acquire = (token = viewer, origin?: string | null) => call(token, 'POST', '/api/dashboard-embed/acquire-session', { origin });
const generate = (body: unknown, token = viewer) => call(token, 'PUT', '/api/dashboard-embed/generate-tokens', { body });

function matchesSchema(route: keyof typeof dashboardEmbedGroup.routes, body: unknown) {
  const parsed = dashboardEmbedGroup.routes[route].response.safeParse(body);
  expect(parsed.error?.issues ?? []).toEqual([]);
}

describe('not configured', () => {
  it('acquire-session and generate-tokens are 503 problems', async () => {
    for (const name of Object.keys(process.env)) if (name.startsWith('EMBED_')) delete process.env[name];
    const res = await acquire();
    expect(res.status).toBe(503);
    expect(res.contentType).toContain('application/problem+json');
    expect(res.body.detail).toContain('EMBED_HOST');
    // Without an Origin too (a CLI's request): no Origin could make it work, so the 503 is what it is told.
    expect((await acquire(viewer, null)).status).toBe(503);
    expect((await generate({ api_token: 'a', navigation_token: 'n' })).status).toBe(503);
    const dashboard = await call(viewer, 'GET', '/api/dashboard-embed/dashboard');
    expect(dashboard.status).toBe(503);
    expect(dashboard.body.detail).toContain('EMBED_HOST');
    // A dashboard alone does not configure embedding.
    process.env.EMBED_DASHBOARD = '/embed/dashboards/7';
    expect((await call(viewer, 'GET', '/api/dashboard-embed/dashboard')).status).toBe(503);
    delete process.env.EMBED_DASHBOARD;
  });
});

describe('the configured dashboard (issue 19 §8)', () => {
  afterEach(() => {
    delete process.env.EMBED_DASHBOARD;
  });

  it('names EMBED_DASHBOARD on EMBED_HOST, for every role, matching the response schema', async () => {
    configure();
    const calls = fake.received.length;
    process.env.EMBED_DASHBOARD = '/embed/dashboards/7';
    for (const token of [viewer, admin]) {
      const res = await call(token, 'GET', '/api/dashboard-embed/dashboard');
      expect(res.status).toBe(200);
      matchesSchema('dashboard', res.body);
      expect(res.body).toEqual({ host: fake.host, dashboard_url: `${fake.host}/embed/dashboards/7` });
    }
    process.env.EMBED_DASHBOARD = '/dashboards/12?Region=EU';
    expect((await call(viewer, 'GET', '/api/dashboard-embed/dashboard')).body.dashboard_url).toBe(`${fake.host}/dashboards/12?Region=EU`);
    expect(fake.received).toHaveLength(calls); // a setting, not a call to the BI server
  });

  it('answers dashboard_url null when EMBED_DASHBOARD is unset', async () => {
    configure();
    const res = await call(viewer, 'GET', '/api/dashboard-embed/dashboard');
    expect(res).toMatchObject({ status: 200, body: { host: fake.host, dashboard_url: null } });
    matchesSchema('dashboard', res.body);
  });

  it('refuses a dashboard that is not a path on EMBED_HOST with a 503 naming the variable, never echoing it', async () => {
    configure();
    for (const bad of ['https://evil.example.com/embed/dashboards/7', '//evil.example.com/x', 'reports/7', '/', '/a b', `/${'d'.repeat(512)}`]) {
      process.env.EMBED_DASHBOARD = bad;
      const res = await call(viewer, 'GET', '/api/dashboard-embed/dashboard');
      expect(res.status, bad).toBe(503);
      expect(res.body.detail).toContain('EMBED_DASHBOARD');
      if (bad.length > 1) expect(res.body.detail).not.toContain(bad);
    }
    const anonymous = await fetch(`${service.url}/api/dashboard-embed/dashboard`);
    bodies.push(await anonymous.text());
    expect(anonymous.status).toBe(401);
  });
});

describe('configured', () => {
  it('acquire → generate → expiry, through the server, matching the response schemas and the spec TTLs', async () => {
    configure();
    const first = await acquire();
    expect(first.status).toBe(200);
    matchesSchema('acquireSession', first.body);
    expect(first.body).toMatchObject({ authentication_token_ttl: 300, navigation_token_ttl: 600, api_token_ttl: 600, session_reference_token_ttl: 2_592_000 });
    const acquireCall = fake.received.find((r) => r.path.endsWith('/acquire'))!;
    expect(acquireCall.headers['user-agent']).toBe(UA);
    expect((acquireCall.body as any).embed_domain).toBe(ORIGIN);
    expect((acquireCall.body as any).external_user_id).toMatch(/^fleet-health-/);

    // Same user again: the stored session is reused.
    const again = await acquire();
    expect(again.status).toBe(200);
    expect(fake.referenceTokens()).toHaveLength(1);
    // Another user: a session of their own.
    expect((await acquire(admin)).status).toBe(200);
    expect(fake.referenceTokens()).toHaveLength(2);

    const refreshed = await generate({ api_token: again.body.api_token, navigation_token: again.body.navigation_token });
    expect(refreshed.status).toBe(200);
    matchesSchema('generateTokens', refreshed.body);
    expect(refreshed.body).toMatchObject({ api_token_ttl: 600, navigation_token_ttl: 600 });
    expect(refreshed.body.api_token).not.toBe(again.body.api_token);

    fake.advance(2_592_000);
    const expired = await generate({ api_token: refreshed.body.api_token, navigation_token: refreshed.body.navigation_token });
    expect(expired).toMatchObject({ status: 200, body: { session_reference_token_ttl: 0 } });
    expect(Object.keys(expired.body)).toEqual(['session_reference_token_ttl']);
    matchesSchema('generateTokens', expired.body);
    // Deleted: no stored session now, still the 0 answer, without asking the server.
    const calls = fake.received.length;
    expect((await generate({ api_token: 'api-x', navigation_token: 'nav-x' })).body).toEqual({ session_reference_token_ttl: 0 });
    expect(fake.received).toHaveLength(calls);
    expect(logLines.join('')).toContain('"service":"dashboard-embed"');
  });

  it('validates the body (422), needs a token (401) and an Origin (400)', async () => {
    configure();
    expect((await generate({ api_token: '', navigation_token: 'n' })).status).toBe(422);
    expect((await generate({ api_token: 'a', navigation_token: 'n', session_reference_token: 'x' })).status).toBe(422);
    const anonymous = await fetch(`${service.url}/api/dashboard-embed/acquire-session`, { method: 'POST', headers: { Origin: ORIGIN } });
    bodies.push(await anonymous.text());
    expect(anonymous.status).toBe(401);
    const missing = await acquire(viewer, null);
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toContain('Origin');
  });

  it('refuses a User-Agent HTTP cannot carry on to the BI server (422 at header.user-agent), where it failed as "did not answer"', async () => {
    configure();
    const before = fake.received.length;
    // Through the function as API Gateway would call it: fetch itself will not send such a header.
    for (const [routeKey, body] of [
      ['POST /api/dashboard-embed/acquire-session', undefined],
      ['PUT /api/dashboard-embed/generate-tokens', JSON.stringify({ api_token: 'a', navigation_token: 'n' })],
    ] as const) {
      const [method, path] = routeKey.split(' ') as [string, string];
      const answer = await callHandler(embedHandler, {
        method,
        path,
        routeKey,
        headers: { authorization: `Bearer ${viewer}`, origin: ORIGIN, 'user-agent': 'Mozilla/5.0 \u0130stanbul' },
        body,
      });
      expect(answer.statusCode, routeKey).toBe(422);
      expect(answer.json?.errors?.[0]?.loc).toEqual(['header', 'user-agent']);
    }
    expect(fake.received.length).toBe(before);
  });

  it('provider failures are 502 problems whose detail leaks nothing', async () => {
    configure();
    for (const [which, mode] of [
      ['login', 'error500'],
      ['login', 'slow'],
      ['acquire', 'error500'],
      ['acquire', 'garbage'],
      ['acquire', 'slow'],
    ] as const) {
      forgetEmbedLogins();
      fake.loginMode = which === 'login' ? mode : 'ok';
      fake.mode = which === 'acquire' ? mode : 'ok';
      const res = await acquire(admin);
      expect(res.status, `${which} ${mode}`).toBe(502);
      expect(res.contentType).toContain('application/problem+json');
      for (const leak of [CLIENT_SECRET, CLIENT_ID, fake.host, 'Internal server error', 'maintenance']) expect(res.body.detail).not.toContain(leak);
    }
    fake.loginMode = 'ok';
    fake.mode = 'ok';
    process.env.EMBED_CLIENT_SECRET = 'wrong-secret-value';
    forgetEmbedLogins();
    const refused = await acquire(admin);
    expect(refused.status).toBe(502);
    expect(refused.body.detail).not.toContain('wrong-secret-value');
  });
});
