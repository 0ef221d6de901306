// The artifact that gets deployed works: the auth bundle, built as `npm run build`
// and the stack build it (buildFunctionBundles: the Lambda-only environment
// credential provider, the lean cuts), logs a user in against DynamoDB Local.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { buildFunctionBundles } from '../../infra/bundling.js';
import { ensureBootstrapAdmin } from '../../shared/auth/bootstrap.js';
import { liveOpenApiDocument } from '../../shared/http/openapi-live.js';
import { useTestTables } from '../support/dynamo.js';
import { apiEvent, lambdaContext, type Handler } from '../support/events.js';
import { useTestJwtSecret } from '../support/tokens.js';

let handler: Handler;
let fleetHandler: Handler;
let fleetBundle: string;
let authBundle: string;
let fleetInputs: string[];
let bundleText: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  await ensureBootstrapAdmin('bundle-admin', 'bundle-admin@example.com', 'bundle-password');
  const outdir = await mkdtemp(join(tmpdir(), 'fleet-bundle-'));
  const metafile = await buildFunctionBundles(['auth', 'fleet'], outdir);
  const inputsOf = (name: string) => Object.keys(Object.entries(metafile.outputs).find(([file]) => file.endsWith(`/${name}/index.mjs`))![1].inputs);
  bundleText = JSON.stringify(inputsOf('auth'));
  fleetInputs = inputsOf('fleet');
  authBundle = readFileSync(join(outdir, 'auth', 'index.mjs'), 'utf8');
  fleetBundle = readFileSync(join(outdir, 'fleet', 'index.mjs'), 'utf8');
  ({ handler } = (await import(pathToFileURL(join(outdir, 'auth', 'index.mjs')).href)) as { handler: Handler });
  ({ handler: fleetHandler } = (await import(pathToFileURL(join(outdir, 'fleet', 'index.mjs')).href)) as { handler: Handler });
}, 60_000);

describe('the built auth Lambda bundle', () => {
  it('carries the environment-only credential provider, not the SDK chain', () => {
    expect(bundleText).toContain('infra/lambda/credentials.ts');
    expect(bundleText).not.toContain('credential-provider-sso');
    expect(bundleText).not.toContain('credential-provider-ini');
  });

  it('logs in and answers /me through DynamoDB with environment credentials', async () => {
    const login = await handler(
      apiEvent({
        method: 'POST',
        path: '/api/auth/login',
        routeKey: 'POST /api/auth/login',
        body: JSON.stringify({ username: 'bundle-admin', password: 'bundle-password' }),
      }),
      lambdaContext,
    );
    expect(login.statusCode).toBe(200);
    const token = JSON.parse(login.body!).access_token as string;
    const me = await handler(
      apiEvent({ method: 'GET', path: '/api/auth/me', routeKey: 'GET /api/auth/me', headers: { authorization: `Bearer ${token}` } }),
      lambdaContext,
    );
    expect(me.statusCode).toBe(200);
    expect(JSON.parse(me.body!)).toMatchObject({ username: 'bundle-admin', role: 'superadmin' });
  });

  it('the fleet bundle carries no YAML parser and reads the shipped rules from the JSON beside it', async () => {
    expect(fleetBundle).not.toContain('parseDocument');
    const login = await handler(
      apiEvent({
        method: 'POST',
        path: '/api/auth/login',
        routeKey: 'POST /api/auth/login',
        body: JSON.stringify({ username: 'bundle-admin', password: 'bundle-password' }),
      }),
      lambdaContext,
    );
    const token = JSON.parse(login.body!).access_token as string;
    const rules = await fleetHandler(
      apiEvent({ method: 'GET', path: '/api/fleet/rules', routeKey: 'GET /api/fleet/rules', headers: { authorization: `Bearer ${token}` } }),
      lambdaContext,
    );
    expect(rules.statusCode).toBe(200);
    expect(JSON.parse(rules.body!)).toMatchObject({ lookback_days: 7, classification: { healthy: 80, warning: 60 } });
  });
});

describe('lean bundles (issue 21 §4)', () => {
  const JSON_SCHEMA_DIALECT = 'json-schema.org/draft/2020-12/schema';
  const EVENT_STREAMS = 'node_modules/@smithy/core/dist-es/submodules/event-streams/';

  it("carry zod's JSON-schema conversion only where our code converts: neither auth nor fleet, auth answering the document the build wrote", async () => {
    for (const bundle of [authBundle, fleetBundle]) {
      expect(bundle).not.toContain(JSON_SCHEMA_DIALECT);
      expect(bundle).toContain("zod's JSON-schema conversion is not bundled");
    }
    // Nor every group's route declarations: the auth bundle's inputs hold its own group only.
    expect(bundleText).toContain('shared/routes/auth.ts');
    expect(bundleText).not.toContain('shared/routes/settings.ts');
    const doc = await handler(apiEvent({ method: 'GET', path: '/api/openapi.json', routeKey: 'GET /api/openapi.json' }), lambdaContext);
    expect(doc.statusCode).toBe(200);
    expect(JSON.parse(doc.body!)).toEqual(JSON.parse(JSON.stringify(liveOpenApiDocument())));
  });

  it('carry no event-stream codec, and only the one Secrets Manager command', () => {
    expect(JSON.parse(bundleText).some((input: string) => input.startsWith(EVENT_STREAMS))).toBe(false);
    expect(fleetInputs.some((input) => input.startsWith(EVENT_STREAMS))).toBe(false);
    expect(fleetBundle).toContain('GetSecretValue');
    expect(fleetBundle).not.toContain('PutSecretValue');
  });
});
