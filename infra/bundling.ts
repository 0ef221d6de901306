// The esbuild options of every Lambda bundle, in one place: used by the construct
// that owns Lambda defaults (infra/constructs/group-function.ts, at cdk synth) and by
// `npm run build` (infra/build.ts), so the bundle the size check measures is the
// bundle that gets deployed. Imports no CDK and, at run time, no esbuild.
import { copyFileSync, cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { parse } from 'yaml';
import { PricingFile } from '../shared/llm/pricing.js';
import { checkRuleText } from '../shared/rules/check.js';
import { RULE_SET_NAMES, type RuleSetName } from '../shared/rules/defaults.js';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, buildSync, type BuildOptions, type Metafile, type Plugin } from 'esbuild';
import { SQL_RUNTIME_FILES } from '../shared/chat/sql.js';
import { OPENAPI_FILE } from '../shared/http/openapi-document.js';
import { liveOpenApiDocument } from '../shared/http/openapi-live.js';
import { TOOL_SCHEMAS_FILE } from '../shared/chat/tool-schemas.js';
import { liveToolInputSchemas } from '../shared/chat/tool-schemas-live.js';
import { joinEagerChunks } from './eager-join.js';
import { arrowFunctionsPlugin } from './arrow-functions.js';
import { pureSchemasPlugin } from './pure-schemas.js';
import { functionSize } from './function-sizes.js';

/** Repository root (this file lives in `infra/`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(import.meta.url);

/** `functions/<name>.ts`: one entry per route group, per worker and per deploy step. */
export function functionEntry(name: string): string {
  return join(REPO_ROOT, 'functions', `${name}.ts`);
}

/**
 * ESM bundles need a real `require` for the few CommonJS dependencies that call
 * `require('node:…')` at run time; esbuild's ESM output has none. Every output file gets
 * this banner, but only the file holding esbuild's `__require` (the runtime helpers) reads
 * it. Made on first call, so a joined cold start (infra/eager-join.ts) keeps that one
 * file's: esbuild keeps any `createRequire(import.meta.url)` call (an `import.meta` read
 * is never dropped), and settings' joined entry made nine, ≈ 8 KB of allocation each.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; let __required; const require = function (id) { return (__required ??= __createRequire(import.meta.url))(id); };";

export const BUNDLE = {
  platform: 'node',
  format: 'esm',
  /** Matches the Lambda runtime (nodejs22.x), whatever Node runs the build. */
  target: 'node22',
  minify: true,
  /**
   * External `.map` next to the bundle, shipped in the asset for offline symbolication;
   * not loaded at run time (no `--enable-source-maps`: see LAMBDA_NODE_OPTIONS).
   */
  sourcemap: true,
  /** Mappings only: stack traces need no embedded sources, and the zip stays small. */
  sourcesContent: false,
  /** Prefer ES module builds (the AWS SDK v3 ships `dist-es`) so tree-shaking works. */
  mainFields: ['module', 'main'],
  /** Nothing external: what the SDK clients a function uses on demand need is bundled (pinned by the lockfile, tree-shaken; an entry file and its chunks to load). */
  external: [] as string[],
  banner: ESM_REQUIRE_BANNER,
  /** Lambda loads `index.mjs` as ESM without a package.json. */
  outputFile: 'index.mjs',
  /**
   * Code splitting: what a function loads with `import()` (the YAML checker on rule writes,
   * the Lambda client on a worker start, SES on an invitation, the LDAP client on an LDAP
   * login, the SDK's own lazy parts) is a chunk beside `index.mjs`, loaded by the request
   * that needs it, so the other routes' cold starts neither compile nor run it (issue 21 §4).
   */
  chunkNames: 'chunk-[hash]',
} as const;

/**
 * Node options of every Lambda but those that declare their own (`nodeOptionsOf`), and of the
 * benches that measure a bundle as those Lambdas run it. A 64 MB young generation because an
 * API group computes the fleet view again every minute, tens of megabytes of results that all
 * stay alive until answered: with V8's 16 MB default they are copied between semi-spaces
 * several times, about half of scoring 10,000 clusters in a warm container (the engine bench).
 * V8 grows the young generation only under that pressure, so small routes pay nothing. The
 * recompute worker runs V8's default (shared/workers.ts says why).
 * No `--enable-source-maps`: it makes Node read and parse the bundle's 0.7–1.2 MB
 * map on every cold start (measured by `npm run bench -- cold-start`; infra/README.md,
 * "Source maps", says how to symbolicate a stack trace instead).
 */
