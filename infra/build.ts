// `npm run build`: bundles every functions/*.ts into dist/functions/<name>/index.mjs
// (and the chunks its dynamic imports load) with the options the stack deploys
// (infra/bundling.ts), prints each bundle's minified size, what a cold start loads of
// it and what only the requests that need it load, and fails when what a route
// group's cold start loads is over budget.
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROUTE_GROUPS } from '../shared/routes/all-groups.js';
import { WORKERS } from '../shared/workers.js';
import { BUNDLE, REPO_ROOT, buildFunctionBundles, coldStartFiles, functionNames } from './bundling.js';
import { buildConsole, CONSOLE_OUT, FIRST_LOAD_BUDGET_KB, firstLoad } from './console.js';
import { DEPLOY_FUNCTIONS } from './function-sizes.js';

/** What a route group's cold start loads (entry + static chunks) is on an API request's path: keep it small. */
const ROUTE_GROUP_BUDGET_KB = 500;
/**
 * Groups allowed more, each with its reason: none now. (chat had 520 KB until its assistant became a
 * chunk its first message loads; settings, 665 KB until issue 21, loads the YAML parser, the Lambda
 * client, SES and the scoring engine of impact previews only on the routes that use them.)
 */
const BUDGET_EXCEPTIONS_KB: Record<string, number> = {};
const budgetOf = (name: string) => BUDGET_EXCEPTIONS_KB[name] ?? ROUTE_GROUP_BUDGET_KB;

const outRoot = join(REPO_ROOT, 'dist', 'functions');
const names = functionNames();
const groupNames = new Set(ROUTE_GROUPS.map((group) => group.name));
const workerNames = new Set<string>(Object.keys(WORKERS));
const deployNames = new Set<string>(Object.keys(DEPLOY_FUNCTIONS));
const kindOf = (name: string): string => (groupNames.has(name) ? 'route group' : workerNames.has(name) ? 'worker' : deployNames.has(name) ? 'deploy' : 'other');

rmSync(outRoot, { recursive: true, force: true });
const started = performance.now();
const metafile = await buildFunctionBundles(names, outRoot);
const seconds = (performance.now() - started) / 1000;

const results = names
  .map((name) => {
    const { eager, lazy } = coldStartFiles(metafile, relative(REPO_ROOT, join(outRoot, name, BUNDLE.outputFile)));
    const kb = (files: string[]) => files.reduce((n, file) => n + metafile.outputs[file]!.bytes, 0) / 1024;
    return { name, kind: kindOf(name), kb: kb(eager), lazyKb: kb(lazy) };
  })
  .sort((a, b) => b.kb - a.kb);
const over = results.filter((r) => r.kind === 'route group' && r.kb > budgetOf(r.name));

const width = Math.max(...results.map((r) => r.name.length), 'function'.length);
const row = (name: string, kind: string, size: string, lazy: string, note = ''): string =>
  `${name.padEnd(width)}  ${kind.padEnd(11)}  ${size.padStart(15)}  ${lazy.padStart(15)}  ${note}`.trimEnd();
console.log(row('function', 'kind', 'cold start (KB)', 'on demand (KB)'));
console.log(row('-'.repeat(width), '-'.repeat(11), '-'.repeat(15), '-'.repeat(15)));
for (const r of results) {
  console.log(
    row(
      r.name,
      r.kind,
      r.kb.toFixed(1),
      r.lazyKb.toFixed(1),
      over.includes(r) ? `over ${budgetOf(r.name)} KB` : budgetOf(r.name) !== ROUTE_GROUP_BUDGET_KB ? `budget ${budgetOf(r.name)} KB` : '',
    ),
  );
}
console.log(
  `\n${results.length} bundles in ${seconds.toFixed(1)} s: ${relative(REPO_ROOT, outRoot)}/<name>/${BUNDLE.outputFile}` +
    ` and chunks beside it (minified ESM for ${BUNDLE.target}, nothing external, source maps beside; cold start: the entry, its static chunks joined into it by infra/eager-join.ts)`,
);

const missing = [...groupNames, ...workerNames, ...deployNames].filter((name) => !names.includes(name));
if (missing.length > 0) {
  console.error(`missing entry files: ${missing.map((name) => `functions/${name}.ts`).join(', ')}`);
  process.exitCode = 1;
}
if (over.length > 0) {
  console.error(`route-group bundles over budget: ${over.map((r) => `${r.name} (${r.kb.toFixed(1)} > ${budgetOf(r.name)} KB)`).join(', ')}`);
  process.exitCode = 1;
}

// The operator console: one Vite build; its first load (HTML, entry script, preloads, styles) within budget.
const consoleStarted = performance.now();
await buildConsole({ quiet: true });
const load = firstLoad();
console.log(
  `\nconsole in ${((performance.now() - consoleStarted) / 1000).toFixed(1)} s: ${relative(REPO_ROOT, CONSOLE_OUT)}; ` +
    `first load ${load.gzipKb.toFixed(1)} KB gzip (budget ${FIRST_LOAD_BUDGET_KB} KB): ${load.files.map((f) => `${f.path} ${f.gzipKb.toFixed(1)}`).join(', ')}`,
);
if (load.gzipKb > FIRST_LOAD_BUDGET_KB) {
  console.error(`the console's first load is over budget: ${load.gzipKb.toFixed(1)} > ${FIRST_LOAD_BUDGET_KB} KB gzip`);
  process.exitCode = 1;
}
