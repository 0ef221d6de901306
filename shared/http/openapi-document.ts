// The document GET /api/openapi.json answers. A Lambda bundle reads the one the build
// wrote beside it (infra/bundling.ts, emitRuntimeAssets), so the auth group, whose cold
// start is every sign-in's, loads neither the other groups' route declarations nor
// zod's JSON-schema conversion (issue 21 §4). Running from source (the local runtime,
// tests) it is built from the route table on first use, as the build builds it.
// fs.promises, not node:fs/promises: Node loads it when first read, so the group's cold start does not (≈ 5% of it).
import { existsSync, promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenApiDocument } from './openapi.js';

/** The API's version in the document's `info`. */
export const API_VERSION = '0.1.0';
/** The file beside a bundle. */
export const OPENAPI_FILE = 'openapi.json';

const built = join(dirname(fileURLToPath(import.meta.url)), OPENAPI_FILE);
let document: Promise<OpenApiDocument> | undefined;

/** The OpenAPI 3.1 document of every route, read (or built) once per process. */
export function openApiDocument(): Promise<OpenApiDocument> {
  document ??= load().catch((error: unknown) => {
    document = undefined;
    throw error;
  });
  return document;
}

async function load(): Promise<OpenApiDocument> {
  if (existsSync(built)) return JSON.parse(await fs.readFile(built, 'utf8')) as OpenApiDocument;
  // A specifier esbuild cannot see, so bundles never carry the builder or every group's
  // declarations; they always have the file above.
  const live = './openapi-live.js';
  const { liveOpenApiDocument } = (await import(live)) as typeof import('./openapi-live.js');
  return liveOpenApiDocument();
}
