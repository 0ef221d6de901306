// A script bundled as a Lambda is (minified, the Lambdas' aliases, the shipped
// rules and the files its code needs at run time beside it) and run in a fresh `node` with the NODE_OPTIONS of the Lambda it
// stands for: a new container's work, measured as deployed. The child prints one JSON line last.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import {
  BUNDLE_ALIASES,
  LAMBDA_NODE_OPTIONS,
  REPO_ROOT,
  copyRuleDefaults,
  emitRuntimeAssets,
  lambdaBuildOptions,
  nodeOptionsOf,
} from '../../infra/bundling.js';

const exec = promisify(execFile);

/**
 * Bundles `source` (TypeScript, imports relative to the repository root); answers a runner of
 * fresh processes, on this Node or on `node` given (the Lambda runtime's, lambda-runtime.ts), with
 * the NODE_OPTIONS of the function named `as` (every Lambda's when none is).
 */
export async function lambdaChild<T>(
  name: string,
  source: string,
  { as }: { as?: string } = {},
): Promise<(env?: Record<string, string>, node?: string) => Promise<T>> {
  const dir = await mkdtemp(join(tmpdir(), `fleet-${name}-`));
  const file = join(dir, name, 'index.mjs');
  const { metafile } = await build({
    stdin: { contents: source, resolveDir: REPO_ROOT, sourcefile: `${name}-child.ts`, loader: 'ts' },
    outfile: file,
    ...lambdaBuildOptions(),
    alias: { ...BUNDLE_ALIASES },
    logLevel: 'error',
    absWorkingDir: REPO_ROOT,
    metafile: true,
  });
  copyRuleDefaults(dir, [name]);
  emitRuntimeAssets(metafile);
  return async (env = {}, node = process.execPath) => {
    const { stdout } = await exec(node, [file], {
      env: { ...process.env, NODE_OPTIONS: as ? nodeOptionsOf(as) : LAMBDA_NODE_OPTIONS, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as T;
  };
}
