// Walks EVERY declared route through the local server with hostile input derived
// from its own schemas (body, query, path parameters) and checks that bad input
// is never an internal error: no 500 (a 502/503 only from a provider that is not
// configured, never the local server's "the function failed"), and every error
// answer is problem+json. Deterministic: the same probes, in the same order, on
// every run (only the ids of what it reads or makes differ); DELETE routes go last
// so they cannot break the routes after them. One run lists every failure.
// Path parameters name resources that exist where the walk can make or find one
// (an issue, an AI issue, an investigation, a patrol report, a proposal, a user),
// so probes of a body, query or header get past the 404 to the handler. Declared
// headers are probed too. Every route, input or none, gets query parameters it does
// not declare, and one with no body declared (a GET aside) an unexpected body.
import { request as httpRequest, Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from '../../shared/zod.js';
import type { RouteDeclaration } from '../../shared/http/route.js';
import { allRoutes } from '../../shared/routes/all-groups.js';
import { registerLocalWorker } from '../../shared/worker-invoke.js';
import { handler as recompute } from '../../functions/recompute.js';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  format?: string;
  minLength?: number;
  minItems?: number;
  minimum?: number;
}

/** What a route accepts, as JSON Schema (its input side: defaults make a property optional). */
const jsonSchema = (schema: z.ZodMiniType): JsonSchema => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

