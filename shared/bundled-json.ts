// A JSON value the build writes beside each Lambda bundle that uses it (infra/bundling.ts,
// emitRuntimeAssets: the OpenAPI document, the chat tools' JSON Schemas), so no bundle
// carries the code that makes it. Running from source (the local runtime, tests) there is
// no such file, and `live` makes the value on first use, as the build makes it.
// fs.promises, not node:fs/promises: Node loads it when first read, so a cold start does not (≈ 5% of it).
import { existsSync, promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The value of `file` beside the bundle, or `live()`'s: read (or made) once per process; a failure is retried by the next call. */
export function bundledJson<T>(file: string, live: () => Promise<T>): () => Promise<T> {
  // This module is in the bundle's folder (an entry or chunk beside the file), or in shared/ from source.
  const built = join(dirname(fileURLToPath(import.meta.url)), file);
  let value: Promise<T> | undefined;
  const load = async (): Promise<T> => (existsSync(built) ? (JSON.parse(await fs.readFile(built, 'utf8')) as T) : live());
  return () => {
    value ??= load().catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}
