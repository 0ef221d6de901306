// The run_sql tool as a Lambda bundle carries it, for the bundle test
// (sql.test.ts) and the bench (test/bench/chat-sql.ts): shared/chat/sql.ts as
// `index.mjs`, the worker as `sql-worker.mjs` and SQLite's WebAssembly beside
// them, built with the project's bundle options (infra/bundling.ts).
import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lambdaBuildOptions } from '../../infra/bundling.js';
import { SQL_RUNTIME_FILES } from '../../shared/chat/sql.js';

/** Writes the bundle into `out` (an existing directory); its entry is `index.mjs`. */
export async function bundleSql(out: string): Promise<void> {
  const source = (file: string) => fileURLToPath(new URL(`../../shared/chat/${file}`, import.meta.url));
  // The chat bundle, plus the worker as a second entry.
  await build({
    entryPoints: [
      { in: source('sql.ts'), out: 'index' },
      { in: source('sql-worker.ts'), out: 'sql-worker' },
    ],
    outdir: out,
    outExtension: { '.js': '.mjs' },
    ...lambdaBuildOptions(),
    logLevel: 'silent',
  });
  copyFileSync(createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm'), join(out, SQL_RUNTIME_FILES.wasm));
}