/** The schema a `$ref` points at: the root itself, or one of its `$defs`. */
const resolveRef = (schema: JsonSchema, root: JsonSchema): JsonSchema | undefined =>
  schema.$ref === '#' ? root : root.$defs?.[schema.$ref?.replace(/^#\/\$defs\//, '') ?? ''];

/** The top-level property names of an object schema, through `$ref`s and unions, in declaration order. */
function topLevelProperties(schema: JsonSchema, root: JsonSchema = schema, seen = new Set<JsonSchema>()): string[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const names = Object.keys(schema.properties ?? {});
  if (schema.$ref) {
    const target = resolveRef(schema, root);
    if (target) names.push(...topLevelProperties(target, root, seen));
  }
  for (const member of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) names.push(...topLevelProperties(member, root, seen));
  return [...new Set(names)];
}

/**
 * A small value the JSON Schema accepts (its const, first option, default or a minimal value of its type), with
 * only the required properties of an object unless `all`: the base a probe needs for its hostile part to get past
 * validation to the handler. Zod checks the schema cannot express (a refine) may still refuse it; callers check.
 */
function example(schema: JsonSchema, root: JsonSchema, all = false): unknown {
  if ('const' in schema) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  if ('default' in schema) return schema.default;
  if (schema.$ref) {
    const target = resolveRef(schema, root);
    return target ? example(target, root, all) : null;
  }
  const first = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (first) return example(first, root, all);
  switch (schema.type) {
    case 'string':
      return schema.format === 'email'
        ? 'nobody@example.com'
        : schema.format === 'uri'
          ? 'https://example.com/'
          : 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => example(schema.items ?? {}, root));
    case 'object': {
      const names = Object.keys(schema.properties ?? {}).filter((name) => all || schema.required?.includes(name));
      return Object.fromEntries(names.map((name) => [name, example(schema.properties![name]!, root)]));
    }
    default:
      return null;
  }
}

/**
 * A body the route's schema accepts, or `{}` when none is found: the required properties alone, then with each
 * optional one in turn (a refine may want one), then with all of them.
 */
function acceptedBody(body: z.ZodMiniType): Record<string, unknown> {
  const schema = jsonSchema(body);
  const required = example(schema, schema);
  const all = example(schema, schema, true);
  if (!isObject(required) || !isObject(all)) return {};
  const candidates = [required, ...Object.entries(all).map(([name, value]) => ({ ...required, [name]: value })), all];
  return candidates.find((candidate) => body.safeParse(candidate).success) ?? {};
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

const LONG_STRING = 'x'.repeat(100_000);
const MANY_NUMBERS = Array.from({ length: 10_000 }, (_, i) => i);
const deepObject = (depth: number): unknown => (depth === 0 ? { leaf: true } : { a: deepObject(depth - 1) });

const WHOLE_BODIES: unknown[] = [{}, null, [], 'x', 1e308, deepObject(60)];
const PROPERTY_VALUES: unknown[] = [null, '', [], {}, -1, 1e308, true, LONG_STRING, MANY_NUMBERS];
/** Beyond the top level: the same values as the items of an array property (an ingest batch's records), in one request. */
const HOSTILE_ITEMS: unknown[] = [null, '', [], {}, -1, 1e308, true, LONG_STRING, deepObject(60), { [LONG_STRING.slice(0, 1_000)]: MANY_NUMBERS }];
const QUERY_VALUES = ['', 'NaN', '1e309', '-1', '0', 'q'.repeat(5_000)];
/** Path parameter values, sent as they are (the first and fourth already percent-encoded: NUL and U+1F4A9). */
const PATH_VALUES = ['%00', '..', 'p'.repeat(2_000), '%F0%9F%92%A9', '0'];
/** Header values (what node:http lets a client send: no CR, LF or NUL): ETag-shaped ones out of range, weak, a list, a huge one. */
const HEADER_VALUES = ['', '*', '"v1e309"', '"t-1"', '"r99999999999999999999"', 'W/"v1"', '"v1", "v2"', 'h'.repeat(8_000), '\u00ff\u00fe'];

interface Probe {
  method: string;
  template: string;
  /** The raw request target, sent byte for byte (no client-side normalisation of `..`). */
  target: string;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** Long runs of one character as `x×2000`, so a truncated line still says what was sent. */
const abbreviate = (text: string) => text.replace(/(.)\1{19,}/gs, (run, ch: string) => `${ch}×${run.length}`);
const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * Ids of resources that exist, by path parameter name, set before the walk; `ai_issue_id` stands for the
 * `issue_id` of /api/ai-issues (another table's ids).
 */
const existing: Record<string, string> = {};

/** A value of the path parameter that its schema accepts, an existing resource's when known, so body, query and header probes reach the handler. */
function placeholder(route: RouteDeclaration, params: JsonSchema | undefined, name: string): string {
  const known = route.path.startsWith('/api/ai-issues/') && name === 'issue_id' ? existing.ai_issue_id : existing[name];
  return known ?? (params?.properties?.[name]?.format === 'email' ? 'nobody@example.com' : 'sample-id');
}

function pathWith(route: RouteDeclaration, params: JsonSchema | undefined, hostile?: { name: string; value: string }): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => (hostile?.name === name ? hostile.value : encodeURIComponent(placeholder(route, params, name))));
}

/** Every hostile request for one route, derived from its schemas. */
function probesOf(route: RouteDeclaration): Probe[] {
  const params = route.params ? jsonSchema(route.params) : undefined;
  const base = pathWith(route, params);
  const probes: Probe[] = [];
  const json = (value: unknown) => ({ body: JSON.stringify(value), contentType: 'application/json' });
  // Probes aimed at the query or the path send a body the route accepts, so that their hostile part reaches the handler.
  const valid = route.body ? acceptedBody(route.body) : undefined;
  const neutral = valid ? json(valid) : {};
  const probe = (target: string, extra: Partial<Probe>) => probes.push({ method: route.method, template: route.path, target, ...extra });

  if (route.body) {
    const body = jsonSchema(route.body);
    for (const value of WHOLE_BODIES) probe(base, json(value));
    const names = topLevelProperties(body);
    for (const name of names) for (const value of PROPERTY_VALUES) probe(base, json({ [name]: value }));
    probe(base, { body: '{"unterminated": [1, 2', contentType: 'application/json' });
    probe(base, { body: '{}', contentType: 'application/octet-stream' });
    // Past the envelope: each array property's items hostile, the rest of the body valid.
    for (const name of names.filter((n) => body.properties?.[n]?.type === 'array')) probe(base, json({ ...valid, [name]: HOSTILE_ITEMS }));
  }
  if (route.query) {
    for (const name of topLevelProperties(jsonSchema(route.query))) {
      const key = encodeURIComponent(name);
      for (const value of QUERY_VALUES) probe(`${base}?${key}=${encodeURIComponent(value)}`, neutral);
      probe(`${base}?${key}=1&${key}=2`, neutral);
    }
  }
  if (params) {
    for (const name of topLevelProperties(params)) for (const value of PATH_VALUES) probe(pathWith(route, params, { name, value }), neutral);
  }
  if (route.headers) {
    for (const name of topLevelProperties(jsonSchema(route.headers)))
      for (const value of HEADER_VALUES) probe(base, { ...neutral, headers: { [name]: value } });
  }
  // Every route, with input declared or none: query parameters it does not declare are ignored or refused, and so
  // is a body where none is declared (a GET's aside: HTTP gives it no meaning), never a crash.
  // Without the body that would get it past validation: a route the walk probes further (a proposal's review)
  // must not be carried out here, with the resource its later probes need.
  probe(`${base}?${UNDECLARED_QUERY}`, {});
  if (!route.body && route.method !== 'GET') {
    probe(base, { body: '{"unterminated": [1, 2', contentType: 'application/json' });
    probe(base, json({ ['__proto__']: { role: 'superadmin' }, constructor: { prototype: { polluted: true } }, pad: 'x'.repeat(100_000) }));
  }
  return probes;
}

/** Names no route declares, with the values the declared ones get: a NUL, a prototype key, a repeat, an overlong value. */
const UNDECLARED_QUERY = ['__proto__=%00', 'constructor%5Bprototype%5D=1', 'undeclared=1&undeclared=2', `long=${'9'.repeat(10_000)}`].join('&');

let service: LocalService;
let superadminToken: string;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  service = await startTestService({ adminPassword: 'hostile-admin-password', demoClusters: 12 });
  superadminToken = await userToken('superadmin', 'hostile-super');
  const api = async (method: string, path: string, body?: unknown, token = superadminToken) => {
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as any;
  };
  const issue = (await api('GET', '/api/issues?days=365&page_size=1')).issues?.[0];
  if (issue) Object.assign(existing, { issue_id: issue.issue_id, cluster_id: issue.cluster_id });
  // A patrol report (the rules engine's, no LLM configured); AI issues and agent tasks from a recompute, and the
  // tasks investigated by the agent worker, run here (as console-ai.test.ts does).
  const patrol = await api('POST', '/api/patrol/trigger', {});
  if (patrol.report_id) existing.report_id = patrol.report_id;
  registerLocalWorker('agent-worker', async () => undefined);
  await recompute();
  await (await import('../../functions/agent-worker.js')).handler({});
  const investigation = (await api('GET', '/api/investigations?days=365&page_size=1')).investigations?.[0];
  if (investigation) existing.investigation_id = investigation.investigation_id;
  const aiIssue = (await api('GET', '/api/ai-issues?days=365&page_size=1')).issues?.[0];
  if (aiIssue) existing.ai_issue_id = aiIssue.issue_id;
  // A pending proposal (an admin's edit) and an invited user.
  const health = await api('GET', '/api/settings/health-rules');
  const proposal = await api('PUT', '/api/settings/health-rules', { content: `# hostile walk\n${health.content}` }, await userToken('admin', 'hostile-admin'));
  if (proposal.change_id) existing.change_id = proposal.change_id;
  const invited = await api('POST', '/api/settings/users/invite', { email: 'hostile-walk@example.com', display_name: 'Hostile Walk', role: 'viewer' });
  if (invited.status === 'ok') existing.email = 'hostile-walk@example.com';
}, 120_000);

