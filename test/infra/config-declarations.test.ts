// The configuration each function declares (shared/routes, shared/workers.ts)
// is what its bundle reads: esbuild's metafile lists the shared/config/<concern>.ts
// modules each Lambda carries, and that set must equal the declared concerns
// (plus the implied ones). A group that starts reading a concern without
// declaring it would get no variables or secret from the stack; this fails first.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptions, functionNames } from '../../infra/bundling.js';
import { functionConcerns } from '../../infra/local/functions.js';
import { CONCERNS, type ConfigConcern } from '../../shared/config/concerns.js';

const metafiles = new Map<string, Metafile>();

beforeAll(async () => {
  const outdir = await mkdtemp(join(tmpdir(), 'fleet-config-'));
  for (const name of functionNames())
    metafiles.set(name, (await build({ ...esbuildOptions(name, outdir), write: false, metafile: true, minify: false })).metafile);
}, 120_000);

/** The concerns whose module is in the function's bundle: its entry or a chunk it loads. */
function bundledConcerns(name: string): ConfigConcern[] {
  const metafile = metafiles.get(name);
  if (!metafile) throw new Error(`no bundle for ${name}`);
  const paths = Object.values(metafile.outputs).flatMap((output) => Object.entries(output.inputs).filter(([, input]) => input.bytesInOutput > 0));
  return [...new Set(paths.map(([path]) => /shared\/config\/([a-z-]+)\.ts$/.exec(path)?.[1]))].filter(
    (concern): concern is ConfigConcern => concern !== undefined && concern in CONCERNS,
  );
}

const functions = functionConcerns();

describe('configuration declarations', () => {
  it('covers every function', () => {
    expect(functions.map((f) => f.name).sort()).toEqual(functionNames().sort());
  });

  // worker-functions comes with an invoke grant; the agent worker carries the invoking code of agents/tasks.ts
  // (shared with recompute) without ever calling it, so that one concern may be bundled undeclared.
  it.each(functions)('$name declares exactly the concerns its bundle reads', ({ name, concerns }) => {
    const bundled = bundledConcerns(name).filter((c) => c !== 'worker-functions' || concerns.includes(c));
    expect(bundled.sort()).toEqual([...concerns].sort());
  });

  it('names each concern after its module, so the bundle check can find it', () => {
    for (const [name, settings] of Object.entries(CONCERNS)) expect(settings.concern).toBe(name);
  });
});
