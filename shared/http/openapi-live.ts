// The OpenAPI document built from the route table: what the build writes beside the
// auth bundle, and what openapi-document.ts answers when running from source.
import { ROUTE_GROUPS } from '../routes/all-groups.js';
import { buildOpenApi, type OpenApiDocument } from './openapi.js';
import { API_VERSION } from './openapi-document.js';

export const liveOpenApiDocument = (): OpenApiDocument => buildOpenApi(ROUTE_GROUPS, API_VERSION);
