// The served OpenAPI document is one a client generator can take: Redocly's
// recommended-strict ruleset passes with zero errors, every operation
// declares its 4XX answers, and live answers of every GET route validate
// against the document's own schemas (ajv, JSON Schema 2020-12).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalService } from '../../infra/local/service.js';
import { startTestService } from '../support/local-service.js';
import { userToken } from '../support/tokens.js';

type Operation = {
  responses: Record<string, { content?: Record<string, { schema: object }>; headers?: Record<string, unknown> }>;
  parameters: { name: string; in: string }[];
};
let service: LocalService;
let admin: string;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, object>; securitySchemes: Record<string, object> } };

beforeAll(async () => {
  service = await startTestService({ demoClusters: 12, schedules: { recompute: 3600 } });
  await service.startupRuns;
  admin = await userToken('superadmin', 'openapi-admin');
  doc = (await (await fetch(`${service.url}/api/openapi.json`)).json()) as typeof doc;
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

const get = async (path: string) => {
  const res = await fetch(`${service.url}${path}`, { headers: { Authorization: `Bearer ${admin}` } });
  // GET /api/metrics answers Prometheus text (its declared media type); everything else JSON.
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, etag: res.headers.get('etag'), body: (type.includes('json') ? await res.json() : await res.text()) as any };
};

describe('the served OpenAPI document', () => {
  it('passes redocly lint with recommended-strict: zero errors', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'openapi-')), 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    const result = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile('npx', ['redocly', 'lint', '--extends', 'recommended-strict', '--format', 'summary', file], { timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? 1 : 0, output: `${stdout}${stderr}` }),
      );
    });
    expect(result.output).not.toMatch(/error\s+\S+: \d+/);
    expect(result.code, result.output).toBe(0);
  }, 90_000);

  it("carries the release's version, as package.json says it", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect((doc as unknown as { info: { version: string } }).info.version).toBe(pkg.version);
  });

  it("says which routes also take the service's static tokens (ingest, scrape), and which none", () => {
    const security = (path: string, method = 'get') => (doc.paths[path]![method] as { security?: unknown }).security;
    expect(security('/api/metrics')).toEqual([{ bearer: [] }, { scrapeToken: [] }]);
    expect(security('/api/ingest/alerts', 'post')).toEqual([{ bearer: [] }, { ingestToken: [] }]);
    expect(security('/api/fleet/scores')).toBeUndefined(); // the document's default: a user's JWT
    expect(security('/api/health-check')).toEqual([]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearer', 'ingestToken', 'scrapeToken']);
  });

  it('declares 4XX answers for every operation: 401/403 from auth and roles, 422 from inputs, and the route-specific ones', () => {
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, op })));
    expect(ops.filter(({ op }) => !Object.keys(op.responses).some((s) => s.startsWith('4'))).map(({ key }) => key)).toEqual([]);
    const statuses = (key: string) => Object.keys(ops.find((o) => o.key === key)!.op.responses).sort();
    expect(statuses('POST /api/auth/login')).toEqual(expect.arrayContaining(['401', '413', '422', '429']));
    expect(statuses('PATCH /api/settings/users/{email}')).toEqual(expect.arrayContaining(['401', '403', '404', '409', '422']));
    expect(statuses('POST /api/patrol/trigger')).toEqual(expect.arrayContaining(['200', '202', '401', '403']));
    expect(statuses('GET /api/fleet/scores')).not.toContain('403'); // every role may read it
  });

  it('lists the ETag a read answers and a write takes back as If-Match, and Retry-After on 429 and 503', () => {
    const op = (method: string, path: string) => doc.paths[path]![method]!;
    for (const [method, path] of [
      ['get', '/api/issues/{issue_id}'],
      ['patch', '/api/issues/{issue_id}'],
      ['get', '/api/ai-issues/{issue_id}'],
      ['patch', '/api/ai-issues/{issue_id}'],
      ['get', '/api/settings/general'],
      ['put', '/api/settings/general'],
      ['get', '/api/settings/health-rules'],
      ['put', '/api/settings/risk-rules'],
    ] as const) {
      expect(op(method, path).responses['200']!.headers, `${method} ${path}`).toHaveProperty('ETag');
      if (method !== 'get') expect(op(method, path).parameters).toContainEqual(expect.objectContaining({ name: 'if-match', in: 'header' }));
    }
    // A revalidating read's ETag is a validator for If-None-Match (304), not a version for If-Match.
    expect(Object.keys(op('get', '/api/issues').responses['200']!.headers ?? {}).sort()).toEqual(['Cache-Control', 'ETag']);
    expect(op('get', '/api/issues').parameters).toContainEqual(expect.objectContaining({ name: 'if-none-match', in: 'header' }));
    expect(op('get', '/api/fleet/rules').responses['200']!.headers).toBeUndefined();
    expect(op('post', '/api/auth/login').responses['429']!.headers).toHaveProperty('Retry-After');
    expect(op('get', '/api/fleet/scores').responses['503']!.headers).toHaveProperty('Retry-After');
  });

  it("says a count is never negative (minimum 0), not zod's safe-integer bound", () => {
    // A count by its name: clusters, alerts, issues, tokens, runs, errors, rows accepted or refused, a class's or level's size.
    const COUNT =
      /(^|_)(count|total|tokens|runs|calls|errors|samples|attempts|rounds|pages)(_|$)|^(accepted|refused|upserted)(_last)?$|^(critical|warning|healthy|info|ongoing|resolved|unassigned|clusters|flagged|clusters_scored|tier_s_at_risk)$/i;
    const found: { where: string; name: string; minimum: unknown }[] = [];
    const walk = (node: unknown, where: string, name: string) => {
      if (Array.isArray(node)) {
        for (const n of node) walk(n, where, name);
        return;
      }
      if (!node || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (types.includes('integer') && COUNT.test(name)) found.push({ where, name, minimum: schema.minimum });
      for (const [key, value] of Object.entries(schema)) {
        if (key === 'properties') for (const [property, sub] of Object.entries(value as object)) walk(sub, where, property);
        else if (typeof value === 'object') walk(value, where, name);
      }
    };
    for (const [path, methods] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(methods)) walk(op.responses, `${method} ${path}`, '');
    for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema, `#/components/schemas/${name}`, '');
    expect(found.length).toBeGreaterThan(100); // the fleet, issue, patrol, investigation, usage and status counts
    expect(found.filter((c) => typeof c.minimum !== 'number' || c.minimum < 0).map((c) => `${c.where} ${c.name}: minimum ${c.minimum}`)).toEqual([]);
  });

  it('every GET answer validates against the document (ajv), ids taken from the lists', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const issue = (await get('/api/issues?days=30')).body.issues[0];
    const aiIssue = (await get('/api/ai-issues?days=30')).body.issues[0];
    const investigation = (await get('/api/investigations?days=30')).body.investigations[0];
    await fetch(`${service.url}/api/patrol/trigger`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    const report = (await get('/api/patrol')).body.reports[0];
    const ids: Record<string, string> = {
      issue_id: issue.issue_id,
      investigation_id: investigation.investigation_id,
      report_id: report.report_id,
      cluster_id: (await get('/api/fleet/scores')).body.scores[0].cluster_id,
    };
    const failures: string[] = [];
    let checked = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      const op = methods.get;
      if (!op) continue;
      let url = path;
      for (const p of op.parameters.filter((x) => x.in === 'path')) {
        const id = path.startsWith('/api/ai-issues') && p.name === 'issue_id' ? aiIssue.issue_id : ids[p.name];
        if (!id) break;
        url = url.replace(`{${p.name}}`, encodeURIComponent(id));
      }
      if (url.includes('{')) continue; // a parameter the demo data has no value for (config change, version)
      const { status, type, etag, body } = await get(url);
      if (status !== 200) {
        if (status !== 503) failures.push(`${url}: ${status}`); // 503: a capability not configured here (embed)
        continue;
      }
      // The ETag is declared where it is answered, and only there.
      if (Boolean(etag) !== Boolean(op.responses['200']!.headers?.ETag))
        failures.push(`${url}: ETag ${etag ?? 'absent'}, declared ${Boolean(op.responses['200']!.headers?.ETag)}`);
      const declared = Object.keys(op.responses['200']!.content!)[0]!;
      if (type !== declared) failures.push(`${url}: served ${type}, declared ${declared}`);
      const schema = op.responses['200']!.content![declared]!.schema;
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
      if (!validate(body)) failures.push(`${url}: ${ajv.errorsText(validate.errors?.slice(0, 3))}`);
      checked++;
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(40);
  }, 120_000);
});