afterAll(async () => {
  agent.destroy();
  await service?.stop();
});

function tokenFor(route: RouteDeclaration): string | undefined {
  if (route.auth === 'public') return undefined;
  if (route.auth === 'ingest') return service.ingestToken;
  if (route.auth === 'scrape') return service.scrapeToken;
  return superadminToken;
}

/** Sends one request with node:http, so the target goes out exactly as written (fetch would resolve `..`). */
function send(probe: Probe, token: string | undefined): Promise<Answer> {
  const { hostname, port } = new URL(service.url);
  const headers: Record<string, string | number> = { Accept: 'application/json', ...probe.headers };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (probe.body !== undefined) {
    headers['Content-Type'] = probe.contentType ?? 'application/json';
    headers['Content-Length'] = Buffer.byteLength(probe.body);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: hostname === 'localhost' ? '127.0.0.1' : hostname, port, method: probe.method, path: probe.target, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', reject);
    req.end(probe.body);
  });
}

/** Why an answer to hostile input is wrong, or null when it is fine. */
function fault(answer: Answer): string | null {
  if (answer.status === 500) return 'an internal error (500)';
  // The local server's stand-in for API Gateway's answer to a Lambda that threw (infra/local/server.ts): a crash, not a provider.
  if (answer.status === 502 && answer.text.includes('The function failed.')) return 'the function crashed (502 from the local server)';
  const mediaType = answer.contentType.split(';')[0]!.trim().toLowerCase();
  if (answer.status >= 400 && mediaType !== 'application/problem+json')
    return `an error answer that is not problem+json (${answer.contentType || 'no Content-Type'})`;
  return null;
}

