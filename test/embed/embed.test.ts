// Cookieless dashboard-embed sessions (issue 11) against DynamoDB Local and a
// local server speaking the BI server's embed API 4.0 (test/support/fake-embed.ts):
// the spec's TTLs, reuse of the stored session reference token, refresh,
// expiry, origins, configuration and every provider failure, with the
// reference token and the client secret absent from every answer and log line.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  // Log everything, so the "never logged" assertions see every line.
  process.env.LOG_LEVEL = 'debug';
});

import { forgetSecrets } from '../../shared/config/secrets.js';
import { resetSettings } from '../../shared/config/env.js';
import { deleteEmbedSession, getEmbedSession, putEmbedSession } from '../../shared/db/embed-sessions.js';
import { getItem } from '../../shared/db/client.js';
import { embedClient, embedConfig, forgetEmbedLogins, DEFAULT_PERMISSIONS, SESSION_LENGTH_SECONDS } from '../../shared/embed/provider.js';
import { acquireEmbedSession, embedUser, generateEmbedTokens } from '../../shared/embed/sessions.js';
import { HttpError } from '../../shared/http/errors.js';
import type { Principal } from '../../shared/auth/principal.js';
import { useTestTables } from '../support/dynamo.js';
import type { DynamoProxy } from '../support/dynamo-proxy.js';
import { startFakeEmbed, type FakeEmbed } from '../support/fake-embed.js';

const CLIENT_ID = 'embed-client-0001';
const CLIENT_SECRET = 'embed-S3CRET-value-0123456789abcdef';
const ORIGIN = 'https://fleet.example.com';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) EmbedTest/1.0';

const ana: Principal = { userId: 'u-ana', username: 'ana', name: 'Ana María López', email: 'ana@example.com', role: 'viewer' };
const bo: Principal = { userId: 'u-bo', username: 'bo', name: 'Bo', email: 'bo@example.com', role: 'admin' };

let fake: FakeEmbed;
let proxy: DynamoProxy;
const answers: unknown[] = [];
const logLines: string[] = [];
const writes: { mockRestore(): void }[] = [];

beforeAll(async () => {
  ({ proxy } = await useTestTables({ proxy: true }));
  fake = await startFakeEmbed({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, slowMs: 1_000 });
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    writes.push(
      vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
        logLines.push(String(chunk));
        return original(chunk, ...rest);
      }) as typeof stream.write),
    );
  }
});

afterAll(async () => {
  for (const w of writes) w.mockRestore();
  await fake?.close();
  for (const name of Object.keys(process.env)) if (name.startsWith('EMBED_')) delete process.env[name];
  process.env.STAGE = 'dev';
  delete process.env.CORS_ORIGINS;
  resetSettings();
});

beforeEach(() => {
  for (const name of Object.keys(process.env)) if (name.startsWith('EMBED_')) delete process.env[name];
  Object.assign(process.env, { EMBED_HOST: fake.host, EMBED_CLIENT_ID: CLIENT_ID, EMBED_CLIENT_SECRET: CLIENT_SECRET, EMBED_TIMEOUT_MS: '300' });
  forgetEmbedLogins();
  forgetSecrets();
});

afterEach(async () => {
  // Never returned, never logged: every reference token the fake handed out, and the client secret.
  const secrets = [...fake.referenceTokens(), CLIENT_SECRET];
  const text = JSON.stringify(answers) + logLines.join('');
  for (const value of secrets) expect(text).not.toContain(value);
  answers.length = 0;
  logLines.length = 0;
  fake.reset();
  for (const p of [ana, bo]) {
    const stored = await getEmbedSession(p.userId);
    if (stored) await deleteEmbedSession(p.userId, stored.sessionReferenceToken);
  }
  fake.refusedReferences.clear();
  process.env.STAGE = 'dev';
  delete process.env.CORS_ORIGINS;
  resetSettings();
});

/** `origin` null: no Origin header. */
async function acquire(principal = ana, origin: string | null = ORIGIN, userAgent = UA) {
  const answer = await acquireEmbedSession({ principal, origin: origin ?? undefined, userAgent });
  answers.push(answer);
  return answer;
}

