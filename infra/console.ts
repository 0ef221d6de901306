// The operator console (source in infra/web/) as the stack deploys it and the
// local server serves it: a Vite build into dist/web. `npm run build` builds it
// with the Lambda bundles and checks the first load's size; `npm start` and the
// CDK app build it when it is missing or older than its sources.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from './bundling.js';

export const CONSOLE_SOURCE = join(REPO_ROOT, 'infra', 'web');
export const CONSOLE_OUT = join(REPO_ROOT, 'dist', 'web');
/** The first load (entry HTML's scripts, modulepreloads and styles), gzipped: the budget. */
export const FIRST_LOAD_BUDGET_KB = 200;

const newest = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return latest;
    const path = join(dir, entry.name);
    return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }, 0);

/** Written beside a production build; a build without it (a development build, or an older one) is rebuilt. */
const BUILD_STAMP = 'build.json';

/**
 * The repository paths of the files outside infra/web whose code the build holds (Vite's module list; a type-only
 * import leaves none): beside dist/web, not in it, since dist/web is what the stack publishes.
 */
const SERVICE_FILES = join(REPO_ROOT, 'dist', 'web-service-files.json');

const mtime = (path: string): number => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY; // gone or moved: the build that bundled it is stale
  }
};

/** True when dist/web is missing, not a production build, or older than infra/web or any service file it bundled. */
export function consoleIsStale(): boolean {
  let built: number;
  let serviceFiles: unknown;
  try {
    built = statSync(join(CONSOLE_OUT, 'index.html')).mtimeMs;
    if (JSON.parse(readFileSync(join(CONSOLE_OUT, BUILD_STAMP), 'utf8')).mode !== 'production') return true;
    serviceFiles = JSON.parse(readFileSync(SERVICE_FILES, 'utf8'));
  } catch {
    return true;
  }
  if (!Array.isArray(serviceFiles)) return true;
  return Math.max(newest(CONSOLE_SOURCE), ...serviceFiles.map((file) => mtime(join(REPO_ROOT, String(file))))) > built;
}

/** The repository files outside infra/web whose code the build's chunks hold (not node_modules, not Vite's virtual modules). */
function bundledServiceFiles(output: Awaited<ReturnType<typeof import('vite').build>>): string[] {
  const outputs = Array.isArray(output) ? output : [output];
  const ids = outputs.flatMap((o) => ('output' in o ? o.output : [])).flatMap((chunk) => (chunk.type === 'chunk' ? chunk.moduleIds : []));
  return [...new Set(ids)]
    .filter((id) => id.startsWith(REPO_ROOT) && !id.includes('node_modules') && !id.startsWith(CONSOLE_SOURCE))
    .map((id) => relative(REPO_ROOT, id))
    .sort();
}

/**
 * Builds the console with Vite (its config: infra/web/vite.config.ts), always for production: Vite takes
 * React's development build when NODE_ENV says otherwise (vitest sets `test`), so it is set for the build.
 */
export async function buildConsole(options: { quiet?: boolean } = {}): Promise<void> {
  const { build } = await import('vite');
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  let output: Awaited<ReturnType<typeof build>>;
  try {
    output = await build({ configFile: join(CONSOLE_SOURCE, 'vite.config.ts'), mode: 'production', logLevel: options.quiet ? 'warn' : 'info' });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  writeFileSync(SERVICE_FILES, `${JSON.stringify(bundledServiceFiles(output), null, 1)}\n`);
  writeFileSync(join(CONSOLE_OUT, BUILD_STAMP), `${JSON.stringify({ mode: 'production', built_at: new Date().toISOString() })}\n`);
}

export async function ensureConsoleBuilt(log: (line: string) => void = () => undefined): Promise<void> {
  if (!consoleIsStale()) return;
  log('Building the console (infra/web → dist/web)');
  await buildConsole({ quiet: true });
}

export interface FirstLoad {
  files: { path: string; gzipKb: number }[];
  gzipKb: number;
}

/** What a browser fetches before the first page renders: index.html and the scripts and styles it names. */
export function firstLoad(): FirstLoad {
  const html = readFileSync(join(CONSOLE_OUT, 'index.html'), 'utf8');
  const refs = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  const files = [join(CONSOLE_OUT, 'index.html'), ...new Set(refs.map((r) => join(CONSOLE_OUT, r)))].map((path) => ({
    path: relative(CONSOLE_OUT, path),
    gzipKb: gzipSync(readFileSync(path)).length / 1024,
  }));
  return { files, gzipKb: files.reduce((sum, f) => sum + f.gzipKb, 0) };
}
