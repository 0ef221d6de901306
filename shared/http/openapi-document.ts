// The document GET /api/openapi.json answers. A Lambda bundle reads the one the build wrote
// beside it (shared/bundled-json.ts), so the auth group, whose cold start is every sign-in's,
// loads neither the other groups' route declarations nor zod's JSON-schema conversion
// (issue 21 §4). Running from source (the local runtime, tests) it is built from the route
// table on first use, as the build builds it.
import { bundledJson } from '../bundled-json.js';
import type { OpenApiDocument } from './openapi.js';

/** The file beside a bundle. */
export const OPENAPI_FILE = 'openapi.json';

/** The OpenAPI 3.1 document of every route, read (or built) once per process. */
export const openApiDocument = bundledJson<OpenApiDocument>(OPENAPI_FILE, async () => {
  // A specifier esbuild cannot see, so bundles never carry the builder or every group's declarations.
  const live = './openapi-live.js';
  const { liveOpenApiDocument } = (await import(live)) as typeof import('./openapi-live.js');
  return liveOpenApiDocument();
});