export const LAMBDA_NODE_OPTIONS = '--max-semi-space-size=64';

/** A function's NODE_OPTIONS as deployed: its declared own (function-sizes.ts), else every Lambda's; `''` sets none. */
export function nodeOptionsOf(name: string): string {
  return functionSize(name)?.nodeOptions ?? LAMBDA_NODE_OPTIONS;
}

/**
 * Lambda-only substitutions. The SDK's default credential chain becomes an
 * environment-only provider: inside Lambda the role's credentials are always
 * in the environment (see infra/lambda/credentials.ts).
 */
export const BUNDLE_ALIASES = {
  '@aws-sdk/credential-provider-node': join(REPO_ROOT, 'infra', 'lambda', 'credentials.ts'),
} as const;

/** The default rule sets (rules/*.yaml), read at run time by shared/rules/defaults.ts. */
export const RULES_DIR = join(REPO_ROOT, 'rules');

/**
 * Puts the shipped YAML files beside each bundle (`<outdir>/<name>/rules/`): the
 * default rule sets (shown and edited through the API) and the LLM price list,
 * each with its validated, parsed form as JSON, which is what the Lambdas read.
 * A file that does not validate fails the build.
 */
export function copyRuleDefaults(outdir: string, names: readonly string[]): void {
  const parsed = readdirSync(RULES_DIR)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => {
      const name = basename(file, '.yaml');
      const text = readFileSync(join(RULES_DIR, file), 'utf8');
      if (name === 'llm-pricing') return { name, json: JSON.stringify(PricingFile.parse(parse(text))) };
      if (!(RULE_SET_NAMES as readonly string[]).includes(name)) throw new Error(`rules/${file}: not a rule set or a known shipped file`);
      const checked = checkRuleText(name as RuleSetName, text);
      if (!checked.ok) throw new Error(`rules/${file}: ${checked.message}`);
      return { name, json: JSON.stringify(checked.value) };
    });
  for (const name of names) {
    const dir = join(outdir, name, 'rules');
    cpSync(RULES_DIR, dir, { recursive: true });
    for (const p of parsed) writeFileSync(join(dir, `${p.name}.json`), p.json);
  }
}

/** Every Lambda entry: `functions/*.ts` (route groups, workers and the deploy step). */
export function functionNames(): string[] {
  return readdirSync(join(REPO_ROOT, 'functions'))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => basename(file, '.ts'))
    .sort();
}

/** The options every Lambda-shaped bundle shares (function bundles, the SQL worker, the benches' bundles). */
export const lambdaBuildOptions = (): BuildOptions => ({
  bundle: true,
  platform: BUNDLE.platform,
  format: BUNDLE.format,
  target: BUNDLE.target,
  minify: BUNDLE.minify,
  mainFields: [...BUNDLE.mainFields],
  banner: { js: BUNDLE.banner },
});

/**
 * One function's bundle: `<outdir>/<name>/index.mjs` (+ `.map`) and the chunks of what it
 * imports dynamically, beside it. One esbuild run per function, so no chunk is shared
 * between two functions' folders (each folder is a Lambda's whole code).
 */
export function esbuildOptions(name: string, outdir: string): BuildOptions {
  const [stem, extension] = BUNDLE.outputFile.split('.') as [string, string];
  return {
    entryPoints: [{ in: functionEntry(name), out: stem }],
    outdir: join(outdir, name),
    outExtension: { '.js': `.${extension}` },
    splitting: true,
    chunkNames: BUNDLE.chunkNames,
    ...lambdaBuildOptions(),
    sourcemap: BUNDLE.sourcemap,
    sourcesContent: BUNDLE.sourcesContent,
    external: [...BUNDLE.external],
    alias: { ...BUNDLE_ALIASES },
    logLevel: 'warning',
    // Output paths in the metafile relative to the repository, for emitRuntimeAssets.
    absWorkingDir: REPO_ROOT,
    metafile: true,
  };
}

/**
 * Files a bundle needs beside it at run time, decided by what it contains:
 * the run_sql tool's worker thread (its own bundle, `sql-worker.mjs`) and
 * SQLite's WebAssembly (shared/chat/sql.ts), the runbooks under
 * `knowledge/` (shared/knowledge/search.ts), the OpenAPI document
 * (shared/http/openapi-document.ts), built here from the route table, and the chat
 * tools' input schemas (shared/chat/tool-schemas.ts), converted here from the tools.
 */
