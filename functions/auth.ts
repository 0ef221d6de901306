// auth route group: health check, OpenAPI document, login/activate/logout/me,
// and the /api catch-all (404 problem+json, CORS preflight).
import { config } from '../shared/config.js';
import { NotFound } from '../shared/http/errors.js';
import { createGroupHandler, notImplemented } from '../shared/http/group-handler.js';
import { buildOpenApi } from '../shared/http/openapi.js';
import { ROUTE_GROUPS } from '../shared/routes/all-groups.js';
import { authGroup } from '../shared/routes/auth.js';

let openApiDocument: Record<string, unknown> | undefined;

export const handler = createGroupHandler(authGroup, {
  healthCheck: async () => ({ status: 'ok', service: config().SERVICE_NAME }),
  openapi: async () => (openApiDocument ??= buildOpenApi(ROUTE_GROUPS, '0.1.0')),
  login: notImplemented('issue #3, accounts and access'),
  activate: notImplemented('issue #3, accounts and access'),
  logout: notImplemented('issue #3, accounts and access'),
  me: notImplemented('issue #3, accounts and access'),
  fallback: async () => {
    throw new NotFound('No API route matches this path.');
  },
});
