// Every function's bundle as the build makes it (infra/eager-join.ts): its cold start is one file,
// and every on-demand chunk beside it links against that file (each import it names is exported
// there), in a fresh node that imports them all, as a request that loads a chunk would.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUNDLE, buildFunctionBundles, coldStartFiles, functionNames, REPO_ROOT } from '../../infra/bundling.js';

let outdir: string;
let metafile: Metafile;

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'fleet-eager-join-'));
  metafile = await buildFunctionBundles(functionNames(), outdir);
}, 120_000);

afterAll(() => rm(outdir, { recursive: true, force: true }));

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
