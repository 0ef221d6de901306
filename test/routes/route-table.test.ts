import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORS_ALLOWED_HEADERS } from '../../shared/http/middleware.js';
import { buildOpenApi } from '../../shared/http/openapi.js';
import { ADDRESS_LIMIT, USERNAME_LIMIT } from '../../shared/auth/sign-in.js';
import { DAILY_BUDGET_LIMIT, ONE_AT_A_TIME_LIMIT } from '../../shared/chat/assistant.js';
import { routeKey } from '../../shared/http/route.js';
import { allRoutes, ROUTE_GROUPS } from '../../shared/routes/all-groups.js';
import { RULE_SET_NAMES } from '../../shared/rules/defaults.js';
import { specEndpoints } from '../support/spec.js';

const declared = allRoutes();
const keys = declared.map((r) => routeKey(r.route));

/** Routes beyond the contract, each with its reason (README "Decisions"). */
const BEYOND_SPEC = [
  'GET /api/openapi.json', // the OpenAPI document
  'POST /api/auth/password', // one's own password, changed (shared/auth/README.md)
  'POST /api/auth/renew', // a fresh token for one's session, so an open console stays signed in (shared/auth/README.md)
  'GET /api/chat/status', // whether the assistant can answer, so the chat page says so before a question is typed (shared/chat/README.md)
  'POST /api/settings/users/{email}/password-reset', // a superadmin resets someone's password (shared/auth/README.md)
  'ANY /api/{proxy+}', // problem+json 404 and CORS preflight behind API Gateway
  'POST /api/ingest/clusters', // DESIGN §9 fleet data inputs
  'POST /api/ingest/metrics',
  'POST /api/ingest/alerts',
  'POST /api/ingest/logs',
  'GET /api/settings/health-rules/versions', // issue 6: version history of each rule set
  'GET /api/settings/issue-rules/versions',
  'GET /api/settings/risk-rules/versions',
  'GET /api/settings/metric-sources', // issue 20 §1: where the metrics puller reads, a fourth rule set
  'PUT /api/settings/metric-sources',
  'GET /api/settings/metric-sources/versions',
  'GET /api/clusters/{cluster_id}', // issue 18 §5: the console's cluster page (inventory, daily metric rollups)
  'GET /api/clusters/{cluster_id}/metrics',
  'GET /api/dashboard-embed/dashboard', // issue 19 §8: the configured BI dashboard the console embeds (EMBED_DASHBOARD)
  'GET /api/metrics', // issue 20 §6: the fleet in the Prometheus text format, for a scraper (SCRAPE_TOKEN)
  'GET /api/metric-sources/status', // issue 20 §5: the metrics puller's source, lag per metric and last errors (admins)
  'POST /api/metric-sources/pull', // … and a pull now
  'GET /api/fleet/refresh/{refresh_id}', // issue 21 §2: follow a refresh the recompute worker runs (after a 202)
  'GET /api/health/refresh/{refresh_id}',
  'GET /api/settings/recompute/{refresh_id}',
  'GET /api/settings/recompute-risk/{refresh_id}',
  'POST /api/settings/config-changes/{change_id}/withdraw', // a proposer takes back a pending proposal (shared/rules/README.md)
  'POST /api/settings/health-rules/impact', // what a rule text would change before it is saved or proposed (shared/rules/README.md)
  'POST /api/settings/risk-rules/impact',
];

