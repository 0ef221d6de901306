// Every Lambda whose bundle carries the fleet view or the run_sql tool is given the memory they
// were measured to need at 10,000 clusters (shared/function-memory.ts): found from what each
// function's bundle holds as the build makes it, so a group that starts computing the view, or a
// worker that starts running the tools, fails here rather than running out of memory on AWS.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctionBundles, bundleInputs, functionNames } from '../../infra/bundling.js';
import { functionSize } from '../../infra/function-sizes.js';
import { FLEET_VIEW_MEMORY_MB, RUN_SQL_MEMORY_MB } from '../../shared/function-memory.js';

let inputsOf: Map<string, string[]>;
let outdir: string;

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'fleet-memory-floors-'));
  const metafile = await buildFunctionBundles(functionNames(), outdir);
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