async function generate(tokens: { api_token: string; navigation_token: string }, principal = ana, userAgent = UA) {
  const answer = await generateEmbedTokens({ principal, userAgent, apiToken: tokens.api_token, navigationToken: tokens.navigation_token });
  answers.push(answer);
  return answer;
}

/** The HTTP error a call throws (its status and detail), recorded as an answer. */
async function failure(work: () => Promise<unknown>): Promise<{ status: number; detail: string }> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    const problem = { status: error.status, detail: error.message };
    answers.push(problem);
    return problem;
  }
  throw new Error('expected an HTTP error');
}

const acquires = () => fake.received.filter((r) => r.path.endsWith('/cookieless_session/acquire'));
const generates = () => fake.received.filter((r) => r.path.endsWith('/generate_tokens'));

describe('acquire-session', () => {
  it('answers the spec TTLs for the default configuration, never the reference token, and stores it with a TTL at its expiry', async () => {
    const before = Math.floor(Date.now() / 1000);
    const answer = await acquire();
    expect(answer).toEqual({
      authentication_token: expect.stringMatching(/^auth-/),
      authentication_token_ttl: 300,
      navigation_token: expect.stringMatching(/^nav-/),
      navigation_token_ttl: 600,
      api_token: expect.stringMatching(/^api-/),
      api_token_ttl: 600,
      session_reference_token_ttl: 2_592_000,
    });
    expect(Object.keys(answer)).not.toContain('session_reference_token');

    const [reference] = fake.referenceTokens();
    const item = await getItem('embed-sessions', { pk: 'USER#u-ana', sk: 'EMBED_SESSION' }, true);
    expect(item?.session_reference_token).toBe(reference);
    expect(Number(item?.ttl)).toBeGreaterThanOrEqual(before + 2_592_000);
    expect(Number(item?.ttl)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 2_592_000);
    expect(item?.expires_at).toBe(item?.ttl);
    // The log says what happened, without the token (checked after each test).
    expect(logLines.join('')).toContain('"message":"embed session acquired"');
  });

  it('logs in with the client credentials as a form and sends the embed user from configuration with the browser User-Agent and Origin', async () => {
    Object.assign(process.env, {
      EMBED_MODELS: 'fleet, fleet_costs',
      EMBED_USER_ATTRIBUTES: '{"locale":"en_US","tenant":7}',
      EMBED_GROUP_IDS: '12,13',
      EMBED_EXTERNAL_GROUP_ID: 'fleet-health',
    });
    await acquire();
    const login = fake.received.find((r) => r.path === '/api/4.0/login')!;
    expect(login.method).toBe('POST');
    expect(login.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(login.body).toEqual({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET });

    const [call] = acquires();
    expect(call!.method).toBe('POST');
    expect(call!.headers.authorization).toMatch(/^token login-/);
    expect(call!.headers['user-agent']).toBe(UA);
    expect(call!.body).toEqual({
      session_length: SESSION_LENGTH_SECONDS,
      force_logout_login: true,
      external_user_id: 'fleet-health-u-ana',
      first_name: 'Ana',
      last_name: 'María López',
      permissions: DEFAULT_PERMISSIONS,
      models: ['fleet', 'fleet_costs'],
      group_ids: ['12', '13'],
      external_group_id: 'fleet-health',
      user_attributes: { locale: 'en_US', tenant: 7 },
      embed_domain: ORIGIN,
    });
  });

  it('reuses the stored reference token across acquires of the same user, with one login; another user gets a session of their own', async () => {
    await acquire();
    fake.advance(100);
    const second = await acquire();
    expect(fake.logins).toBe(1);
    const [first, again] = acquires();
    expect(first!.body).not.toHaveProperty('session_reference_token');
    const [reference] = fake.referenceTokens();
    expect((again!.body as Record<string, unknown>).session_reference_token).toBe(reference);
    expect(fake.referenceTokens()).toHaveLength(1);
    // Reused, not extended.
    expect(second.session_reference_token_ttl).toBe(2_592_000 - 100);
    expect((await getEmbedSession('u-ana'))?.sessionReferenceToken).toBe(reference);

    await acquire(bo);
    expect((acquires()[2]!.body as Record<string, unknown>).external_user_id).toBe('fleet-health-u-bo');
    expect((acquires()[2]!.body as Record<string, unknown>).first_name).toBe('Bo');
    expect((acquires()[2]!.body as Record<string, unknown>).last_name).toBe('');
    expect(fake.referenceTokens()).toHaveLength(2);
  });

  it('two tabs of one user acquiring at once end in one session, and both renew: the one that stored second joins the first', async () => {
    fake.holdAcquires(2); // both first acquires are answered together: neither tab has stored its session yet
    const tabs = await Promise.all([acquire(), acquire()]);
    const stored = (await getEmbedSession('u-ana'))!.sessionReferenceToken;
    // Both first acquires started sessions; the tab whose session was not stored acquired again in the stored one.
    expect(acquires()).toHaveLength(3);
    expect((acquires()[2]!.body as Record<string, unknown>).session_reference_token).toBe(stored);
    for (const tab of tabs) {
      const renewed = await generate(tab);
      expect(renewed, 'a tab renews in the stored session').toMatchObject({ api_token_ttl: 600, navigation_token_ttl: 600 });
      expect(await generate(renewed as { api_token: string; navigation_token: string })).toMatchObject({ api_token_ttl: 600 });
    }
    expect(generates().every((r) => (r.body as Record<string, unknown>).session_reference_token === stored)).toBe(true);
    // A third tab later reuses it.
    await acquire();
    expect((acquires()[3]!.body as Record<string, unknown>).session_reference_token).toBe(stored);
    expect((await getEmbedSession('u-ana'))!.sessionReferenceToken).toBe(stored);
  });

  it('a stored session past its end, not yet removed by the TTL, is replaced by the next acquire, which starts one session', async () => {
    await putEmbedSession('u-ana', 'ref-ended-long-ago', -60, 'any');
    await acquire();
    expect(acquires()).toHaveLength(1);
    expect((acquires()[0]!.body as Record<string, unknown>).session_reference_token).toBeUndefined();
    expect((await getEmbedSession('u-ana'))!.sessionReferenceToken).toBe(fake.referenceTokens()[0]);
  });

  it('joins at most twice: when every conditional store fails, the third acquire stores its own session', async () => {
    const stop = proxy.watch(({ operation, input }) =>
      operation === 'PutItem' && String(input.TableName).endsWith('embed-sessions') && input.ConditionExpression
        ? { type: 'ConditionalCheckFailedException', message: 'The conditional request failed' }
        : undefined,
    );
    try {
      const tab = await acquire();
      expect(tab.session_reference_token_ttl).toBe(2_592_000);
    } finally {
      stop();
    }
    expect(acquires()).toHaveLength(3);
    expect((await getEmbedSession('u-ana'))!.sessionReferenceToken).toBe(fake.referenceTokens().at(-1));
  });

  it('a stored reference token the server refuses is forgotten, and a new session is acquired', async () => {
    await acquire();
    const [stale] = fake.referenceTokens();
    fake.refusedReferences.add(stale!);
    const renewed = await acquire();
    expect(renewed.session_reference_token_ttl).toBe(2_592_000);
    const fresh = (await getEmbedSession('u-ana'))!.sessionReferenceToken;
    expect(fresh).not.toBe(stale);
    expect(fake.referenceTokens()).toContain(fresh);
  });

  it('a refused or failing login, or a rate-limited acquire, keeps the stored session and sends nothing more', async () => {
    await acquire();
    const [kept] = fake.referenceTokens();
    for (const [loginMode, mode] of [
      ['error400', 'ok'],
      ['error500', 'ok'],
      ['ok', 'error429'],
    ] as const) {
      fake.received.length = 0;
      forgetEmbedLogins();
      Object.assign(fake, { loginMode, mode });
      expect((await failure(() => acquire())).status).toBe(502);
      expect((await getEmbedSession('u-ana'))!.sessionReferenceToken).toBe(kept);
      expect(fake.received.map((r) => r.path)).toEqual(
        loginMode === 'ok' ? ['/api/4.0/login', '/api/4.0/embed/cookieless_session/acquire'] : ['/api/4.0/login'],
      );
    }
    Object.assign(fake, { loginMode: 'ok', mode: 'ok' });
    await acquire();
    expect(fake.referenceTokens()).toEqual([kept]);
  });

  it("a rate-limited login or acquire (429) says so and when to try again, from the server's Retry-After", async () => {
    for (const [loginMode, mode, what] of [
      ['error429', 'ok', 'login'],
      ['ok', 'error429', 'session acquisition'],
    ] as const) {
      forgetEmbedLogins();
      Object.assign(fake, { loginMode, mode });
      expect(await failure(() => acquire())).toEqual({
        status: 502,
        detail: `Dashboard embedding failed: the dashboard embed server is limiting the rate of requests (HTTP 429 to the ${what}): try again in 30 s.`,
      });
    }
    Object.assign(fake, { loginMode: 'ok', mode: 'ok' });
  });

  it('logs in again once when the cached login token is refused', async () => {
    await acquire();
    fake.revokeLogins();
    await acquire();
    expect(fake.logins).toBe(2);
    expect(acquires().map((r) => r.headers.authorization)).toHaveLength(3);
  });

  it('a missing or malformed Origin is 400; in production an origin outside CORS_ORIGINS is 403 and an allowed one works', async () => {
    expect((await failure(() => acquire(ana, null))).status).toBe(400);
    expect((await failure(() => acquire(ana, 'null'))).status).toBe(400);
    expect((await failure(() => acquire(ana, 'https://fleet.example.com/path'))).status).toBe(400);
    expect((await failure(() => acquire(ana, 'ftp://fleet.example.com'))).status).toBe(400);
    Object.assign(process.env, { STAGE: 'prod', CORS_ORIGINS: `${ORIGIN}, https://ops.example.com` });
    resetSettings();
    expect(await failure(() => acquire(ana, 'https://evil.example.net'))).toEqual({ status: 403, detail: expect.stringContaining('origin') });
    expect(acquires()).toHaveLength(0);
    expect((await acquire(ana, 'https://ops.example.com')).api_token_ttl).toBe(600);
    expect((acquires()[0]!.body as Record<string, unknown>).embed_domain).toBe('https://ops.example.com');
  });

  it('in production the console’s own origin (APP_URL) may embed with CORS_ORIGINS empty, as the stack deploys it by default', async () => {
    Object.assign(process.env, { STAGE: 'prod', CORS_ORIGINS: '', APP_URL: 'https://d111111abcdef8.cloudfront.net/' });
    resetSettings();
    try {
      expect((await acquire(ana, 'https://d111111abcdef8.cloudfront.net')).api_token_ttl).toBe(600);
      expect(await failure(() => acquire(ana, 'https://ops.example.com'))).toEqual({ status: 403, detail: expect.stringContaining('origin') });
    } finally {
      delete process.env.APP_URL;
    }
  });
});

describe('generate-tokens', () => {
  it('trades the browser tokens for new ones with TTLs, using the stored reference token and the User-Agent', async () => {
    const session = await acquire();
    fake.advance(600);
    const answer = await generate(session);
    expect(answer).toEqual({
      api_token: expect.stringMatching(/^api-/),
      api_token_ttl: 600,
      navigation_token: expect.stringMatching(/^nav-/),
      navigation_token_ttl: 600,
      session_reference_token_ttl: 2_592_000 - 600,
    });
    expect(answer).not.toHaveProperty('session_reference_token');
    const [call] = generates();
    expect(call!.method).toBe('PUT');
    expect(call!.headers['user-agent']).toBe(UA);
    expect(call!.body).toEqual({
      session_reference_token: fake.referenceTokens()[0],
      api_token: session.api_token,
      navigation_token: session.navigation_token,
    });
    // The new tokens work for the next round.
    expect(await generate(answer as { api_token: string; navigation_token: string })).toMatchObject({ api_token_ttl: 600 });
  });

  it('an expired session answers only session_reference_token_ttl 0 and deletes the stored token; the next acquire starts a new session', async () => {
    const session = await acquire();
    fake.advance(2_592_000);
    expect(await generate(session)).toEqual({ session_reference_token_ttl: 0 });
    expect(await getItem('embed-sessions', { pk: 'USER#u-ana', sk: 'EMBED_SESSION' }, true)).toBeUndefined();

    const fresh = await acquire();
    expect(fresh.session_reference_token_ttl).toBe(2_592_000);
    expect(acquires()[1]!.body).not.toHaveProperty('session_reference_token');
    expect(fake.referenceTokens()).toHaveLength(2);
  });

  it('no stored session answers session_reference_token_ttl 0 without calling the server', async () => {
    expect(await generate({ api_token: 'api-x', navigation_token: 'nav-x' }, bo)).toEqual({ session_reference_token_ttl: 0 });
    expect(fake.received).toHaveLength(0);
  });
});

describe('refused tokens', () => {
  it('tokens the server refuses (another browser, a frame it no longer knows) answer session_reference_token_ttl 0, keeping the session for the next acquire', async () => {
    const session = await acquire();
    // Sent again, refused tokens are refused again: a 502 here had the tab retry them every 30 s, for good.
    expect(await generate(session, ana, 'curl/8.0')).toEqual({ session_reference_token_ttl: 0 });
    expect(await generate({ api_token: 'api-unknown', navigation_token: 'nav-unknown' })).toEqual({ session_reference_token_ttl: 0 });
    const stored = await getEmbedSession('u-ana');
    expect(stored?.sessionReferenceToken).toBe(fake.referenceTokens()[0]);
    // The tab acquires anew: the stored session is reused, and its new tokens renew.
    const again = await acquire();
    expect(acquires()[1]!.body).toMatchObject({ session_reference_token: fake.referenceTokens()[0] });
    expect(fake.referenceTokens()).toHaveLength(1);
    expect(await generate(again)).toMatchObject({ api_token_ttl: 600 });
  });
});

describe('configuration', () => {
  it('not configured is 503 naming the missing variables, for both calls', async () => {
    for (const name of ['EMBED_HOST', 'EMBED_CLIENT_ID', 'EMBED_CLIENT_SECRET']) {
      const saved = process.env[name];
      delete process.env[name];
      const problem = await failure(() => acquire());
      expect(problem.status).toBe(503);
      expect(problem.detail).toContain(name);
      expect((await failure(() => generate({ api_token: 'a', navigation_token: 'n' }))).status).toBe(503);
      process.env[name] = saved;
    }
    expect(fake.received).toHaveLength(0);
  });

  it('rejects plain http to another host, bad timeouts and bad user attributes with 503, never echoing values', async () => {
    const bad: NodeJS.ProcessEnv[] = [
      { EMBED_HOST: 'http://bi.example.com' },
      { EMBED_HOST: `https://user:${CLIENT_SECRET}@bi.example.com` },
      // The frame loads /login/embed/… at the origin's root: a path would embed nothing.
      { EMBED_HOST: 'https://bi.example.com/looker' },
      { EMBED_TIMEOUT_MS: '20001' },
      { EMBED_TIMEOUT_MS: 'soon' },
      { EMBED_USER_ATTRIBUTES: '["a"]' },
      { EMBED_USER_ATTRIBUTES: '{"x":{"y":1}}' },
    ];
    for (const overrides of bad) {
      const env = { ...process.env, ...overrides };
      let error: unknown;
      try {
        embedConfig(env);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(503);
      expect((error as HttpError).message).not.toContain(CLIENT_SECRET);
    }
    expect(embedConfig({ ...process.env, EMBED_HOST: `${fake.host}/`, EMBED_TIMEOUT_MS: '' })).toMatchObject({
      host: fake.host,
      timeoutMs: 10_000,
      permissions: DEFAULT_PERMISSIONS,
      models: [],
    });
  });

  it('derives a stable external user id and names', () => {
    expect(embedUser(ana)).toEqual({ externalUserId: 'fleet-health-u-ana', firstName: 'Ana', lastName: 'María López' });
    expect(embedUser({ ...bo, name: '  ' })).toEqual({ externalUserId: 'fleet-health-u-bo', firstName: 'bo', lastName: '' });
  });
});

describe('provider failures are 502 with a detail that leaks nothing', () => {
  const leaks = (detail: string) => [CLIENT_SECRET, CLIENT_ID, 'login-', 'Internal server error', 'maintenance', fake.host].filter((s) => detail.includes(s));

  it('login refused (wrong secret), failing, slow, garbage or with a lifetime beyond the longest session', async () => {
    process.env.EMBED_CLIENT_SECRET = `${CLIENT_SECRET}-wrong`;
    forgetSecrets();
    const refused = await failure(() => acquire());
    expect(refused.status).toBe(502);
    expect(refused.detail).toMatch(/refused our API credentials/);
    expect(refused.detail).not.toContain('-wrong');
    expect(leaks(refused.detail)).toEqual([]);

    process.env.EMBED_CLIENT_SECRET = CLIENT_SECRET;
    for (const mode of ['error500', 'error400', 'slow', 'garbage', 'overlong', 'oversized'] as const) {
      fake.loginMode = mode;
      forgetEmbedLogins();
      const problem = await failure(() => acquire());
      expect(problem.status).toBe(502);
      expect(leaks(problem.detail)).toEqual([]);
    }
    expect(acquires()).toHaveLength(0);
    expect(await getEmbedSession('u-ana')).toBeUndefined();
  });

  it('acquire failing (4xx, 5xx, timeout, garbage, lifetimes beyond the longest session) stores nothing', async () => {
    for (const mode of ['error500', 'error400', 'slow', 'garbage', 'overlong', 'oversized'] as const) {
      fake.mode = mode;
      const problem = await failure(() => acquire());
      expect(problem.status).toBe(502);
      expect(problem.detail).toMatch(/^Dashboard embedding failed: /);
      if (mode === 'slow') expect(problem.detail).toContain('no answer within 0.3 s');
      if (mode === 'oversized')
        expect(problem.detail).toBe('Dashboard embedding failed: the dashboard embed server answered the session acquisition with more than 1 MB.');
      expect(leaks(problem.detail)).toEqual([]);
    }
    expect(await getEmbedSession('u-ana')).toBeUndefined();
  });

  it("a request's calls end within its budget together, whatever each call's own timeout", async () => {
    process.env.EMBED_TIMEOUT_MS = '800';
    fake.mode = 'slow'; // the acquire answers after 1 s; the login before it is quick
    const budgeted = () => embedClient(embedConfig(), 500);
    const problem = await failure(() => acquireEmbedSession({ principal: ana, origin: ORIGIN, userAgent: UA }, budgeted));
    expect(problem.status).toBe(502);
    expect(problem.detail).toMatch(/did not answer the session acquisition: no answer within 0\.[345] s\.$/);
    expect(await getEmbedSession('u-ana')).toBeUndefined();
  });

  it('generate_tokens failing is 502 and keeps the stored session', async () => {
    const session = await acquire();
    for (const mode of ['error500', 'error429', 'slow', 'garbage', 'oversized'] as const) {
      fake.mode = mode;
      const problem = await failure(() => generate(session));
      expect(problem.status).toBe(502);
      expect(leaks(problem.detail)).toEqual([]);
    }
    fake.mode = 'ok';
    expect(await getEmbedSession('u-ana')).toBeDefined();
    const renewed = await generate(session);
    expect(renewed).toMatchObject({ api_token_ttl: 600 });
    // Lifetimes beyond the longest session are no answer either (the server has rotated the tokens all the same).
    fake.mode = 'overlong';
    expect((await failure(() => generate(renewed as { api_token: string; navigation_token: string }))).status).toBe(502);
    expect(await getEmbedSession('u-ana')).toBeDefined();
  });
});
