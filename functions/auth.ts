// auth route group: health check, OpenAPI document, login/activate/password/logout/renew/me,
// and the /api catch-all (404 problem+json, CORS preflight).
import { callerOf, activate, changePassword, login, logout, renew, userInfo } from '../shared/auth/sign-in.js';
import { coreSettings } from '../shared/config/core.js';
import { NotFound } from '../shared/http/errors.js';
import { Reply } from '../shared/http/route.js';
import { createGroupHandler } from '../shared/http/group-handler.js';
import { openApiDocument } from '../shared/http/openapi-document.js';
import { authGroup } from '../shared/routes/auth.js';

export const handler = createGroupHandler(authGroup, {
  healthCheck: async () => ({ status: 'ok', service: coreSettings().serviceName }),
  openapi: openApiDocument,
  login: async (req) => login(req.body.username, req.body.password, await callerOf(req)),
  activate: async (req) => activate(req.body.token, req.body.password, await callerOf(req)),
  changePassword: async (req) => changePassword(req.principal, req.body.current_password, req.body.new_password, await callerOf(req)),
  // The watch pages' answers the browser kept to revalidate (private, no-cache) go with the session: on a shared
  // workstation the next person finds none of them on disk (Clear-Site-Data, W3C; the console is this origin).
  logout: async (req) =>
    new Reply(200, await logout(req.principal, req.token!, req.headers['x-session-duration'], await callerOf(req)), { 'Clear-Site-Data': '"cache"' }),
  renew: async (req) => renew(req.principal, req.token!),
  me: async (req) => userInfo(req.principal),
  fallback: async () => {
    throw new NotFound('No API route matches this path.');
  },
});