describe('the route table', () => {
  it('declares every endpoint of the spec, and nothing else but the documented extras', () => {
    const spec = specEndpoints();
    expect(spec).toHaveLength(68);
    expect(spec.filter((k) => !keys.includes(k))).toEqual([]);
    expect(keys.filter((k) => !spec.includes(k)).sort()).toEqual([...BEYOND_SPEC].sort());
  });

  it('has no duplicate method and path', () => {
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('has the 14 route groups of the spec plus ingest, clusters, metrics and metric-sources, each under its own URL prefix', () => {
    expect(ROUTE_GROUPS.map((g) => g.name)).toEqual([
      'auth',
      'fleet',
      'clusters',
      'health',
      'issues',
      'ai-issues',
      'risk',
      'analysis',
      'investigations',
      'patrol',
      'critical-clusters',
      'llm-usage',
      'dashboard-embed',
      'chat',
      'settings',
      'ingest',
      'metrics',
      'metric-sources',
    ]);
    for (const { group, route } of declared) {
      if (group.name === 'auth') {
        expect(route.path).toMatch(/^\/api\/(auth\/|health-check$|openapi\.json$|\{proxy\+\}$)/);
      } else {
        expect(route.path === `/api/${group.name}` || route.path.startsWith(`/api/${group.name}/`), route.path).toBe(true);
      }
    }
  });

  it('gives every route a summary and declares each path parameter in its params schema', () => {
    for (const { route } of declared) {
      expect(route.summary.length).toBeGreaterThan(3);
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      if (names.length) expect(Object.keys((route.params as unknown as { shape: object }).shape).sort()).toEqual(names.sort());
    }
  });

  it('binds exactly the declared routes in each group Lambda', async () => {
    for (const group of ROUTE_GROUPS) {
      const file = new URL(`../../functions/${group.name}.ts`, import.meta.url);
      expect(existsSync(file), `functions/${group.name}.ts`).toBe(true);
      // createGroupHandler throws at import when a binding is missing or extra.
      const module = (await import(file.href)) as { handler: unknown };
      expect(typeof module.handler).toBe('function');
    }
  });
});

describe('roles in the route table (DESIGN §5)', () => {
  const rolesOf = (key: string) => declared.find((r) => routeKey(r.route) === key)!.route.roles;
  const publicKeys = declared.filter((r) => r.route.auth === 'public').map((r) => routeKey(r.route));

  it('only the health check, OpenAPI, login, activate and the catch-all are public', () => {
    expect(publicKeys.sort()).toEqual(
      ['GET /api/health-check', 'GET /api/openapi.json', 'POST /api/auth/login', 'POST /api/auth/activate', 'ANY /api/{proxy+}'].sort(),
    );
  });

  it('llm-usage, reviews, general settings and user changes are superadmin only', () => {
    const superOnly = keys
      .filter((k) => k.includes('/api/llm-usage/'))
      .concat([
        'POST /api/settings/config-changes/{change_id}/review',
        'PUT /api/settings/general',
        'PATCH /api/settings/users/{email}',
        'DELETE /api/settings/users/{email}',
        'POST /api/settings/users/{email}/password-reset',
      ]);
    for (const key of superOnly) expect(rolesOf(key), key).toEqual(['superadmin']);
  });

  it('triage, tickets, refresh, recompute, patrol trigger, metric sources, users and audit need admin or above', () => {
    for (const key of [
      'PATCH /api/issues/{issue_id}',
      'PATCH /api/ai-issues/{issue_id}',
      'POST /api/issues/{issue_id}/create-ticket',
      'POST /api/fleet/refresh',
      'POST /api/health/refresh',
      'POST /api/settings/recompute',
      'POST /api/settings/recompute-risk',
      'GET /api/fleet/refresh/{refresh_id}',
      'GET /api/health/refresh/{refresh_id}',
      'GET /api/settings/recompute/{refresh_id}',
      'GET /api/settings/recompute-risk/{refresh_id}',
      'POST /api/patrol/trigger',
      'GET /api/metric-sources/status',
      'POST /api/metric-sources/pull',
      'GET /api/settings/users',
      'GET /api/issues/users',
      'GET /api/ai-issues/users',
      'POST /api/settings/users/invite',
      'GET /api/settings/audit',
    ]) {
      expect([...rolesOf(key)].sort(), key).toEqual(['admin', 'superadmin']);
    }
  });

  it('every other user route is open to all three roles (reads, chat, embed, rule proposals)', () => {
    const restricted = declared.filter((r) => r.route.auth === 'user' && r.route.roles.length < 3).length;
    const open = declared.filter((r) => r.route.auth === 'user' && r.route.roles.length === 3);
    expect(restricted).toBe(27); // 8 superadmin-only + 19 admin-or-above, listed above
    expect(open.map((r) => routeKey(r.route))).toEqual(
      expect.arrayContaining(['POST /api/chat/message', 'PUT /api/settings/health-rules', 'GET /api/fleet/scores']),
    );
  });
});

describe('OpenAPI document', () => {
  it('documents every declared route except the catch-all, with parameters and bodies', () => {
    const doc = buildOpenApi(ROUTE_GROUPS, 'test') as { openapi: string; paths: Record<string, Record<string, any>> };
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual(keys.filter((k) => !k.startsWith('ANY')).sort());
    const list = doc.paths['/api/issues']!.get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['search', 'days', 'severities', 'status', 'page', 'page_size']),
    );
    expect(list.parameters.find((p: { name: string }) => p.name === 'page_size').schema).toMatchObject({ maximum: 100, default: 20 });
    expect(doc.paths['/api/auth/activate']!.post.requestBody.content['application/json'].schema.properties.password.minLength).toBe(8);
    expect(doc.paths['/api/health-check']!.get.security).toEqual([]);
  });

  it("says in the document what a body's checks ask beyond its fields: a PATCH needs a field, the patrol trigger no body", () => {
    const doc = buildOpenApi(ROUTE_GROUPS, 'test') as { paths: Record<string, Record<string, any>> };
    const body = (path: string, method: string) => doc.paths[path]![method].requestBody;
    for (const [path, method] of [
      ['/api/issues/{issue_id}', 'patch'],
      ['/api/ai-issues/{issue_id}', 'patch'],
      ['/api/settings/users/{email}', 'patch'],
    ] as const) {
      expect(body(path, method), `${method} ${path}`).toMatchObject({ required: true, content: { 'application/json': { schema: { minProperties: 1 } } } });
    }
    expect(body('/api/patrol/trigger', 'post').required).toBe(false);
    expect(body('/api/auth/login', 'post').required).toBe(true);
  });

  it('says "a field is required" of an empty PATCH only: an unknown field alone is said as unknown, not also as no field', () => {
    for (const path of ['/api/issues/{issue_id}', '/api/ai-issues/{issue_id}']) {
      const { route } = allRoutes().find((r) => r.route.path === path && r.route.method === 'PATCH')!;
      const issues = (body: unknown) => route.body!.safeParse(body).error?.issues.map((i) => i.code);
      const group = path;
      expect(issues({ severity: 'Critical' }), group).toEqual(['unrecognized_keys']);
      expect(issues({}), group).toEqual(['custom']);
      expect(issues({ notes: 'fine' }), group).toBeUndefined();
    }
  });

  it("documents the problem members the console acts on, and every 429's limit the service names", () => {
    const doc = buildOpenApi(ROUTE_GROUPS, 'test') as unknown as { components: { schemas: { Problem: { properties: Record<string, any> } } } };
    const members = doc.components.schemas.Problem.properties;
    for (const name of [
      'current_etag',
      'current',
      'current_version',
      'base_version',
      'superseded_by',
      'ticket_key',
      'ticket_may_exist',
      'ticket_label',
      'limit',
    ])
      expect(members, name).toHaveProperty(name);
    expect([...members.limit.enum].sort()).toEqual([USERNAME_LIMIT, ADDRESS_LIMIT, DAILY_BUDGET_LIMIT, ONE_AT_A_TIME_LIMIT].sort());
  });

  it('a route answering a list a 406-declaring route answers declares 406 too: uncompressed, it outgrows 6 MB with the fleet', () => {
    const doc = buildOpenApi(ROUTE_GROUPS, 'test') as { paths: Record<string, Record<string, { responses: Record<string, any> }>> };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
    );
    // Each array the 200 answer holds, by name and schema.
    const listsOf = (op: { responses: Record<string, any> }) =>
      Object.entries((op.responses['200']?.content?.['application/json']?.schema?.properties ?? {}) as Record<string, { type?: string }>)
        .filter(([, property]) => property.type === 'array')
        .map(([name, property]) => `${name} ${JSON.stringify(property)}`);
    const large = new Set(operations.filter(({ op }) => op.responses['406']).flatMap(({ op }) => listsOf(op)));
    expect(large.size).toBeGreaterThan(0);
    expect(operations.filter(({ op }) => !op.responses['406'] && listsOf(op).some((list) => large.has(list))).map(({ key }) => key)).toEqual([]);
  });

  it('lists the headers a route reads: If-Match on the writes that take a precondition, X-Session-Duration on logout, Origin and User-Agent on the embed session', () => {
    const doc = buildOpenApi(ROUTE_GROUPS, 'test') as { paths: Record<string, Record<string, { parameters: { name: string; in: string }[] }>> };
    const headers = Object.entries(doc.paths)
      .flatMap(([path, ops]) =>
        Object.entries(ops).flatMap(([method, op]) => op.parameters.filter((p) => p.in === 'header').map((p) => `${method.toUpperCase()} ${path} ${p.name}`)),
      )
      .sort();
    expect(headers).toEqual(
      [
        'PATCH /api/issues/{issue_id} if-match',
        'PATCH /api/ai-issues/{issue_id} if-match',
        'PUT /api/settings/general if-match',
        'PATCH /api/settings/users/{email} if-match',
        'DELETE /api/settings/users/{email} if-match',
        'POST /api/settings/users/{email}/password-reset if-match',
        'POST /api/auth/logout x-session-duration',
        'POST /api/dashboard-embed/acquire-session origin',
        // The browser's own, which the BI server ties the session to.
        'POST /api/dashboard-embed/acquire-session user-agent',
        'PUT /api/dashboard-embed/generate-tokens user-agent',
        ...RULE_SET_NAMES.map((ruleSet) => `PUT /api/settings/${ruleSet} if-match`),
        // The watch pages' reads (`revalidate`): 304 to a matching If-None-Match.
        ...allRoutes()
          .filter((r) => r.route.revalidate)
          .map((r) => `GET ${r.route.path} if-none-match`),
      ].sort(),
    );
    // A browser on another allowed origin (the console's dev server) may send each of them: CORS allows them (Origin
    // and User-Agent are the browser's own, which a page does not set).
    const allowed = CORS_ALLOWED_HEADERS.toLowerCase().split(/,\s*/);
    for (const name of new Set(headers.map((h) => h.split(' ')[2]!))) if (name !== 'origin' && name !== 'user-agent') expect(allowed).toContain(name);
  });
});