describe('hostile input through the local server', () => {
  it('never answers bad input on any declared route with an internal error, and every error is problem+json', async () => {
    const routes = allRoutes()
      .map(({ route }) => route)
      .filter((route) => route.method !== 'ANY');
    // Destructive routes last, each group in declaration order.
    const ordered = [...routes.filter((r) => r.method !== 'DELETE'), ...routes.filter((r) => r.method === 'DELETE')];
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    let probed = 0;
    const started = Date.now();
    for (const route of ordered) {
      const walkToken = tokenFor(route);
      const probes = probesOf(route);
      if (probes.length) probed += 1;
      for (const probe of probes) {
        // A logout ends its token's session: each probe of it logs out a session of its own, not the walk's.
        const token = route.path === '/api/auth/logout' ? await userToken('viewer', 'hostile-logout') : walkToken;
        const sentHeaders = probe.headers ? ` ${JSON.stringify(probe.headers)}` : '';
        const what = truncate(abbreviate(`${probe.target}${sentHeaders}${probe.body === undefined ? '' : ` [${probe.contentType}] ${probe.body}`}`), 200);
        sent += 1;
        let answer: Answer;
        try {
          answer = await send(probe, token);
        } catch (error) {
          failures.push(`${probe.method} ${probe.template}: sent ${what} → no answer: ${String(error)}`);
          continue;
        }
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const why = fault(answer);
        if (why) failures.push(`${probe.method} ${probe.template}: sent ${what} → ${why}: ${answer.status} ${truncate(answer.text, 300)}`);
      }
    }
    const byStatus = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`);
    console.info(
      `hostile input: ${sent} requests to ${probed} of ${ordered.length} routes in ${((Date.now() - started) / 1000).toFixed(1)} s (${byStatus.join(', ')})`,
    );
    expect(sent).toBeGreaterThan(0);
    expect(probed).toBe(ordered.length); // every route probed: one with no probe would be skipped silently
    // The ids the walk made or found: without them its probes of those routes stop at the 404.
    expect(Object.keys(existing).sort()).toEqual(['ai_issue_id', 'change_id', 'cluster_id', 'email', 'investigation_id', 'issue_id', 'report_id']);
    expect(failures).toEqual([]);
  }, 180_000);
});
