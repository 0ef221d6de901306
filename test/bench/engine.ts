// The scoring engine alone: 10,000 clusters on one core, as deployed (the
// minified Lambda bundle on plain Node with the Lambdas' NODE_OPTIONS; under tsx its development-time
// transforms would add to every call). Runs before DynamoDB Local starts, so
// no JVM competes for the machine's cores.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { BUNDLE_ALIASES, LAMBDA_NODE_OPTIONS, REPO_ROOT, copyRuleDefaults, lambdaBuildOptions } from '../../infra/bundling.js';
import type { Report } from './run.js';

export const title = 'Scoring engine (DESIGN §8)';

const exec = promisify(execFile);

export async function run(report: Report): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-engine-'));
  await build({
    entryPoints: [join(REPO_ROOT, 'test', 'bench', 'engine-run.ts')],
    outfile: join(dir, 'engine', 'index.mjs'),
    ...lambdaBuildOptions(),
    alias: { ...BUNDLE_ALIASES },
    logLevel: 'error',
  });
  copyRuleDefaults(dir, ['engine']);
  // Pinned to one core where taskset exists (util-linux), so V8's helper threads cannot lend a second one.
  const node = [process.execPath, join(dir, 'engine', 'index.mjs')];
  const [command, ...args] = existsSync('/usr/bin/taskset') ? ['/usr/bin/taskset', '-c', '0', ...node] : node;
  const { stdout } = await exec(command!, args, { env: { ...process.env, NODE_OPTIONS: LAMBDA_NODE_OPTIONS } });
  type Times = { best: number; median: number };
  const engine = JSON.parse(stdout.trim().split('\n').pop()!) as Times & { pass: Times; answers: Times; fold: Times; total: Times; clusters: number };
  const where = command === '/usr/bin/taskset' ? 'one core' : 'unpinned';
  const ms = (t: Times) => `${t.best.toFixed(1)} / ${t.median.toFixed(1)} ms`;
  const clusters = engine.clusters.toLocaleString('en-US');
  report(
    'engine',
    `scoring of ${clusters} clusters from their columnar aggregates: the columnar pass into typed arrays (minified bundle, Lambda's Node options, ${where}), best / median of 7`,
    `${ms(engine.pass)} (target < 10 ms)`,
  );
  report('engine', `building their answer objects from those columns`, ms(engine.answers));
  report('engine', `both: scoreFleet given the aggregates`, ms(engine));
  report('engine', `folding their rollup columns (7 days) into the aggregates, one pass per cluster`, ms(engine.fold));
  report('engine', `both: scoreFleet given only the rollup columns`, `${ms(engine.total)} (target < 100 ms)`);
}
