// auth route group: health check, OpenAPI document, login/activate/logout/me,
// and the /api catch-all (404 problem+json, CORS preflight).
import { callerOf, activate, login, logout, userInfo } from '../shared/auth/sign-in.js';
import { coreSettings } from '../shared/config/core.js';
import { NotFound } from '../shared/http/errors.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { buildOpenApi, type OpenApiDocument } from '../shared/http/openapi.js';
import { ROUTE_GROUPS } from '../shared/routes/all-groups.js';
import { authGroup } from '../shared/routes/auth.js';

let openApiDocument: OpenApiDocument | undefined;

export const handler = createGroupHandler(authGroup, {
  healthCheck: async () => ({ status: 'ok', service: coreSettings().serviceName }),
  openapi: async () => (openApiDocument ??= buildOpenApi(ROUTE_GROUPS, '0.1.0')),
  login: async (req) => login(req.body.username, req.body.password, callerOf(req)),
  activate: async (req) => activate(req.body.token, req.body.password, callerOf(req)),
  logout: async (req) => logout(req.principal, req.token!, req.headers['x-session-duration'], callerOf(req)),
  me: async (req) => userInfo(req.principal),
  fallback: async () => {
    throw new NotFound('No API route matches this path.');
  },
});
