// Every function's bundle as the build makes it, built once for both checks here:
// - memory floors: every Lambda whose bundle carries the fleet view or the run_sql tool is given the
//   memory they were measured to need at 10,000 clusters (shared/function-memory.ts), found from what
//   each bundle holds, so a group that starts computing the view, or a worker that starts running the
//   tools, fails here rather than running out of memory on AWS;
// - the eager join (infra/eager-join.ts): each cold start is one file, and every on-demand chunk beside
//   it links against that file (each import it names is exported there), in a fresh node that imports
//   them all, as a request that loads a chunk would.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE, buildFunctionBundles, bundleInputs, coldStartFiles, functionNames, REPO_ROOT } from '../../infra/bundling.js';
import { functionSize } from '../../infra/function-sizes.js';
import { FLEET_VIEW_MEMORY_MB, RUN_SQL_MEMORY_MB } from '../../shared/function-memory.js';

let inputsOf: Map<string, string[]>;
let outdir: string;
let metafile: Metafile;

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'fleet-all-bundles-'));
  metafile = await buildFunctionBundles(functionNames(), outdir);
  inputsOf = new Map([...bundleInputs(metafile)].map(([entry, inputs]) => [entry.split('/').at(-2)!, inputs]));
}, 120_000);

afterAll(() => rm(outdir, { recursive: true, force: true }));

describe('memory floors (issue 21)', () => {
  const floors = [
    { code: 'run_sql', module: 'shared/chat/sql.ts', memoryMb: RUN_SQL_MEMORY_MB },
    { code: 'the fleet view', module: 'shared/scoring/fleet-view.ts', memoryMb: FLEET_VIEW_MEMORY_MB },
  ];

  it('every function was built', () => {
    expect([...inputsOf.keys()].sort()).toEqual([...functionNames()].sort());
  });

  for (const floor of floors) {
    it(`every function that carries ${floor.code} has at least ${floor.memoryMb} MB`, () => {
      const carriers = [...inputsOf].filter(([, inputs]) => inputs.includes(floor.module));
      expect(carriers.length).toBeGreaterThan(0);
      for (const [name] of carriers) expect(functionSize(name)?.memoryMb, name).toBeGreaterThanOrEqual(floor.memoryMb);
    });
  }
});

describe('the eager join (issue 21 §4)', () => {
  it("loads every function's cold start from one file, and links each of its on-demand chunks against it", async () => {
    const files = functionNames().flatMap((name) => {
      const entry = relative(REPO_ROOT, join(outdir, name, BUNDLE.outputFile));
      expect(coldStartFiles(metafile, entry).eager, name).toEqual([entry]);
      const chunks = readdirSync(join(outdir, name)).filter((file) => file.startsWith('chunk-') && file.endsWith('.mjs'));
      return [BUNDLE.outputFile, ...chunks].map((file) => pathToFileURL(join(outdir, name, file)).href);
    });
    // The chunks of the functions that split (settings, chat, the workers, …) are among them.
    expect(files.filter((file) => file.includes('/chunk-')).length).toBeGreaterThan(20);
    const script = `for (const file of ${JSON.stringify(files)}) await import(file); console.log('linked', ${files.length});`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', LOG_LEVEL: 'silent' },
    });
    expect(stdout.trim()).toBe(`linked ${files.length}`);
  }, 120_000);
});
