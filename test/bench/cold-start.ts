// Cold-start proxy (issue 21 §4): every Lambda bundle, built as deployed
// (infra/bundling.ts), imported in a fresh `node` process, against a hello-world
// module imported the same way in the same run. Each process reports the CPU time
// it used from start to the end of the import (runtime start + module load: what a
// cold start adds; unlike wall time, it barely moves when other processes share the
// cores), its import time and RSS; every sample is paired with a hello-world
// sample taken just before it, so drift hits both alike. Measured with the Lambdas' NODE_OPTIONS and with
// `--enable-source-maps` added, to show what the flag costs. Pure: runs before
// DynamoDB Local starts.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import {
  BUNDLE,
  BUNDLE_ALIASES,
  LAMBDA_NODE_OPTIONS,
  LEAN_CUTS,
  REPO_ROOT,
  buildFunctionBundles,
  functionNames,
  lambdaBuildOptions,
  leanPlugin,
} from '../../infra/bundling.js';
import { ROUTE_GROUPS } from '../../shared/routes/all-groups.js';
import type { Report } from './run.js';

export const title = 'Cold start: bundle size and import time against a hello-world module (fresh node process each)';

const exec = promisify(execFile);
/** Rounds (each: every bundle, each with and without source maps, each after a hello-world); medians of these. */
const ROUNDS = Number(process.env.COLD_START_ROUNDS ?? 7);
const SOURCE_MAPS = '--enable-source-maps';

interface Sample {
  cpu: number;
  imported: number;
  rss: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** One fresh process importing `file`: the CPU time, import time and RSS it reports. */
async function sample(file: string, nodeOptions: string): Promise<Sample> {
  const script = `const t=performance.now();await import(${JSON.stringify(pathToFileURL(file).href)});const imported=performance.now()-t;const c=process.cpuUsage();console.log(JSON.stringify({cpu:(c.user+c.system)/1000,imported,rss:process.memoryUsage().rss}))`;
  const env = { PATH: process.env.PATH, AWS_REGION: 'us-east-1', LOG_LEVEL: 'silent', NODE_OPTIONS: nodeOptions };
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { env });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Sample;
}

/**
 * The floor every route group stands on: a module that only creates the DynamoDB document
 * client as shared/db/client.ts does (every group reads DynamoDB) and answers, bundled like
 * a Lambda (same options, aliases and cuts). Whatever a group adds is measured against it too.
 */
