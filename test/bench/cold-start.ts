// Cold start (issue 21 §4): every Lambda bundle, built as deployed (infra/bundling.ts),
// against a hello-world module in the same run, two ways:
// - **as Lambda starts it** (the headline): Node 22 running AWS's runtime interface
//   client (lambda-runtime.ts), which loads its own modules (node:http among them),
//   imports the handler module and asks for its first event; the runtime process's CPU
//   time (every thread) at that request is the Init phase's work;
// - **as a bare `node`** importing the module (the figure earlier stops reported): the
//   machine's Node, CPU time from process start to the end of the import. It charges
//   the bundle for everything the runtime would have loaded anyway.
// Each bundle sample is paired with a hello-world sample taken just before it, in the
// same way, and the ratio is the median of those pairs' ratios: the load other processes
// put on the machine changes by the second, rarely within a pair. Also measured: three
// floors, a module that only loads node:https (what any function calling AWS over TLS
// loads: Node's TLS and OpenSSL's set-up), one that reads one item through
// shared/db/client.ts (what every group stands on) and one that only creates the AWS SDK's
// DynamoDB document client (what they stood on before shared/aws/). Pure: runs before
// DynamoDB Local starts.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
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
  bundlePlugins,
  coldStartFiles,
  functionNames,
  lambdaBuildOptions,
} from '../../infra/bundling.js';
import { ROUTE_GROUPS } from '../../shared/routes/all-groups.js';
import { ensureLambdaRuntime, initSample, RUNTIME_CLIENT_VERSION, RUNTIME_NODE_VERSION, type LambdaRuntime } from './lambda-runtime.js';
import type { Report } from './run.js';

export const title = 'Cold start: each bundle against a hello-world, as the Lambda runtime starts it and as a bare node imports it';

const exec = promisify(execFile);
/** Rounds (each: every bundle, each way, each after a hello-world); medians of these. One pair's ratio spreads ±0.2 on a 2-core machine, so a median of 7 still moved ±0.1 between runs. */
const ROUNDS = Number(process.env.COLD_START_ROUNDS ?? 11);
/** What every function's environment holds on Lambda that the modules may read at import. */
const FUNCTION_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  AWS_SESSION_TOKEN: 'session',
  LOG_LEVEL: 'silent',
  NODE_OPTIONS: LAMBDA_NODE_OPTIONS,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

interface Sample {
  cpu: number;
  /** Lambda: wall time to the first request for an event; bare: the import's own time. */
  wall: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** A fresh bare `node` importing `file`: its CPU time from start to the end of the import, and the import's time. */
async function bareSample(file: string): Promise<Sample> {
  const script = `const t=performance.now();await import(${JSON.stringify(pathToFileURL(file).href)});const wall=performance.now()-t;const c=process.cpuUsage();console.log(JSON.stringify({cpu:(c.user+c.system)/1000,wall}))`;
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH, ...FUNCTION_ENV } });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Sample;
}

async function lambdaSample(runtime: LambdaRuntime, file: string): Promise<Sample> {
  const { cpuMs, wallMs } = await initSample(runtime, file, FUNCTION_ENV);
  return { cpu: cpuMs, wall: wallMs };
}

/**
 * The floors, bundled like a Lambda (same options, aliases, cuts and plugins): `tls` loads
 * node:https and nothing else (no request is made at import, as in every group); `db-floor`
 * reads one item as every route group does (shared/db/client.ts, through shared/aws/);
 * `sdk-client` only creates the AWS SDK's DynamoDB document client, for comparison.
 */
const FLOORS = {
  tls: `
import { request } from 'node:https';
export const handler = async () => typeof request;
`,
  'db-floor': `
import { getItem } from './shared/db/client.ts';
export const handler = async () => getItem('users', { pk: 'p', sk: 's' });
`,
  'sdk-client': `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts: 4 }));
export const handler = async () => client.send(new GetCommand({ TableName: 't', Key: { pk: 'p', sk: 's' } }));
`,
};

