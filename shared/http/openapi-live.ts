// The OpenAPI document built from the route table: what the build writes beside the
// auth bundle, and what openapi-document.ts answers when running from source.
import { readFileSync } from 'node:fs';
import { ROUTE_GROUPS } from '../routes/all-groups.js';
import { buildOpenApi, type OpenApiDocument } from './openapi.js';

/**
 * The document's `info.version`: the release's, as package.json says it (the API changes with the release).
 * Read from the checkout: this module runs only from source (the build, the local runtime, tests), never in a bundle.
 */
const apiVersion = (): string => (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export const liveOpenApiDocument = (): OpenApiDocument => buildOpenApi(ROUTE_GROUPS, apiVersion());