const SDK_FLOOR = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts: 4 }));
export const handler = async () => client.send(new GetCommand({ TableName: 't', Key: { pk: 'p', sk: 's' } }));
`;

async function buildSdkFloor(dir: string): Promise<string> {
  const outfile = join(dir, 'sdk-floor', BUNDLE.outputFile);
  await build({
    ...lambdaBuildOptions(),
    stdin: { contents: SDK_FLOOR, resolveDir: REPO_ROOT, loader: 'ts', sourcefile: 'sdk-floor.ts' },
    outfile,
    sourcemap: BUNDLE.sourcemap,
    sourcesContent: BUNDLE.sourcesContent,
    alias: { ...BUNDLE_ALIASES },
    plugins: [leanPlugin(LEAN_CUTS)],
    logLevel: 'warning',
  });
  return outfile;
}

export async function run(report: Report): Promise<void> {
  // COLD_START_DIST=dist/functions measures bundles already built (e.g. by `npm run build` of another revision).
  const prebuilt = process.env.COLD_START_DIST ? resolve(process.env.COLD_START_DIST) : undefined;
  const dir = await mkdtemp(join(tmpdir(), 'fleet-cold-start-'));
  try {
    const names = prebuilt ? readdirSync(prebuilt).filter((name) => existsSync(join(prebuilt, name, BUNDLE.outputFile))) : functionNames();
    if (!prebuilt) await buildFunctionBundles(names, dir);
    const hello = join(dir, 'hello.mjs');
    writeFileSync(hello, 'export const handler = async () => ({ statusCode: 200, body: "hello" });\n');
    const groups = new Set(ROUTE_GROUPS.map((group) => group.name));
    const files = new Map(names.map((name) => [name, join(prebuilt ?? dir, name, BUNDLE.outputFile)]));
    files.set('sdk-floor', await buildSdkFloor(dir));

    const without = LAMBDA_NODE_OPTIONS.split(/\s+/)
      .filter((option) => option && option !== SOURCE_MAPS)
      .join(' ');
    const modes = [
      { key: 'plain', options: without },
      { key: 'maps', options: `${SOURCE_MAPS} ${without}`.trim() },
    ] as const;
    const deployed = LAMBDA_NODE_OPTIONS.includes(SOURCE_MAPS) ? 'maps' : 'plain';

    // Each bundle sample right after a hello-world sample with the same options, and its ratio to that
    // one: the load other processes put on the machine changes by the second, rarely within a pair.
    const samples = new Map<string, Sample[]>();
    const ratios = new Map<string, number[]>();
    const push = <T>(into: Map<string, T[]>, key: string, value: T) => into.set(key, [...(into.get(key) ?? []), value]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, file] of files) {
        for (const mode of modes) {
          const base = await sample(hello, mode.options);
          const own = await sample(file, mode.options);
          push(samples, `${mode.key}:hello`, base);
          push(samples, `${mode.key}:${name}`, own);
          push(ratios, `${mode.key}:${name}`, own.cpu / base.cpu);
        }
      }
    }
    const stat = (key: string) => {
      const list = samples.get(key)!;
      return { cpu: median(list.map((s) => s.cpu)), imported: median(list.map((s) => s.imported)), rss: median(list.map((s) => s.rss)) / 2 ** 20 };
    };

    const rows = [...files.keys()]
      .map((name) => {
        const kb = statSync(files.get(name)!).size / 1024;
        const mapKb = statSync(`${files.get(name)!}.map`).size / 1024;
        const [plain, maps] = modes.map((mode) => {
          const own = stat(`${mode.key}:${name}`);
          const base = stat(`${mode.key}:hello`);
          return { ...own, ratio: median(ratios.get(`${mode.key}:${name}`)!), rssOver: own.rss - base.rss };
        }) as [ReturnType<typeof stat> & { ratio: number; rssOver: number }, ReturnType<typeof stat> & { ratio: number; rssOver: number }];
        return { name, kind: groups.has(name) ? 'route group' : name === 'sdk-floor' ? 'floor' : 'worker', kb, mapKb, plain, maps };
      })
      .sort((a, b) => b.kb - a.kb);

    const baseline = modes.map((mode) => stat(`${mode.key}:hello`));
    console.log(
      `  hello-world: ${baseline[0]!.cpu.toFixed(1)} ms CPU per process (${baseline[0]!.imported.toFixed(2)} ms import), ` +
        `${baseline[1]!.cpu.toFixed(1)} ms with ${SOURCE_MAPS}; ratio = median of (a process's CPU time / the hello-world's just before); medians of ${ROUNDS} runs; NODE_OPTIONS deployed: "${LAMBDA_NODE_OPTIONS}"`,
    );
    const width = Math.max(...rows.map((r) => r.name.length));
    console.log(`  ${'bundle'.padEnd(width)}  kind         size KB  map KB   import ms  ratio  +RSS MB   | ${SOURCE_MAPS}: import ms  ratio  +RSS MB`);
    for (const r of rows) {
      console.log(
        `  ${r.name.padEnd(width)}  ${r.kind.padEnd(11)}  ${r.kb.toFixed(1).padStart(7)}  ${r.mapKb.toFixed(0).padStart(6)}  ` +
          `${r.plain.imported.toFixed(1).padStart(9)}  ${r.plain.ratio.toFixed(2).padStart(5)}  ${r.plain.rssOver.toFixed(1).padStart(7)}   | ` +
          `${r.maps.imported.toFixed(1).padStart(26)}  ${r.maps.ratio.toFixed(2).padStart(5)}  ${r.maps.rssOver.toFixed(1).padStart(7)}`,
      );
    }
    for (const r of rows.filter((row) => row.kind !== 'floor')) {
      const d = deployed === 'maps' ? r.maps : r.plain;
      report(
        'cold-start',
        `${r.name} (${r.kind}, ${r.kb.toFixed(1)} KB): process CPU time vs hello-world, as deployed / other source-map setting`,
        `${d.ratio.toFixed(2)}× / ${(deployed === 'maps' ? r.plain : r.maps).ratio.toFixed(2)}× (import ${d.imported.toFixed(1)} ms, +${d.rssOver.toFixed(1)} MB RSS)`,
      );
    }
    const routes = rows.filter((r) => r.kind === 'route group');
    const floor = rows.find((r) => r.kind === 'floor')!;
    report(
      'cold-start',
      `SDK floor: a module creating only the DynamoDB document client every route group uses (${floor.kb.toFixed(1)} KB), vs hello-world`,
      `${floor[deployed].ratio.toFixed(2)}× (import ${floor[deployed].imported.toFixed(1)} ms, +${floor[deployed].rssOver.toFixed(1)} MB RSS): a group with the SDK inside cannot be under this`,
    );
    const worst = (key: 'plain' | 'maps') => Math.max(...routes.map((r) => r[key].ratio));
    const mean = (key: 'plain' | 'maps', field: 'imported' | 'rssOver') => routes.reduce((sum, r) => sum + r[key][field], 0) / routes.length;
    report(
      'cold-start',
      `worst / best route-group ratio without ${SOURCE_MAPS} (target ≤ 1.6×); with it, worst`,
      `${worst('plain').toFixed(2)}× / ${Math.min(...routes.map((r) => r.plain.ratio)).toFixed(2)}×; ${worst('maps').toFixed(2)}× (the SDK floor: ${floor.plain.ratio.toFixed(2)}×)`,
    );
    report(
      'cold-start',
      `${SOURCE_MAPS}: mean route-group import time and RSS added`,
      `${(mean('maps', 'imported') - mean('plain', 'imported')).toFixed(1)} ms (${((mean('maps', 'imported') / mean('plain', 'imported') - 1) * 100).toFixed(0)}%), ` +
        `${(mean('maps', 'rssOver') - mean('plain', 'rssOver')).toFixed(1)} MB`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