export function emitRuntimeAssets(metafile: Metafile): void {
  let openApi: ReturnType<typeof liveOpenApiDocument> | undefined;
  let toolSchemas: ReturnType<typeof liveToolInputSchemas> | undefined;
  for (const [file, inputs] of bundleInputs(metafile)) {
    const dir = dirname(resolve(REPO_ROOT, file));
    if (inputs.includes('shared/chat/sql.ts')) {
      buildSync({
        entryPoints: [join(REPO_ROOT, 'shared', 'chat', 'sql-worker.ts')],
        outfile: join(dir, SQL_RUNTIME_FILES.worker),
        ...lambdaBuildOptions(),
        logLevel: 'warning',
      });
      copyFileSync(requireHere.resolve('sql.js/dist/sql-wasm.wasm'), join(dir, SQL_RUNTIME_FILES.wasm));
    }
    if (inputs.includes('shared/knowledge/search.ts')) cpSync(join(REPO_ROOT, 'shared', 'knowledge', 'runbooks'), join(dir, 'knowledge'), { recursive: true });
    if (inputs.includes('shared/http/openapi-document.ts')) writeFileSync(join(dir, OPENAPI_FILE), JSON.stringify((openApi ??= liveOpenApiDocument())));
    if (inputs.includes('shared/chat/tool-schemas.ts')) writeFileSync(join(dir, TOOL_SCHEMAS_FILE), JSON.stringify((toolSchemas ??= liveToolInputSchemas())));
  }
}

/**
 * Code a bundle carries only when it can run it (issue 21 §4; infra/README.md, "Lean bundles").
 * Smithy's protocol base class `import()`s the event-stream codec (≈ 10–15 KB) for
 * operations with event streams, which DynamoDB, SES and Secrets Manager do not have
 * (Lambda's we do not call). A bundle that does not need it gets stubs in its place, which
 * throw if ever called; whether it needs it is read from its own inputs after the
 * first esbuild pass (see `buildFunctionBundles`), so nothing here lists functions.
 * (zod's JSON-schema conversion needs no cut: zod/mini, shared/zod.ts, leaves it out of
 * every bundle whose code does not call `toJSONSchema`.)
 * Every bundle also goes without the SDK's browser user-agent parser (bowser, 34 KB), which
 * `@aws-sdk/core` `import()`s only in a browser: with code splitting it would be a chunk
 * in every function's folder that Node never loads. And `@middy/core` imports Node's web
 * streams (`node:stream/web`, ≈ 6 ms of every cold start, the one built-in module a group
 * loads that the DynamoDB client does not) only to recognise a web stream as the body of a
 * streamed response (`streamifyResponse`), which no handler of ours asks for.
 */
type LeanCut = 'event-streams' | 'browser-user-agent' | 'response-streams';
export const LEAN_CUTS: readonly LeanCut[] = ['event-streams', 'browser-user-agent', 'response-streams'];

const EVENT_STREAMS = '@smithy/core/event-streams';
const EVENT_STREAMS_STUB = 'fleet-health:no-event-streams';
/**
 * Clients that import the codec statically for operations we never call: Lambda's one
 * event-stream operation is InvokeWithResponseStream (shared/worker-invoke.ts calls Invoke).
 */
const EVENT_STREAMS_UNUSED_BY = ['node_modules/@aws-sdk/client-lambda/'];
const EVENT_STREAMS_DIR = 'node_modules/@smithy/core/dist-es/submodules/event-streams/';
/** The one importer of the event-stream codec that only runs for operations with event streams. */
const EVENT_STREAMS_LAZY_IMPORTER = 'node_modules/@smithy/core/dist-es/submodules/protocols/HttpProtocol.js';
/** The importer of `node:stream/web` the response-streams cut replaces (no other one is touched). */
const MIDDY_CORE = 'node_modules/@middy/core/';

const unavailable = (what: string) =>
  `function __unavailable() { throw new Error(${JSON.stringify(`${what} is not bundled in this function (infra/bundling.ts, LEAN_CUTS)`)}); }\n`;

