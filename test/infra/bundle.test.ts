// The artifact that gets deployed works: the auth bundle, built as `npm run build`
// and the stack build it (buildFunctionBundles: the Lambda-only environment
// credential provider, the lean cuts), logs a user in against DynamoDB Local.
import { execFileSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { transformSync, type Metafile } from 'esbuild';
import ts from 'typescript';
import { functionsForArrows } from '../../infra/arrow-functions.js';
import { bundleInputs, buildFunctionBundles, coldStartFiles, REPO_ROOT } from '../../infra/bundling.js';
import { defaultRuleText } from '../../shared/rules/defaults.js';
import { ensureBootstrapAdmin } from '../../shared/auth/bootstrap.js';
import { liveOpenApiDocument } from '../../shared/http/openapi-live.js';
import { TOOL_SCHEMAS_FILE } from '../../shared/chat/tool-schemas.js';
import { liveToolInputSchemas } from '../../shared/chat/tool-schemas-live.js';
import { useTestTables } from '../support/dynamo.js';
import { startFakeOpenAi } from '../support/fake-openai.js';
import { apiEvent, lambdaContext, type Handler } from '../support/events.js';
import { useTestJwtSecret } from '../support/tokens.js';

let handler: Handler;
let fleetHandler: Handler;
let settingsHandler: Handler;
let chatHandler: Handler;
let metafile: Metafile;
let settingsEntry: string;
let fleetBundle: string;
let authBundle: string;
let fleetInputs: string[];
let bundleText: string;
let outdir: string;

beforeAll(async () => {
  await useTestTables();
  useTestJwtSecret();
  await ensureBootstrapAdmin('bundle-admin', 'bundle-admin@example.com', 'bundle-password');
  outdir = await mkdtemp(join(tmpdir(), 'fleet-bundle-'));
  metafile = await buildFunctionBundles(['auth', 'chat', 'fleet', 'settings'], outdir);
  settingsEntry = relative(REPO_ROOT, join(outdir, 'settings', 'index.mjs'));
  const inputs = bundleInputs(metafile);
  const inputsOf = (name: string) => [...inputs].find(([entry]) => entry.endsWith(`/${name}/index.mjs`))![1];
  bundleText = JSON.stringify(inputsOf('auth'));
  fleetInputs = inputsOf('fleet');
  // A function's code: its entry and every chunk beside it.
  const codeOf = (name: string) =>
    readdirSync(join(outdir, name))
      .filter((file) => file.endsWith('.mjs'))
      .map((file) => readFileSync(join(outdir, name, file), 'utf8'))
      .join('\n');
  authBundle = codeOf('auth');
  fleetBundle = codeOf('fleet');
  ({ handler } = (await import(pathToFileURL(join(outdir, 'auth', 'index.mjs')).href)) as { handler: Handler });
  ({ handler: fleetHandler } = (await import(pathToFileURL(join(outdir, 'fleet', 'index.mjs')).href)) as { handler: Handler });
  ({ handler: settingsHandler } = (await import(pathToFileURL(join(outdir, 'settings', 'index.mjs')).href)) as { handler: Handler });
  ({ handler: chatHandler } = (await import(pathToFileURL(join(outdir, 'chat', 'index.mjs')).href)) as { handler: Handler });
}, 60_000);

/** The superadmin's sign-in through the built auth bundle. */
const signIn = () =>
  handler(
    apiEvent({
      method: 'POST',
      path: '/api/auth/login',
      routeKey: 'POST /api/auth/login',
      body: JSON.stringify({ username: 'bundle-admin', password: 'bundle-password' }),
    }),
    lambdaContext,
  );

/** Its bearer header. */
const bearer = async (): Promise<Record<string, string>> => ({ authorization: `Bearer ${JSON.parse((await signIn()).body!).access_token as string}` });

describe('the build', () => {
  it("reads no function's configuration: infra/bundling.ts imports under settings a function would refuse", () => {
    const bundling = pathToFileURL(join(REPO_ROOT, 'infra', 'bundling.ts')).href;
    const script = `await import(${JSON.stringify(bundling)}); console.log('imported');`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, LOG_LEVEL: 'trace', STAGE: 'not a stage' },
    }).toString();
    expect(out.trim()).toBe('imported');
  });
});

