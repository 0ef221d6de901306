// The scoring engine alone: 10,000 clusters on one core, as deployed (the
// minified Lambda bundle on plain Node; under tsx its development-time
// transforms would add to every call). Runs before DynamoDB Local starts, so
// no JVM competes for the machine's cores.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { BUNDLE, BUNDLE_ALIASES, REPO_ROOT, copyRuleDefaults } from '../../infra/bundling.js';
import type { Report } from './run.js';

export const title = 'Scoring engine (DESIGN §8)';

const exec = promisify(execFile);

export async function run(report: Report): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-engine-'));
  await build({
    entryPoints: [join(REPO_ROOT, 'test', 'bench', 'engine-run.ts')],
    outfile: join(dir, 'engine', 'index.mjs'),
    bundle: true, platform: BUNDLE.platform, format: BUNDLE.format, target: BUNDLE.target, minify: BUNDLE.minify,
    mainFields: [...BUNDLE.mainFields], banner: { js: BUNDLE.banner }, alias: { ...BUNDLE_ALIASES }, logLevel: 'error',
  });
  copyRuleDefaults(dir, ['engine']);
  const { stdout } = await exec(process.execPath, [join(dir, 'engine', 'index.mjs')], { env: process.env });
  const engine = JSON.parse(stdout.trim().split('\n').pop()!) as { best: number; median: number; clusters: number };
  report('engine', `pure scoring of ${engine.clusters.toLocaleString('en-US')} clusters (minified bundle on Node), best / median of 7`, `${engine.best.toFixed(1)} / ${engine.median.toFixed(1)} ms (target < 100 ms)`);

}