/** The esbuild plugin that replaces what `cuts` names with stubs. */
export function leanPlugin(cuts: readonly LeanCut[]): Plugin {
  return {
    name: 'fleet-health-lean',
    setup(b) {
      if (cuts.includes('event-streams')) {
        // The lazy `import()` of the protocol base class, and clients whose one event-stream operation we never call.
        b.onResolve({ filter: /^@smithy\/core\/event-streams$/ }, ({ importer, kind }) => {
          const from = importer.replaceAll('\\', '/');
          const lazy = kind === 'dynamic-import' && from.endsWith(EVENT_STREAMS_LAZY_IMPORTER);
          return lazy || EVENT_STREAMS_UNUSED_BY.some((client) => from.includes(client))
            ? { path: EVENT_STREAMS_STUB, namespace: 'fleet-health-lean' }
            : undefined;
        });
        b.onLoad({ filter: /.*/, namespace: 'fleet-health-lean' }, () => ({
          contents:
            unavailable(`The event-stream codec (${EVENT_STREAMS})`) +
            'export class EventStreamSerde { constructor() { __unavailable(); } }\n' +
            'export const eventStreamSerdeProvider = () => ({ serialize: __unavailable, deserialize: __unavailable });\n' +
            // As in @smithy/core: the client's config gets the (here throwing) marshaller.
            'export const resolveEventStreamSerdeConfig = (input) => Object.assign(input, { eventStreamMarshaller: input.eventStreamSerdeProvider(input) });\n',
          loader: 'js',
        }));
      }
      if (cuts.includes('response-streams')) {
        b.onResolve({ filter: /^node:stream\/web$/ }, ({ importer }) =>
          importer.replaceAll('\\', '/').includes(MIDDY_CORE) ? { path: 'node:stream/web', namespace: 'fleet-health-lean-web-streams' } : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: 'fleet-health-lean-web-streams' }, () => ({
          contents:
            unavailable("Node's web streams (middy's streamed responses)") +
            // middy only asks `body instanceof ReadableStream`, on a streamed response: that question throws.
            'export class ReadableStream { static [Symbol.hasInstance]() { return __unavailable(); } constructor() { __unavailable(); } }\n',
          loader: 'js',
        }));
      }
      if (cuts.includes('browser-user-agent')) {
        b.onResolve({ filter: /^bowser$/ }, () => ({ path: 'bowser', namespace: 'fleet-health-lean-bowser' }));
        b.onLoad({ filter: /.*/, namespace: 'fleet-health-lean-bowser' }, () => ({
          contents: `${unavailable("The SDK's browser user-agent parser (bowser)")}export const parse = __unavailable;\nexport default { parse };\n`,
          loader: 'js',
        }));
      }
    },
  };
}

const BUILTIN = 'fleet-health-builtin';

/**
 * Node's built-in modules loaded with `require` (the banner's), not `import`. Imported as ES
 * modules, Node builds each one's module facade by reading every export, and reading the
 * lazy ones loads what they stand for: `node:http`'s `WebSocket` loads undici, `node:crypto`'s
 * `webcrypto` WebCrypto, `node:fs`'s `ReadStream` the stream classes, `node:util`'s
 * `TextDecoder` the encoders (undici alone was ≈ 13 ms of health's cold start; none of it used).
 * Required, a built-in is the module object, read when code reads it. The wrapper hands out an
 * object whose prototype is that module, so esbuild's interop (`__toESM`), run once per
 * importing module, finds no own property to copy: it copied each export as a getter, ≈ 1,300
 * of them in settings' cold start (node:crypto's 71, twelve times), 190 KB of its allocations.
 */
export function builtinRequirePlugin(): Plugin {
  return {
    name: BUILTIN,
    setup(b) {
      b.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, ({ path, namespace, kind }) => {
        if (!isBuiltin(path)) return undefined;
        // The module below requires the real built-in, which stays outside the bundle. An `import()`
        // stays one: its namespace (named exports and all) is what the code asked for, on the rare path that asks.
        if (namespace === BUILTIN || kind === 'require-call' || kind === 'dynamic-import') return { path, external: true };
        return { path, namespace: BUILTIN };
      });
      // A module that is a function (events' EventEmitter, assert, stream) must stay callable and
      // constructible, and writes through process must reach it: those few are handed out as they are.
      b.onLoad({ filter: /.*/, namespace: BUILTIN }, ({ path }) => ({
        contents: `const m = require(${JSON.stringify(path)});\nmodule.exports = typeof m === 'function' || m === process ? m : Object.create(m);`,
        loader: 'js',
      }));
    },
  };
}

/** The plugins of every function bundle: `cuts` made, built-ins required, unused schemas left out (infra/pure-schemas.ts). */
export const bundlePlugins = (cuts: readonly LeanCut[]): Plugin[] => [leanPlugin(cuts), builtinRequirePlugin(), pureSchemasPlugin(), arrowFunctionsPlugin()];

/**
 * Each function's entry output (`…/<name>/index.mjs`, relative to the repository) with the
 * inputs of all its outputs: the entry and every chunk beside it.
 */