async function buildFloor(dir: string, name: keyof typeof FLOORS): Promise<string> {
  const outfile = join(dir, name, BUNDLE.outputFile);
  await build({
    ...lambdaBuildOptions(),
    stdin: { contents: FLOORS[name], resolveDir: REPO_ROOT, loader: 'ts', sourcefile: `${name}.ts` },
    outfile,
    alias: { ...BUNDLE_ALIASES },
    plugins: bundlePlugins(LEAN_CUTS),
    logLevel: 'warning',
  });
  return outfile;
}

type Way = 'lambda' | 'bare';

export async function run(report: Report): Promise<void> {
  // COLD_START_DIST=dist/functions measures bundles already built (e.g. by `npm run build` of another revision).
  const prebuilt = process.env.COLD_START_DIST ? resolve(process.env.COLD_START_DIST) : undefined;
  const dir = await mkdtemp(join(tmpdir(), 'fleet-cold-start-'));
  try {
    const names = prebuilt ? readdirSync(prebuilt).filter((name) => existsSync(join(prebuilt, name, BUNDLE.outputFile))) : functionNames();
    const metafile = prebuilt ? undefined : await buildFunctionBundles(names, dir);
    /** What a cold start loads of a bundle (entry + static chunks), in bytes; the file alone for a prebuilt one or the floor. */
    const coldStartSize = (file: string) =>
      metafile?.outputs[relative(REPO_ROOT, file)]
        ? coldStartFiles(metafile, relative(REPO_ROOT, file)).eager.reduce((n, output) => n + metafile.outputs[output]!.bytes, 0)
        : statSync(file).size;
    // The runtime loads `index.handler` from the function's folder: the hello-world has one of its own.
    const hello = join(dir, 'hello-world', BUNDLE.outputFile);
    mkdirSync(join(dir, 'hello-world'));
    writeFileSync(hello, 'export const handler = async () => ({ statusCode: 200, body: "hello" });\n');
    const groups = new Set(ROUTE_GROUPS.map((group) => group.name));
    const files = new Map(names.map((name) => [name, join(prebuilt ?? dir, name, BUNDLE.outputFile)]));
    for (const name of Object.keys(FLOORS) as (keyof typeof FLOORS)[]) files.set(name, await buildFloor(dir, name));
    const runtime = await ensureLambdaRuntime();

    const ways: { way: Way; sample: (file: string) => Promise<Sample> }[] = [
      { way: 'lambda', sample: (file) => lambdaSample(runtime, file) },
      { way: 'bare', sample: bareSample },
    ];
    const samples = new Map<string, Sample[]>();
    const ratios = new Map<string, number[]>();
    const push = <T>(into: Map<string, T[]>, key: string, value: T) => into.set(key, [...(into.get(key) ?? []), value]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, file] of files) {
        for (const { way, sample } of ways) {
          const base = await sample(hello);
          const own = await sample(file);
          push(samples, `${way}:hello`, base);
          push(samples, `${way}:${name}`, own);
          push(ratios, `${way}:${name}`, own.cpu / base.cpu);
        }
      }
    }
    const stat = (key: string) => {
      const list = samples.get(key)!;
      return { cpu: median(list.map((s) => s.cpu)), wall: median(list.map((s) => s.wall)) };
    };
    const rows = [...files.keys()]
      .map((name) => {
        const figures = (way: Way) => ({ ...stat(`${way}:${name}`), ratio: median(ratios.get(`${way}:${name}`)!) });
        return {
          name,
          kind: groups.has(name) ? 'route group' : name in FLOORS ? 'floor' : 'worker',
          kb: coldStartSize(files.get(name)!) / 1024,
          lambda: figures('lambda'),
          bare: figures('bare'),
        };
      })
      .sort((a, b) => b.kb - a.kb);

    const lambdaHello = stat('lambda:hello');
    const bareHello = stat('bare:hello');
    console.log(
      `  hello-world: Lambda runtime (Node ${RUNTIME_NODE_VERSION}, aws-lambda-ric ${RUNTIME_CLIENT_VERSION}) ${lambdaHello.cpu.toFixed(1)} ms CPU to its first event request ` +
        `(${lambdaHello.wall.toFixed(1)} ms wall); bare node ${process.versions.node} ${bareHello.cpu.toFixed(1)} ms CPU (import ${bareHello.wall.toFixed(2)} ms). ` +
        `Ratio = median of (a process's CPU time / the hello-world's just before, the same way); medians of ${ROUNDS} rounds; NODE_OPTIONS "${LAMBDA_NODE_OPTIONS}"`,
    );
    const width = Math.max(...rows.map((r) => r.name.length));
    console.log(`  ${'bundle'.padEnd(width)}  kind         size KB   Lambda init: CPU ms  ratio  wall ms   | bare node: import ms  ratio`);
    for (const r of rows) {
      console.log(
        `  ${r.name.padEnd(width)}  ${r.kind.padEnd(11)}  ${r.kb.toFixed(1).padStart(7)}  ${r.lambda.cpu.toFixed(1).padStart(19)}  ${r.lambda.ratio.toFixed(2).padStart(5)}  ${r.lambda.wall.toFixed(0).padStart(7)}   | ` +
          `${r.bare.wall.toFixed(1).padStart(20)}  ${r.bare.ratio.toFixed(2).padStart(5)}`,
      );
    }
    for (const r of rows.filter((row) => row.kind !== 'floor')) {
      report(
        'cold-start',
        `${r.name} (${r.kind}, ${r.kb.toFixed(1)} KB): CPU time vs a hello-world, Lambda init / bare node`,
        `${r.lambda.ratio.toFixed(2)}× (${r.lambda.cpu.toFixed(0)} ms) / ${r.bare.ratio.toFixed(2)}× (import ${r.bare.wall.toFixed(1)} ms)`,
      );
    }
    const routes = rows.filter((r) => r.kind === 'route group');
    const tls = rows.find((r) => r.name === 'tls')!;
    const floor = rows.find((r) => r.name === 'db-floor')!;
    const sdk = rows.find((r) => r.name === 'sdk-client')!;
    report(
      'cold-start',
      `hello-world: Lambda init (Node ${RUNTIME_NODE_VERSION} + aws-lambda-ric ${RUNTIME_CLIENT_VERSION}) / bare node ${process.versions.node}, CPU ms`,
      `${lambdaHello.cpu.toFixed(1)} / ${bareHello.cpu.toFixed(1)}`,
    );
    report(
      'cold-start',
      `floors, Lambda init / bare node: node:https loaded, nothing else (${tls.kb.toFixed(1)} KB); one item read through shared/db/client.ts as every route group reads (${floor.kb.toFixed(1)} KB); the AWS SDK's DynamoDB document client alone (${sdk.kb.toFixed(1)} KB)`,
      `${tls.lambda.ratio.toFixed(2)}× / ${tls.bare.ratio.toFixed(2)}×; ${floor.lambda.ratio.toFixed(2)}× / ${floor.bare.ratio.toFixed(2)}×; ${sdk.lambda.ratio.toFixed(2)}× / ${sdk.bare.ratio.toFixed(2)}×`,
    );
    const worst = (way: Way) => Math.max(...routes.map((r) => r[way].ratio));
    const best = (way: Way) => Math.min(...routes.map((r) => r[way].ratio));
    const met = routes.filter((r) => r.lambda.ratio <= 1.6).length;
    report(
      'cold-start',
      'route groups, worst / best ratio: Lambda init (target ≤ 1.6×); bare node',
      `${worst('lambda').toFixed(2)}× / ${best('lambda').toFixed(2)}× (${met} of ${routes.length} within 1.6×); ${worst('bare').toFixed(2)}× / ${best('bare').toFixed(2)}×`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