describe('the built auth Lambda bundle', () => {
  it('carries the environment-only credential provider, not the SDK chain', () => {
    expect(bundleText).toContain('infra/lambda/credentials.ts');
    expect(bundleText).not.toContain('credential-provider-sso');
    expect(bundleText).not.toContain('credential-provider-ini');
  });

  it('logs in and answers /me through DynamoDB with environment credentials', async () => {
    const login = await signIn();
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
    const rules = await fleetHandler(
      apiEvent({ method: 'GET', path: '/api/fleet/rules', routeKey: 'GET /api/fleet/rules', headers: await bearer() }),
      lambdaContext,
    );
    expect(rules.statusCode).toBe(200);
    expect(JSON.parse(rules.body!)).toMatchObject({ lookback_days: 7, classification: { healthy: 80, warning: 60 } });
  });
});

describe('code splitting (issue 21 §4)', () => {
  it('loads a cold start from one file: the chunks an entry imported statically are joined into it, and the on-demand chunks import them from it', () => {
    for (const name of ['auth', 'chat', 'fleet', 'settings']) {
      const entry = relative(REPO_ROOT, join(outdir, name, 'index.mjs'));
      expect(coldStartFiles(metafile, entry).eager).toEqual([entry]);
      // On disk as in the metafile: the entry names a chunk only in an import().
      expect(readFileSync(join(outdir, name, 'index.mjs'), 'utf8')).not.toMatch(/(from|import)\s*["']\.\/chunk-/);
    }
    // Settings' split build had 8 static chunks; what its on-demand chunks shared with them now comes from the entry.
    const fromEntry = coldStartFiles(metafile, settingsEntry).lazy.filter((file) =>
      /from\s*"\.\/index\.mjs"/.test(readFileSync(join(REPO_ROOT, file), 'utf8')),
    );
    expect(fromEntry.length).toBeGreaterThanOrEqual(3);
  });

  it("rewrites every arrow of the bundles' inputs that reads nothing enclosing, into code that still parses (infra/arrow-functions.ts)", () => {
    const convertible = (path: string, text: string) => {
      let count = 0;
      const reads = (node: ts.Node): boolean =>
        node.kind === ts.SyntaxKind.ThisKeyword ||
        node.kind === ts.SyntaxKind.SuperKeyword ||
        ts.isMetaProperty(node) ||
        (ts.isIdentifier(node) && (node.text === 'arguments' || node.text === 'eval')) ||
        (ts.forEachChild(node, reads) ?? false);
      const visit = (node: ts.Node, parent?: ts.Node): void => {
        if (ts.isArrowFunction(node) && !(parent && ts.isExpressionStatement(parent)) && !reads(node)) count++;
        ts.forEachChild(node, (child) => visit(child, node));
      };
      visit(ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS));
      return count;
    };
    // Wired in: settings' cold start carried about 1,000 arrows before, now esbuild's own module wrappers and those that read `this`.
    const entry = join(outdir, 'settings', 'index.mjs');
    let arrows = 0;
    const count = (node: ts.Node): void => {
      if (ts.isArrowFunction(node)) arrows++;
      ts.forEachChild(node, count);
    };
    count(ts.createSourceFile(entry, readFileSync(entry, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.JS));
    expect(arrows).toBeLessThan(100);
    const inputs = new Set([...bundleInputs(metafile).values()].flat().filter((input) => /\.(ts|[cm]?js)$/.test(input) && !input.includes(':')));
    expect(inputs.size).toBeGreaterThan(300);
    for (const input of inputs) {
      const path = join(REPO_ROOT, input);
      const rewritten = functionsForArrows(ts, path, readFileSync(path, 'utf8'));
      expect(convertible(path, rewritten), input).toBe(0);
      expect(() => transformSync(rewritten, { loader: path.endsWith('.ts') ? 'ts' : 'js' }), input).not.toThrow();
    }
  });

  it("makes one `require` per cold start: a joined chunk's banner that nothing reads is dropped (settings' joined entry made nine)", () => {
    for (const name of ['auth', 'chat', 'fleet', 'settings']) {
      const entry = readFileSync(join(outdir, name, 'index.mjs'), 'utf8');
      expect(entry.match(/\bcreateRequire as [\w$]+\s*\}\s*from\s*["']node:module["']/g), name).toHaveLength(1);
    }
  });

  it("loads the settings group's YAML parser, Lambda client and SES only with the routes that use them, from chunks beside the bundle", async () => {
    const { eager, lazy } = coldStartFiles(metafile, settingsEntry);
    const inputsOf = (files: string[]) => files.flatMap((file) => Object.keys(metafile.outputs[file]!.inputs));
    const onDemand = ['node_modules/yaml/', 'node_modules/@aws-sdk/client-lambda/', 'node_modules/@aws-sdk/client-ses/', 'shared/scoring/fleet-view.ts'];
    for (const path of onDemand) {
      expect(inputsOf(eager).some((input) => input.startsWith(path))).toBe(false);
      expect(inputsOf(lazy).some((input) => input.startsWith(path))).toBe(true);
    }
    // A rule write through the built bundle loads the parser's chunk: a valid text applies, a broken one is refused by it.
    const headers = await bearer();
    const put = (content: string) =>
      settingsHandler(
        apiEvent({ method: 'PUT', path: '/api/settings/health-rules', routeKey: 'PUT /api/settings/health-rules', headers, body: JSON.stringify({ content }) }),
        lambdaContext,
      );
    expect((await put('scoring: [unclosed')).statusCode).toBe(422);
    const applied = await put(defaultRuleText('health-rules'));
    expect(applied.statusCode).toBe(200);
  });
});

describe('lean bundles (issue 21 §4)', () => {
  const JSON_SCHEMA_DIALECT = 'json-schema.org/draft/2020-12/schema';
  const EVENT_STREAMS = 'node_modules/@smithy/core/dist-es/submodules/event-streams/';

  it("carry zod's JSON-schema conversion only where our code converts (zod/mini): neither auth nor fleet, auth answering the document the build wrote", async () => {
    for (const bundle of [authBundle, fleetBundle]) expect(bundle).not.toContain(JSON_SCHEMA_DIALECT);
    // …nor the classic API, whose schema classes bring the conversion (and every other method) along.
    for (const inputs of [JSON.parse(bundleText) as string[], fleetInputs])
      expect(inputs.filter((input) => input.includes('node_modules/zod/v4/classic/'))).toEqual([]);
    // Nor every group's route declarations: the auth bundle's inputs hold its own group only.
    expect(bundleText).toContain('shared/routes/auth.ts');
    expect(bundleText).not.toContain('shared/routes/settings.ts');
    const doc = await handler(apiEvent({ method: 'GET', path: '/api/openapi.json', routeKey: 'GET /api/openapi.json' }), lambdaContext);
    expect(doc.statusCode).toBe(200);
    expect(JSON.parse(doc.body!)).toEqual(JSON.parse(JSON.stringify(liveOpenApiDocument())));
  });

  it('carry no JSON-schema conversion for the chat tools either: the build writes their input schemas beside the bundle', () => {
    const chatCode = readdirSync(join(outdir, 'chat'))
      .filter((file) => file.endsWith('.mjs'))
      .map((file) => readFileSync(join(outdir, 'chat', file), 'utf8'))
      .join('\n');
    expect(chatCode).not.toContain(JSON_SCHEMA_DIALECT);
    expect(JSON.parse(readFileSync(join(outdir, 'chat', TOOL_SCHEMAS_FILE), 'utf8'))).toEqual(liveToolInputSchemas());
  });

  it("loads chat's assistant (its tools, the SQL snapshot and the fleet view) with the first message, from a chunk", () => {
    const { eager, lazy } = coldStartFiles(metafile, relative(REPO_ROOT, join(outdir, 'chat', 'index.mjs')));
    const inputsOf = (files: string[]) => files.flatMap((file) => Object.keys(metafile.outputs[file]!.inputs));
    for (const path of ['shared/chat/assistant.ts', 'shared/chat/tools.ts', 'shared/chat/sql.ts', 'shared/scoring/fleet-view.ts', 'shared/llm/tool-loop.ts']) {
      expect(inputsOf(eager), path).not.toContain(path);
      expect(inputsOf(lazy), path).toContain(path);
    }
    // A reset forgets the conversation without the assistant: the histories are in the entry, shared with the chunk.
    expect(inputsOf(eager)).toContain('shared/chat/conversations.ts');
  });

  it('the chat bundle tells the model the tool schemas of the file beside it (a message through the built bundle, its chunk loaded); a reset forgets the conversation the chunk keeps', async () => {
    // Marked, so the request shows which copy the bundle read (it carries no conversion to make its own).
    const file = join(outdir, 'chat', TOOL_SCHEMAS_FILE);
    const schemas = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
    for (const [name, schema] of Object.entries(schemas)) schema.description = `${name}: as written beside the bundle`;
    writeFileSync(file, JSON.stringify(schemas));
    const openai = await startFakeOpenAi();
    vi.stubEnv('LLM_PROVIDER', 'openai');
    vi.stubEnv('LLM_MODEL', 'gpt-4o-mini');
    vi.stubEnv('LLM_BASE_URL', openai.baseUrl);
    try {
      openai.enqueueText('Nothing is at risk.');
      const answer = await chatHandler(
        apiEvent({
          method: 'POST',
          path: '/api/chat/message',
          routeKey: 'POST /api/chat/message',
          headers: await bearer(),
          body: JSON.stringify({ message: 'Anything at risk?' }),
        }),
        lambdaContext,
      );
      expect(answer.statusCode).toBe(200);
      const tools = openai.answered()[0]!.body.tools!;
      expect(tools.map((t) => t.function.name).sort()).toEqual(Object.keys(liveToolInputSchemas()).sort());
      for (const tool of tools) expect(tool.function.parameters).toEqual(schemas[tool.function.name]);

      // The reset route (the entry's) and the message route (the chunk's) share one history.
      const call = async (route: 'message' | 'reset', message?: string) =>
        chatHandler(
          apiEvent({
            method: 'POST',
            path: `/api/chat/${route}`,
            routeKey: `POST /api/chat/${route}`,
            headers: await bearer(),
            ...(message === undefined ? {} : { body: JSON.stringify({ message }) }),
          }),
          lambdaContext,
        );
      const userTexts = (request: number) =>
        openai
          .answered()
          [request]!.body.messages.filter((m) => m.role === 'user')
          .map((m) => JSON.stringify(m.content));
      openai.enqueueText('Still nothing.');
      expect((await call('message', 'second question')).statusCode).toBe(200);
      expect(userTexts(1).join()).toContain('Anything at risk?');
      const reset = await call('reset');
      expect(reset.statusCode).toBe(200);
      expect(JSON.parse(reset.body!)).toEqual({ status: 'ok', message: 'Conversation cleared.' });
      openai.enqueueText('None.');
      expect((await call('message', 'third question')).statusCode).toBe(200);
      expect(userTexts(2)).toHaveLength(1);
      expect(userTexts(2).join()).toContain('third question');
    } finally {
      vi.unstubAllEnvs();
      await openai.close();
    }
  });

  it('carry no event-stream codec, and no SDK client for DynamoDB or Secrets Manager (both through shared/aws/)', () => {
    expect(JSON.parse(bundleText).some((input: string) => input.startsWith(EVENT_STREAMS))).toBe(false);
    expect(fleetInputs.some((input) => input.startsWith(EVENT_STREAMS))).toBe(false);
    for (const inputs of [JSON.parse(bundleText) as string[], fleetInputs]) {
      expect(inputs.filter((input) => /@aws-sdk\/(client-dynamodb|lib-dynamodb|client-secrets-manager)\//.test(input))).toEqual([]);
      expect(inputs).toContain('shared/aws/json-call.ts');
    }
    expect(fleetBundle).toContain('GetSecretValue');
  });

  it('require every Node built-in, never import one as an ES module (whose facade reads every lazy export)', () => {
    for (const bundle of [authBundle, fleetBundle]) expect(bundle).not.toMatch(/(from|import)\s*["'](node:)?(http|https|fs|crypto|util|stream|zlib|url)["']/);
  });

  it('load neither zlib nor fs/promises at import: the first answer gzipped, pack read or file read loads them', () => {
    for (const name of ['auth', 'fleet', 'settings']) {
      const entry = pathToFileURL(join(outdir, name, 'index.mjs')).href;
      const script = `const before=new Set(process.moduleLoadList);await import(${JSON.stringify(entry)});console.log(JSON.stringify(process.moduleLoadList.filter((m)=>!before.has(m))))`;
      const loaded = JSON.parse(
        execFileSync(process.execPath, ['--input-type=module', '-e', script], {
          env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', LOG_LEVEL: 'silent' },
        }).toString(),
      ) as string[];
      expect(loaded, name).toContain('NativeModule https');
      expect(
        loaded.filter((m) => /^NativeModule (zlib|fs\/promises)$/.test(m)),
        name,
      ).toEqual([]);
    }
  });

  it("load no web streams: middy's import of them is a stub that throws if a streamed response ever asks", () => {
    for (const bundle of [authBundle, fleetBundle]) {
      expect(bundle).not.toMatch(/from\s*["']node:stream\/web["']/);
      expect(bundle).toContain("Node's web streams (middy's streamed responses) is not bundled");
    }
  });
});