export function bundleInputs(metafile: Metafile): Map<string, string[]> {
  const entries = Object.keys(metafile.outputs).filter((file) => file.endsWith(`/${BUNDLE.outputFile}`));
  return new Map(entries.map((entry) => [entry, [...new Set(outputsBeside(metafile, entry).flatMap((file) => Object.keys(metafile.outputs[file]!.inputs)))]]));
}

/** Every output in an entry's folder (the entry, its chunks, their maps): one function's bundle. */
function outputsBeside(metafile: Metafile, entry: string): string[] {
  const dir = `${dirname(entry)}/`;
  return Object.keys(metafile.outputs).filter((file) => file.startsWith(dir) && !file.slice(dir.length).includes('/'));
}

/**
 * The code files of a function's bundle by when they load: `eager`, what its cold start
 * loads (the entry and the chunks it imports statically, transitively), and `lazy`, the
 * chunks only a request that imports them loads.
 */
export function coldStartFiles(metafile: Metafile, entry: string): { eager: string[]; lazy: string[] } {
  const eager = new Set<string>();
  const visit = (file: string) => {
    if (eager.has(file)) return;
    eager.add(file);
    for (const imported of metafile.outputs[file]?.imports ?? []) if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
  };
  visit(entry);
  const code = outputsBeside(metafile, entry).filter((file) => file.endsWith('.mjs'));
  return { eager: code.filter((file) => eager.has(file)), lazy: code.filter((file) => !eager.has(file)) };
}

/** The cuts a bundle built with every cut cannot do without, read from its inputs (paths relative to the repository). */
function neededCuts(inputs: readonly string[]): LeanCut[] {
  const needed: LeanCut[] = [];
  // Our own sources in the bundle, each read once.
  const ours = inputs
    .filter((input) => !input.includes('node_modules/') && !input.includes(':') && /\.tsx?$/.test(input))
    .map((input) => readFileSync(join(REPO_ROOT, input), 'utf8'));
  // A client imports the codec statically (Bedrock Runtime's ConverseStream and its websocket and payload handlers).
  if (inputs.some((input) => input.startsWith(EVENT_STREAMS_DIR))) needed.push('event-streams');
  // A handler of ours streams its response.
  if (ours.some((source) => source.includes('streamifyResponse'))) needed.push('response-streams');
  return needed;
}

/**
 * Every named function bundled into `<outdir>/<name>/` with what it needs beside it
 * (runtime assets, shipped rules): what `npm run build`, the stack and the benches deploy
 * or measure. Each function is built with every cut, then again (its folder emptied first)
 * without the cuts its inputs show it cannot do without.
 */
export async function buildFunctionBundles(names: readonly string[], outdir: string): Promise<Metafile> {
  const buildOne = async (name: string, cuts: readonly LeanCut[]) => {
    rmSync(join(outdir, name), { recursive: true, force: true });
    return (await build({ ...esbuildOptions(name, outdir), plugins: bundlePlugins(cuts) })).metafile!;
  };
  const metafiles = await Promise.all(
    names.map(async (name) => {
      const first = await buildOne(name, LEAN_CUTS);
      const needed = neededCuts([...bundleInputs(first).values()][0]!);
      const built =
        needed.length === 0
          ? first
          : await buildOne(
              name,
              LEAN_CUTS.filter((cut) => !needed.includes(cut)),
            );
      // Its cold start in one file (infra/eager-join.ts).
      const entry = relative(REPO_ROOT, join(outdir, name, BUNDLE.outputFile));
      const { eager, lazy } = coldStartFiles(built, entry);
      const { banner: _banner, ...shape } = lambdaBuildOptions();
      await joinEagerChunks(built, REPO_ROOT, { entry, eager, lazy }, { ...shape, sourcemap: BUNDLE.sourcemap, sourcesContent: BUNDLE.sourcesContent });
      return built;
    }),
  );
  const metafile: Metafile = { inputs: {}, outputs: {} };
  for (const one of metafiles) {
    Object.assign(metafile.inputs, one.inputs);
    Object.assign(metafile.outputs, one.outputs);
  }
  emitRuntimeAssets(metafile);
  copyRuleDefaults(outdir, names);
  return metafile;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `node --import tsx infra/bundling.ts <outdir>`: how the stack bundles (synth is synchronous, plugins need the async API).
  await buildFunctionBundles(functionNames(), resolve(process.argv[2] ?? join(REPO_ROOT, 'dist', 'functions')));
}
