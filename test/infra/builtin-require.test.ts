// The bundler's built-in plugin (infra/bundling.ts, builtinRequirePlugin): a built-in imported
// by name, by default, as a namespace or with import() reads Node's own module, through the
// prototype (nothing copied per importer), while no static ES import of a built-in is left in the output.
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { builtinRequirePlugin, lambdaBuildOptions } from '../../infra/bundling.js';

const SOURCE = `
import { request } from 'node:http';
import https from 'https';
import * as zlib from 'node:zlib';
import EventEmitter from 'node:events';
import assert from 'node:assert';
import { readFile } from 'node:fs/promises';
export async function probe() {
  const lazy = await import('node:http');
  const lazyHttps = await import('node:https');
  return {
    named: typeof request === 'function',
    byDefault: typeof https.request === 'function',
    namespace: typeof zlib.brotliCompressSync === 'function',
    subpath: typeof readFile === 'function',
    dynamicNamed: lazy.request === request,
    // Each importer reads the module through its prototype: no importer copies its exports one by one.
    // A module that is a function stays one.
    callable: new EventEmitter() instanceof EventEmitter && (assert(true), true),
    throughPrototype: !Object.hasOwn(zlib, 'brotliCompressSync') && !Object.hasOwn(https, 'request') && https.request === lazyHttps.request,
  };
}
`;

describe('built-ins required, not imported', () => {
  it('keeps every way of importing a built-in working, with no static ES import of one left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-builtins-'));
    try {
      await writeFile(join(dir, 'entry.ts'), SOURCE);
      await build({
        ...lambdaBuildOptions(),
        entryPoints: [join(dir, 'entry.ts')],
        outdir: join(dir, 'out'),
        outExtension: { '.js': '.mjs' },
        splitting: true,
        plugins: [builtinRequirePlugin()],
        logLevel: 'error',
      });
      const files = await readdir(join(dir, 'out'));
      for (const file of files)
        expect(await readFile(join(dir, 'out', file), 'utf8')).not.toMatch(/(from|import)\s*["'](node:)?(http|https|zlib|fs\/promises)["']/);
      const { probe } = (await import(pathToFileURL(join(dir, 'out', 'entry.mjs')).href)) as { probe: () => Promise<Record<string, boolean>> };
      expect(await probe()).toEqual({
        named: true,
        byDefault: true,
        namespace: true,
        subpath: true,
        dynamicNamed: true,
        callable: true,
        throughPrototype: true,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
