// The esbuild options of every Lambda bundle, in one place: used by the construct
// that owns Lambda defaults (infra/constructs/group-function.ts, at cdk synth) and by
// `npm run build` (infra/build.ts), so the bundle the size check measures is the
// bundle that gets deployed. Imports no CDK and, at run time, no esbuild.
import { copyFileSync, cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parse } from 'yaml';
import { PricingFile } from '../shared/llm/pricing.js';
import { checkRuleText } from '../shared/rules/check.js';
import { RULE_SET_NAMES, type RuleSetName } from '../shared/rules/defaults.js';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { SQL_RUNTIME_FILES } from '../shared/chat/sql.js';

/** Repository root (this file lives in `infra/`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(import.meta.url);

/** `functions/<name>.ts`: one entry per route group and per worker. */
export function functionEntry(name: string): string {
  return join(REPO_ROOT, 'functions', `${name}.ts`);
}

/**
 * ESM bundles need a real `require` for the few CommonJS dependencies that call
 * `require('node:…')` at run time; esbuild's ESM output has none.
 */
export const ESM_REQUIRE_BANNER = "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

export const BUNDLE = {
  platform: 'node',
  format: 'esm',
  /** Matches the Lambda runtime (nodejs22.x), whatever Node runs the build. */
  target: 'node22',
  minify: true,
  /** External `.map` next to the bundle; NODE_OPTIONS=--enable-source-maps uses it. */
  sourcemap: true,
  /** Mappings only: stack traces need no embedded sources, and the zip stays small. */
  sourcesContent: false,
  /** Prefer ES module builds (the AWS SDK v3 ships `dist-es`) so tree-shaking works. */
  mainFields: ['module', 'main'],
  /** Nothing external: the AWS SDK v3 is bundled (pinned by the lockfile, tree-shaken, one file to load). */
  external: [] as string[],
  banner: ESM_REQUIRE_BANNER,
  /** Lambda loads `index.mjs` as ESM without a package.json. */
  outputFile: 'index.mjs',
} as const;

/**
 * Node options of every Lambda (and of the engine bench, which measures the
 * bundle as deployed). Source maps for stack traces; a 64 MB young generation
 * because a fleet refresh builds tens of megabytes of results that all stay
 * alive until answered: with the 16 MB default V8 copies them between
 * semi-spaces several times, about a quarter of scoring 10,000 clusters (README
 * decision 40). V8 grows the young generation only under that pressure, so
 * small routes pay nothing.
 */
export const LAMBDA_NODE_OPTIONS = '--enable-source-maps --max-semi-space-size=64';

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

/** Every Lambda entry: `functions/*.ts` (route groups and workers). */
export function functionNames(): string[] {
  return readdirSync(join(REPO_ROOT, 'functions'))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => basename(file, '.ts'))
    .sort();
}

/**
 * One esbuild run for many functions: `<outdir>/<name>/index.mjs` (+ `.map`) each.
 * Each entry still gets its own complete, tree-shaken bundle (no code splitting);
 * one run parses the shared dependencies (AWS SDK, zod) once instead of per function.
 */
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

export function esbuildOptions(names: readonly string[], outdir: string): BuildOptions {
  const [stem, extension] = BUNDLE.outputFile.split('.') as [string, string];
  return {
    entryPoints: names.map((name) => ({ in: functionEntry(name), out: `${name}/${stem}` })),
    outdir,
    outExtension: { '.js': `.${extension}` },
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
 * SQLite's WebAssembly (shared/chat/sql.ts), and the runbooks under
 * `knowledge/` (shared/knowledge/search.ts).
 */
export function emitRuntimeAssets(metafile: Metafile): void {
  for (const [file, output] of Object.entries(metafile.outputs)) {
    if (!file.endsWith(`/${BUNDLE.outputFile}`)) continue;
    const dir = dirname(resolve(REPO_ROOT, file));
    const inputs = Object.keys(output.inputs);
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
  }
}
